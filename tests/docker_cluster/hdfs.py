"""HDFS on the Docker cluster (docker/DOCKER.md, "HDFS"): a NameNode and one DataNode per
NodeManager host, for tests and benchmarks of data locality.

Every container shares the host's network, so "a host" is a name with a loopback address of its
own (127.0.1.N), given to every container of the cluster (`docker --add-host`): a NodeManager
bound to it gets that name as its YARN node name (Hadoop names a node by the canonical name of the
address it binds), its DataNode reports the same name in block locations, and Hadoop's rack table
(CLUSTER_HOSTS, by name and address) puts the hosts in two racks or more. The NameNode and every
other server stay on 127.0.0.1.
"""
from __future__ import annotations

import json
import socket
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import docker
import requests
from testcontainers.core.container import DockerContainer

from tests.docker_cluster.cluster import HADOOP_IMAGE
from tests.ports import free_ports
from tests.waits import wait_for


@dataclass(frozen=True)
class Host:
    """A NodeManager's host: its name (YARN's node name, the DataNode's host name), loopback
    address and rack."""
    name: str
    address: str
    rack: str


def hosts_for(names: list[str]) -> tuple[Host, ...]:
    """One host per NodeManager: 127.0.1.1, 127.0.1.2, ...; the first half (rounded up) in
    /rack-a, the rest in /rack-b (two racks from two hosts on)."""
    first = (len(names) + 1) // 2
    return tuple(Host(name, f"127.0.1.{i + 1}", "/rack-a" if i < first else "/rack-b")
                 for i, name in enumerate(names))


@dataclass
class Hdfs:
    hosts: tuple[Host, ...]
    ports: list[int]  # NameNode RPC, NameNode HTTP, then DataNode data, HTTP, IPC per host
    replication: int = 1
    namenode: DockerContainer | None = None
    datanodes: dict[str, DockerContainer] = field(default_factory=dict)
    label: str = field(default_factory=lambda: f"yarn-drf-hdfs-{uuid.uuid4().hex[:8]}")

    @classmethod
    def create(cls, host_names: list[str], replication: int = 1) -> "Hdfs":
        return cls(hosts_for(host_names), free_ports(2 + 3 * len(host_names)), replication)

    # ---- what every container of the cluster gets ------------------------------------------------
    def env(self) -> dict[str, str]:
        """The environment of every container (render_conf.py): the NameNode, the racks, the
        replication of files written without one."""
        return {
            "HDFS_NAMENODE": f"127.0.0.1:{self.ports[0]}",
            "NN_HTTP_PORT": str(self.ports[1]),
            "CLUSTER_HOSTS": ",".join(f"{h.name}={h.rack}" for h in self.hosts),
            "HDFS_REPLICATION": str(self.replication),
        }

    def extra_hosts(self) -> dict[str, str]:
        """docker's --add-host entries: every host's name and address, and the machine's own name
        (a host-networked container has it, but not its /etc/hosts line, and HDFS's web servers
        look it up when they start)."""
        return {socket.gethostname(): "127.0.0.1", **{h.name: h.address for h in self.hosts}}

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self, timeout_s: float = 180) -> None:
        self.namenode = self._container("namenode", {})
        self.namenode.start()
        for i, h in enumerate(self.hosts):
            data, http, ipc = self.ports[2 + 3 * i: 5 + 3 * i]
            dn = self._container("datanode", {"NM_HOST": h.name, "DN_PORT": str(data),
                                              "DN_HTTP_PORT": str(http), "DN_IPC_PORT": str(ipc)})
            dn.start()
            self.datanodes[h.name] = dn
        self.wait_live(timeout_s)

    def _container(self, role: str, env: dict[str, str]) -> DockerContainer:
        c = DockerContainer(HADOOP_IMAGE).with_command(role).with_kwargs(
            network_mode="host", labels={"yarn-drf": "1", "yarn-drf.hdfs": self.label},
            extra_hosts=self.extra_hosts())
        for k, v in {**self.env(), **env}.items():
            c.with_env(k, v)
        return c

    def stop(self) -> None:
        for c in [*self.datanodes.values(), self.namenode]:
            if c is not None:
                try:
                    c.stop()
                except docker.errors.NotFound:
                    pass

    def assert_alive(self) -> None:
        for name, c in [("namenode", self.namenode), *self.datanodes.items()]:
            w = c.get_wrapped_container()
            w.reload()
            if w.status not in ("running", "created"):
                log = w.logs(tail=60).decode(errors="replace")
                raise AssertionError(f"HDFS {name} container is {w.status}; last log lines:\n{log}")

    def wait_live(self, timeout_s: float) -> None:
        """Until every DataNode is live in the NameNode and it has left safe mode; each change in
        either gives it `timeout_s` more (within LIMIT_FACTOR times it)."""
        state: dict[str, Any] = {}

        def live() -> bool:
            state.update(self.jmx("Hadoop:service=NameNode,name=NameNodeInfo"))
            return len(json.loads(state.get("LiveNodes") or "{}")) == len(self.hosts) and not state.get("Safemode")

        def seen() -> tuple[Any, Any]:
            return state.get("LiveNodes"), state.get("Safemode")

        wait_for(live, "HDFS: every DataNode live and no safe mode", budget_s=timeout_s, progress=seen,
                 ignore=(requests.RequestException,), alive=self.assert_alive,
                 describe=lambda: f"live DataNodes {seen()[0]!r}, safe mode {seen()[1]!r}")

    # ---- REST (the NameNode's web server on 127.0.0.1) ----------------------------------------
    @property
    def web(self) -> str:
        return f"http://127.0.0.1:{self.ports[1]}"

    def jmx(self, bean: str) -> dict[str, Any]:
        r = requests.get(f"{self.web}/jmx", params={"qry": bean}, timeout=10)
        r.raise_for_status()
        beans = r.json().get("beans") or []
        return beans[0] if beans else {}

    def webhdfs(self, path: str, op: str) -> dict[str, Any]:
        r = requests.get(f"{self.web}/webhdfs/v1{path}", params={"op": op, "user.name": "hadoop"}, timeout=30)
        r.raise_for_status()
        return r.json()

    def files(self, directory: str) -> list[str]:
        """The paths of the plain files directly in `directory`."""
        statuses = self.webhdfs(directory, "LISTSTATUS")["FileStatuses"]["FileStatus"]
        return sorted(f"{directory.rstrip('/')}/{s['pathSuffix']}" for s in statuses if s["type"] == "FILE")

    def block_hosts(self, directory: str) -> list[tuple[str, ...]]:
        """The hosts of every block of every file in `directory`, as HDFS reports them to clients
        (the hosts a MapReduce split of one block names)."""
        out: list[tuple[str, ...]] = []
        for path in self.files(directory):
            blocks = self.webhdfs(path, "GETFILEBLOCKLOCATIONS")["BlockLocations"]["BlockLocation"]
            out += [tuple(sorted(b["hosts"])) for b in sorted(blocks, key=lambda b: b["offset"])]
        return out


@contextmanager
def running_hdfs(hdfs: Hdfs) -> Iterator[Hdfs]:
    """HDFS started, and stopped when the block ends, whatever happened in it."""
    try:
        hdfs.start()
        yield hdfs
    finally:
        hdfs.stop()
