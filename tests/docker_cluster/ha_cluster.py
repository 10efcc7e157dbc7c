"""The ResourceManager HA variant of the e2e mini-cluster (docker/DOCKER.md, "ResourceManager HA"):
a ZooKeeper server, two ResourceManagers (rm1, rm2) with ZKRMStateStore, work-preserving recovery
and embedded automatic failover, the three NodeManagers, and a client container. Every port is
picked free on 127.0.0.1.

Both RMs read one yarn-site.xml: a one-shot `publish-conf` container writes it, with the queue file,
into the store on the shared volume that FileSystemBasedConfigurationProvider reads; each RM
container only names its RM id. Clients run in a container of their own, which outlives any RM.
"""
from __future__ import annotations

import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import requests
from testcontainers.core.container import DockerContainer

from tests.docker_cluster.cluster import HADOOP_IMAGE, RM_IMAGE, SHAPES, Cluster, NodeShape
from tests.ports import free_ports

RM_IDS = ("rm1", "rm2")
# The per-RM-id ports of docker/hadoop/render_conf.py (NAME_<RMID>, e.g. RM_WEB_PORT_RM2).
RM_PORTS = ("RM_RPC_PORT", "RM_SCHEDULER_PORT", "RM_TRACKER_PORT", "RM_ADMIN_PORT", "RM_WEB_PORT",
            "YARN_DRF_BRIDGE_PORT", "YARN_DRF_STATUS_PORT")


