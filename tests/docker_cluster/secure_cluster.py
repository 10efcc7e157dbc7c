"""The Kerberos-secured variant of the mini-cluster (docker/DOCKER.md, "The Kerberos-secured
cluster"): a KDC of its own (Debian's MIT krb5kdc in the yarn-drf/kdc image) on a free port of
127.0.0.1, the ResourceManager and NodeManagers logging in from keytabs the KDC wrote, and users who
get tickets with kinit and submit as the Unix users of the image (alice in group analysts, bob in
ops). Everything else is the plain cluster's (tests/docker_cluster/cluster.py).

The NodeManagers run YARN's DefaultContainerExecutor as root: LinuxContainerExecutor's native
container-executor cannot be built here (DOCKER.md says why), and with DefaultContainerExecutor
every container runs as the NodeManager's own Unix user, who must read the jobs' private staging
files each user leaves on the shared file:/// volume (mode 700, owned by that user).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from testcontainers.core.container import DockerContainer

from tests.docker_cluster.cluster import SHAPES, Cluster, NodeShape, remove_volume, stop_containers
from tests.ports import free_ports
from tests.waits import wait_for

KDC_IMAGE = "yarn-drf/kdc:bookworm"
REALM = "YARN-DRF.TEST"
KEYTAB_DIR = "/etc/security/keytabs"
# The Unix users of the Hadoop image (docker/hadoop/Dockerfile) who are the realm's users, by uid;
# hadoop, who runs the ResourceManager, is also the cluster's admin (yarn.admin.acl).
USERS = {"hadoop": 1000, "alice": 1001, "bob": 1002}
STATUS_TOKEN_FILE = "/var/lib/hadoop/yarn-drf-status.token"


@dataclass
class SecureCluster(Cluster):
    kdc: DockerContainer | None = None
    kdc_port: int = 0
    keytabs: str = ""
    passwords: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, scheduler: str, queues_file: Path, shapes: tuple[NodeShape, ...] = SHAPES) -> "SecureCluster":
        cluster = super().create(scheduler, queues_file, shapes)
        cluster.kdc_port = free_ports(1)[0]
        cluster.keytabs = f"{cluster.volume}-keytabs"
        cluster.passwords = {user: secrets.token_urlsafe(12) for user in USERS}
        cluster.env.update({"KRB5_REALM": REALM, "KDC_PORT": str(cluster.kdc_port), "KEYTAB_DIR": KEYTAB_DIR})
        return cluster

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self, timeout_s: float = 180) -> None:
        self.client.volumes.create(self.keytabs, labels={"yarn-drf": "1"})
        self.kdc = (DockerContainer(KDC_IMAGE)
                    .with_kwargs(network_mode="host", labels={"yarn-drf": "1"})
                    .with_volume_mapping(self.keytabs, "/keytabs", "rw"))
        for key, value in {
            "KRB5_REALM": REALM, "KDC_PORT": str(self.kdc_port),
            # The RM runs as hadoop and reads its keytab; the NodeManagers run as root.
            "KDC_SERVICES": f"rm/localhost:{USERS['hadoop']} nm/localhost:0",
            "KDC_USERS": " ".join(f"{u}:{p}:{USERS[u]}" for u, p in self.passwords.items()),
        }.items():
            self.kdc.with_env(key, value)
        self.kdc.start()
        self._wait_kdc(timeout_s)
        super().start(timeout_s)
        self.kinit("hadoop")  # for the admin's commands the plain cluster runs as hadoop (kill_all_apps)

    def _wait_kdc(self, timeout_s: float) -> None:
        """Until the KDC says it is ready, while it keeps logging; an exited KDC fails at once."""
        wrapped = self.kdc.get_wrapped_container()

        def running() -> None:
            wrapped.reload()
            if wrapped.status not in ("running", "created"):
                raise AssertionError(f"KDC {wrapped.status}:\n{self.logs(self.kdc)}")

        wait_for(lambda: b"kdc: ready" in wrapped.logs(), "the KDC to be ready", budget_s=timeout_s,
                 progress=lambda: len(wrapped.logs()), alive=running, describe=lambda: self.logs(self.kdc))

    def _container(self, image: str, command: str, env: dict[str, str], queues: bool = False) -> DockerContainer:
        extra = {"YARN_DRF_STATUS_TOKEN_FILE": STATUS_TOKEN_FILE} if command == "resourcemanager" else {}
        c = super()._container(image, command, {**env, **extra}, queues)
        c.with_volume_mapping(self.keytabs, KEYTAB_DIR, "ro")
        if command == "nodemanager":
            # DefaultContainerExecutor as root: see the module's docstring.
            c.with_kwargs(network_mode="host", labels={"yarn-drf": "1"}, user="root")
        return c

    def stop(self) -> None:
        super().stop()
        stop_containers([self.kdc])
        remove_volume(self.client, self.keytabs)

    # ---- clients: Unix users of the RM container with their own Kerberos tickets ------------
    def kinit(self, os_user: str, principal: str | None = None) -> None:
        """A ticket for `principal` (default: the user's own) in os_user's credential cache, got
        with the principal's password as a user types it."""
        principal = principal or os_user
        code, out = self.exec_as(os_user, ["bash", "-c", f"kinit {principal} >/dev/null"],
                                 stdin=self.passwords[principal])
        assert code == 0, f"kinit {principal} as {os_user} failed:\n{out}"

    def kinit_from_keytab(self, user: str) -> None:
        """A ticket for the user from the keytab the KDC wrote for it, as a script gets one."""
        code, out = self.exec_as(user, ["kinit", "-kt", f"{KEYTAB_DIR}/{user}.keytab", user])
        assert code == 0, f"kinit -kt as {user} failed:\n{out}"

    def kdestroy(self, os_user: str) -> None:
        self.exec_as(os_user, ["kdestroy", "-q"])

    def exec_as(self, os_user: str, cmd: list[str], stdin: str | None = None,
                detach: bool = False) -> tuple[int, str]:
        """cmd as a Unix user of the RM container, in its home, with its own ticket cache (the
        default, /tmp/krb5cc_UID, as kinit and Java both find it)."""
        if stdin is not None:
            cmd = ["bash", "-c", 'printf "%s\\n" "$STDIN" | "$@"', "-", *cmd]
        res = self.rm.get_wrapped_container().exec_run(
            cmd, user=os_user, workdir=f"/shared/home/{os_user}", detach=detach,
            environment={"STDIN": stdin} if stdin is not None else None)
        if detach:
            return 0, ""
        return res.exit_code, (res.output or b"").decode(errors="replace")

    def read_status_token(self) -> str:
        code, out = self.exec(["cat", STATUS_TOKEN_FILE])
        assert code == 0, out
        return out.strip()