def zk_ruok(port: int) -> str:
    """ZooKeeper's answer to its `ruok` four-letter word on 127.0.0.1:port (`imok` once it serves
    clients), "" when it does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"ruok")
            return s.recv(16).decode(errors="replace")
    except OSError:
        return ""


def rm_port(env: dict[str, str], name: str, rm_id: str) -> int:
    return int(env[f"{name}_{rm_id.upper()}"])


@dataclass
class HaCluster(Cluster):
    zk: DockerContainer | None = None
    rms: dict[str, DockerContainer] = field(default_factory=dict)
    client_box: DockerContainer | None = None
    # RMs whose JVM a test killed on purpose: their containers may be down.
    down: set[str] = field(default_factory=set)
    active_id: str | None = None

    @classmethod
    def create(cls, scheduler: str, queues_file: Path, shapes: tuple[NodeShape, ...] = SHAPES,
               auto_failover: bool = True) -> "HaCluster":
        ports = free_ports(1 + len(RM_IDS) * len(RM_PORTS) + len(cls.NM_PORTS) * len(shapes))
        env = {
            "RM_HOST": "127.0.0.1",
            "RM_HA_IDS": ",".join(RM_IDS),
            "RM_HA_AUTO_FAILOVER": str(auto_failover).lower(),
            "ZK_PORT": str(ports[0]),
            "ZK_ADDRESS": f"127.0.0.1:{ports[0]}",
        }
        rest = iter(ports[1:1 + len(RM_IDS) * len(RM_PORTS)])
        for rm_id in RM_IDS:
            for name in RM_PORTS:
                env[f"{name}_{rm_id.upper()}"] = str(next(rest))
        cluster = cls(scheduler=scheduler, queues_file=queues_file, env=env,
                      web_port=rm_port(env, "RM_WEB_PORT", RM_IDS[0]),
                      volume=f"yarn-drf-ha-{uuid.uuid4().hex[:8]}", shapes=shapes)
        cluster._nm_ports = ports[1 + len(RM_IDS) * len(RM_PORTS):]
        return cluster

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self, timeout_s: float = 240) -> None:
        self.client.volumes.create(self.volume, labels={"yarn-drf": "1"})
        self._publish_conf()
        self.zk = self._named("zookeeper", HADOOP_IMAGE, "zookeeper", self.env)
        self.zk.start()
        self._wait_zookeeper(timeout_s)
        for rm_id in RM_IDS:
            rm = self._named(rm_id, RM_IMAGE, "resourcemanager", {
                **self.env, "YARN_SCHEDULER_CLASS": self.scheduler, "RM_HA_ID": rm_id})
            rm.start()
            self.rms[rm_id] = rm
        self.wait_active(timeout_s)
        self._start_nodemanagers()
        self.client_box = self._named("client", HADOOP_IMAGE, "sleep infinity", self.env)
        self.client_box.start()
        self.wait_for_nodes(len(self.shapes), timeout_s)

    def _named(self, role: str, image: str, command: str, env: dict[str, str]) -> DockerContainer:
        """A container an operator reaches by name: VOLUME-rm1, VOLUME-client, ..."""
        return self._container(image, command, env).with_name(f"{self.volume}-{role}")

    def _publish_conf(self) -> None:
        """The one configuration both RMs read, written into the store on the shared volume."""
        try:
            self.client.containers.run(
                RM_IMAGE, "publish-conf", remove=True, network_mode="host", labels={"yarn-drf": "1"},
                environment={**self.env, "YARN_SCHEDULER_CLASS": self.scheduler},
                volumes={self.volume: {"bind": "/shared", "mode": "rw"},
                         str(self.queues_file): {"bind": "/etc/yarn-drf/queues.yaml", "mode": "ro"}})
        except docker.errors.ContainerError as err:
            raise AssertionError(f"publish-conf failed: {err.stderr!r}") from err

    def _wait_zookeeper(self, timeout_s: float) -> None:
        """ZooKeeper answers its `ruok` four-letter word with `imok` once it serves clients."""
        self.wait_for(lambda: self.zk_ruok() == "imok", timeout_s, "ZooKeeper to serve clients",
                      progress=self.log_ends, poll_s=0.5, describe=lambda: self.logs(self.zk))

    def zk_ruok(self) -> str:
        return zk_ruok(int(self.env["ZK_PORT"]))

    def containers(self) -> list[DockerContainer | None]:
        return [self.client_box, *self.nms.values(), *self.rms.values(), self.zk]

    def daemons(self) -> list[tuple[str, DockerContainer]]:
        """Every container but the RMs a test killed on purpose."""
        named = [("zookeeper", self.zk), ("client", self.client_box), *self.nms.items(),
                 *((i, c) for i, c in self.rms.items() if i not in self.down)]
        return [(name, c) for name, c in named if c is not None]  # None: not started yet

    # ---- which RM is active ----------------------------------------------------------------
    def ha_state(self, rm_id: str) -> str | None:
        """ACTIVE, STANDBY, ... as the RM itself reports it, or None when it does not answer."""
        url = f"http://127.0.0.1:{rm_port(self.env, 'RM_WEB_PORT', rm_id)}/ws/v1/cluster/info"
        try:
            r = requests.get(url, headers={"Accept": "application/json"}, timeout=5, allow_redirects=False)
            return r.json()["clusterInfo"]["haState"] if r.status_code == 200 else None
        except (requests.RequestException, ValueError, KeyError):
            return None

    def states(self) -> dict[str, str | None]:
        return {rm_id: self.ha_state(rm_id) for rm_id in RM_IDS}

    def find_active(self) -> str | None:
        """The one RM that reports ACTIVE (and makes it the one the REST helpers ask), or None."""
        active = [rm_id for rm_id, state in self.states().items() if state == "ACTIVE"]
        assert len(active) <= 1, f"two active ResourceManagers: {self.states()}"
        if active:
            self.active_id = active[0]
            self.rm = self.rms[self.active_id]
            self.web_port = rm_port(self.env, "RM_WEB_PORT", self.active_id)
        return active[0] if active else None

    def wait_active(self, timeout_s: float, other_than: str | None = None) -> str:
        """Waits until one RM (other_than excluded) is active, while the RMs keep logging; its id."""
        def active() -> str | None:
            found = self.find_active()
            return found if found != other_than else None

        return self.wait_for(active, timeout_s, "an active ResourceManager"
                             + (f" other than {other_than}" if other_than else ""), progress=self.log_ends,
                             poll_s=0.5)

    def rest(self, path: str) -> dict[str, Any]:
        """The active RM's REST API; after a failover, the new active one's."""
        try:
            return super().rest(path)
        except requests.ConnectionError:
            if self.find_active() is None:
                raise
            return super().rest(path)

    def status_port(self) -> int:
        return rm_port(self.env, "YARN_DRF_STATUS_PORT", self.active_id or RM_IDS[0])

    # ---- RM processes ----------------------------------------------------------------------
    def rm_exec(self, rm_id: str, cmd: list[str]) -> tuple[int, str]:
        res = self.rms[rm_id].get_wrapped_container().exec_run(cmd, demux=False)
        return res.exit_code, (res.output or b"").decode(errors="replace")

    def serve_pids(self, rm_id: str | None = None) -> list[int]:
        """Process ids of `yarn-drf serve` in an RM's container (default: the active RM's)."""
        code, out = self.rm_exec(rm_id or self.active_id, ["ps", "-eo", "pid=,args="])
        assert code == 0, out
        return [int(line.split(None, 1)[0]) for line in out.splitlines()
                if "yarn-drf serve" in line and "ps -eo" not in line]

    def rm_pid(self, rm_id: str) -> int:
        code, out = self.rm_exec(rm_id, ["ps", "-eo", "pid=,args="])
        assert code == 0, out
        pids = [int(line.split(None, 1)[0]) for line in out.splitlines()
                if "java" in line and "resourcemanager.ResourceManager" in line]
        assert len(pids) == 1, f"ResourceManager JVMs in {rm_id}: {out}"
        return pids[0]

    def kill_rm(self, rm_id: str) -> float:
        """kill -9 of the RM's JVM (its core follows by its parent-pid watch, and the container,
        whose main process it is, exits). The monotonic time of the kill."""
        pid = self.rm_pid(rm_id)
        self.down.add(rm_id)
        code, out = self.rm_exec(rm_id, ["kill", "-9", str(pid)])
        killed_at = time.monotonic()
        assert code == 0, out
        if self.active_id == rm_id:
            self.active_id = None
        return killed_at

    def restart_rm(self, rm_id: str, timeout_s: float = 180) -> None:
        """Starts a killed RM's container again; it rejoins as the standby."""
        w = self.rms[rm_id].get_wrapped_container()
        w.reload()
        if w.status == "running":
            w.wait(timeout=60)
        w.start()
        self.down.discard(rm_id)
        self.wait_for(lambda: self.ha_state(rm_id) == "STANDBY", timeout_s, f"{rm_id} back as the standby",
                      progress=self.log_ends, poll_s=0.5)

    def rm_log(self, rm_id: str, tail: int | None = None) -> str:
        try:
            raw = self.rms[rm_id].get_wrapped_container().logs(tail=tail or "all")
        except docker.errors.NotFound:
            return "<container gone>"
        return raw.decode(errors="replace")

    def explain(self, lines: int = 25) -> str:
        """What a failed wait prints: the apps and the active RM's log (Cluster.explain), the RMs'
        states, and each RM's and NodeManager's last warnings, errors and HA transitions."""
        out = [super().explain(), f"RM states: {self.states()}"]
        for name, c in [*self.rms.items(), *self.nms.items()]:
            try:
                log = c.get_wrapped_container().logs(tail=3000).decode(errors="replace")
            except docker.errors.NotFound:
                continue
            picked = [line for line in log.splitlines()
                      if " WARN " in line or " ERROR " in line or "Transitioned to" in line or "core resynchronised" in line]
            out.append(f"--- {name}: last warnings, errors and transitions\n" + "\n".join(picked[-lines:]))
        return "\n".join(out)

    def rmadmin(self, *args: str) -> tuple[int, str]:
        """`yarn rmadmin ARGS` from the client container; `--forcemanual` asks for a confirmation,
        answered yes."""
        cmd = "echo Y | yarn rmadmin " + " ".join(args)
        return self.exec(["bash", "-c", cmd])

    def client_container(self) -> DockerContainer:
        """Clients run in a container of their own: they must outlive the RM a test kills."""
        return self.client_box

    # ---- the NodeManagers' own view --------------------------------------------------------
    def nm_running_by_node(self) -> dict[str, set[str]]:
        """Containers each NodeManager itself runs (its REST API), independent of the RMs."""
        out = {}
        for name, nm in self.nms.items():
            data = requests.get(f"http://127.0.0.1:{nm.env['NM_WEB_PORT']}/ws/v1/node/containers",
                                headers={"Accept": "application/json"}, timeout=10).json()
            items = (data.get("containers") or {}).get("container") or []
            items = [items] if isinstance(items, dict) else items  # Jersey gives a lone element as an object
            out[name] = {x["id"] for x in items if x.get("state") == "RUNNING"}
        return out

    def nm_running(self) -> set[str]:
        return set().union(*self.nm_running_by_node().values())

