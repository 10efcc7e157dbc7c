"""A YARN Federation of yarn-drf sub-clusters in Docker (docker/DOCKER.md, "YARN Federation"): a
ZooKeeper server as the federation state store, sub-clusters of one ResourceManager running
yarn-drf each with their own NodeManagers (the AMRMProxy with the FederationInterceptor on every
one), a Router, and a client container whose `yarn` talks to the Router. Every port is picked free
on 127.0.0.1; every container mounts one shared volume (the cluster's file system).

A sub-cluster is a `Cluster` (cluster.py) whose RM and NodeManagers carry the federation's
environment: its RM's REST API and yarn-drf status server are reached as for a single cluster.
"""
from __future__ import annotations

import shlex
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import docker
import requests
from testcontainers.core.container import DockerContainer

from tests.docker_cluster.cluster import (HADOOP_IMAGE, RM_IMAGE, Cluster, NodeShape, dshell_command, remove_volume,
                                          spark_command, stop_containers)
from tests.docker_cluster.ha_cluster import zk_ruok
from tests.ports import free_ports
from tests.waits import wait_for

# Two sub-clusters of different shapes: SC-1 CPU- and memory-rich nodes, SC-2 one GPU node with two
# 10 GiB cards (YARN keeps node attributes per host, so a card node is the only NodeManager of its RM).
FEDERATION_SHAPES: dict[str, tuple[NodeShape, ...]] = {
    "SC-1": (NodeShape("sc1-cpu", vcores=16, memory_mb=8192, gpu_mem=0),
             NodeShape("sc1-mem", vcores=4, memory_mb=32768, gpu_mem=0)),
    "SC-2": (NodeShape("sc2-gpu", vcores=8, memory_mb=16384, gpu_mem=20480, cards=(10240, 10240)),),
}
ROUTER_PORTS = ("ROUTER_CLIENTRM_PORT", "ROUTER_ADMIN_PORT", "ROUTER_WEB_PORT")
# Container ids must not collide between sub-clusters (an app's containers come from several):
# each RM's epoch starts this far from the previous one's, as Hadoop's federation guide advises.
EPOCH_STRIDE = 1000
# Spark through the Router: spark-submit's own (shaded, 3.3) Hadoop client takes federation on for
# RM failover, which knows no failover.enabled key and finds no RM ids (the client reaches one
# Router address); and a Spark AM reads the Hadoop configuration its client shipped, not its
# NodeManager's: the NodeManager's configuration directory first on the AM's class path gives it
# the NodeManager's final scheduler address, the AMRMProxy.
SPARK_THROUGH_THE_ROUTER = {"spark.hadoop.yarn.federation.enabled": "false",
                            "spark.driver.extraClassPath": "/opt/hadoop/etc/hadoop"}


@dataclass
class SubCluster(Cluster):
    """One sub-cluster: its RM and NodeManagers on the federation's shared volume."""
    NM_PORTS: ClassVar[tuple[str, ...]] = (*Cluster.NM_PORTS, "AMRM_PROXY_PORT")

    def start(self, timeout_s: float = 120) -> None:
        self.rm = self._container(RM_IMAGE, "resourcemanager", {
            **self.env, "YARN_SCHEDULER_CLASS": self.scheduler}, queues=True)
        self.rm.start()
        self._start_nodemanagers()

    def stop(self) -> None:
        """Its containers; the shared volume is the federation's."""
        stop_containers(self.containers())

    @property
    def id(self) -> str:
        return self.env["FEDERATION_SUBCLUSTER_ID"]

    def nm_rpc_ports(self) -> dict[int, str]:
        """NodeManager RPC port -> the NodeManager's name."""
        return {int(c.env["NM_RPC_PORT"]): name for name, c in self.nms.items()}

    def kill_rm(self) -> None:
        """kill -9 of the RM's JVM (its core follows by its parent-pid watch, and the container,
        whose main process it is, exits)."""
        code, out = self.exec(["ps", "-eo", "pid=,args="])
        pids = [line.split(None, 1)[0] for line in out.splitlines()
                if "java" in line and "resourcemanager.ResourceManager" in line]
        assert code == 0 and len(pids) == 1, f"ResourceManager JVMs in {self.id}: {out}"
        self.exec(["kill", "-9", pids[0]])

    def restart_rm(self, timeout_s: float = 180) -> None:
        """Starts a killed RM's container again (its file system, and so its state store, kept):
        it recovers its apps and containers, work-preserving, as its NodeManagers re-register."""
        w = self.rm.get_wrapped_container()
        w.reload()
        if w.status == "running":
            w.wait(timeout=60)
        w.start()
        self.wait_for_nodes(len(self.shapes), timeout_s)

    def daemons(self) -> list[tuple[str, DockerContainer]]:
        return [(f"{self.id} resourcemanager", self.rm), *((f"{self.id} {n}", c) for n, c in self.nms.items())]


@dataclass
class Federation:
    scheduler: str
    queues_file: Path
    env: dict[str, str]
    volume: str
    subclusters: dict[str, SubCluster]
    zk: DockerContainer | None = None
    router: DockerContainer | None = None
    client_box: DockerContainer | None = None
    # sub-clusters whose RM a test killed on purpose: their containers may be down
    down: set[str] = field(default_factory=set)
    client: docker.DockerClient = field(default_factory=docker.from_env)

    @classmethod
    def create(cls, scheduler: str, queues_file: Path,
               shapes: dict[str, tuple[NodeShape, ...]] | None = None) -> "Federation":
        shapes = shapes or FEDERATION_SHAPES
        for _ in range(20):  # each sub-cluster picks its own ports: they must not meet another's
            federation = cls._create(scheduler, queues_file, shapes)
            if federation.ports_distinct():
                return federation
        raise AssertionError("no distinct free ports for the federation in 20 tries")

    @classmethod
    def _create(cls, scheduler: str, queues_file: Path, shapes: dict[str, tuple[NodeShape, ...]]) -> "Federation":
        ports = iter(free_ports(1 + len(ROUTER_PORTS)))
        zk_port = next(ports)
        env = {"ZK_PORT": str(zk_port), "ZK_ADDRESS": f"127.0.0.1:{zk_port}",
               **{name: str(next(ports)) for name in ROUTER_PORTS}}
        volume = f"yarn-drf-fed-{uuid.uuid4().hex[:8]}"
        subclusters = {}
        for index, (sc_id, sc_shapes) in enumerate(shapes.items()):
            sc = SubCluster.create(scheduler, queues_file, sc_shapes)
            assert isinstance(sc, SubCluster)
            sc.volume = volume
            sc.env.update(env, FEDERATION_SUBCLUSTER_ID=sc_id, FEDERATION_EPOCH=str(index * EPOCH_STRIDE))
            subclusters[sc_id] = sc
        return cls(scheduler=scheduler, queues_file=queues_file, env=env, volume=volume, subclusters=subclusters)

    def ports_distinct(self) -> bool:
        """No port of one part (Router, ZooKeeper, a sub-cluster's RM, core or NodeManagers) is
        another's: free_ports holds only its own picks open, so two calls can return one port."""
        ports = [*(self.env[k] for k in ("ZK_PORT", *ROUTER_PORTS))]
        for sc in self.subclusters.values():
            ports += [v for k, v in sc.env.items() if k.endswith("_PORT") and k not in ("ZK_PORT", *ROUTER_PORTS)]
            ports += [str(p) for p in sc._nm_ports]
        return len(ports) == len(set(ports))

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self, timeout_s: float = 180) -> None:
        self.client.volumes.create(self.volume, labels={"yarn-drf": "1"})
        self.zk = self._named("zookeeper", "zookeeper")
        self.zk.start()
        self._wait(lambda: zk_ruok(int(self.env["ZK_PORT"])) == "imok", "ZooKeeper", timeout_s)
        for sc in self.subclusters.values():
            sc.start()
        self.router = self._named("router", "router")
        self.router.start()
        self.client_box = self._named("client", "sleep infinity")
        self.client_box.start()
        for sc in self.subclusters.values():
            sc.wait_for_nodes(len(sc.shapes), timeout_s)
        # The Router's web services build a policy for each request: until one is saved for `*`
        # (its configured default, WeightedLocalityPolicyManager, has no weights) they answer 503.
        even = {sc: 1 / len(self.subclusters) for sc in self.subclusters}
        self._wait(lambda: self.try_save_policy("*", even, even)[0] == 0, "the Router's admin service to save a policy",
                   timeout_s, describe=lambda: self.try_save_policy("*", even, even)[1][-3000:])
        nodes = sum(len(sc.shapes) for sc in self.subclusters.values())
        self._wait(lambda: len(self.nodes()) >= nodes, f"the Router to see {nodes} nodes of every sub-cluster",
                   timeout_s, describe=lambda: f"nodes through the Router: {[n['id'] for n in self.nodes()]}")

    def _named(self, role: str, command: str) -> DockerContainer:
        """A container of the federation an operator reaches by name: VOLUME-router, VOLUME-client..."""
        c = DockerContainer(HADOOP_IMAGE).with_command(command).with_name(f"{self.volume}-{role}").with_kwargs(
            network_mode="host", labels={"yarn-drf": "1"})
        c.with_volume_mapping(self.volume, "/shared", "rw")
        for k, v in self.env.items():
            c.with_env(k, v)
        return c

    def containers(self) -> list[DockerContainer | None]:
        return [self.client_box, self.router, self.zk]

    def stop(self) -> None:
        for sc in self.subclusters.values():
            sc.stop()
        stop_containers(self.containers())
        remove_volume(self.client, self.volume)

    def daemons(self) -> list[tuple[str, DockerContainer]]:
        named = [("zookeeper", self.zk), ("router", self.router), ("client", self.client_box),
                 *(d for sc_id, sc in self.subclusters.items() if sc_id not in self.down for d in sc.daemons())]
        return [(name, c) for name, c in named if c is not None]

    def assert_alive(self) -> None:
        for name, c in self.daemons():
            w = c.get_wrapped_container()
            w.reload()
            if w.status not in ("running", "created"):
                logs = w.logs(tail=60).decode(errors="replace")
                raise AssertionError(f"{name} container is {w.status}; last log lines:\n{logs}")

    def log_ends(self) -> tuple[str, ...]:
        return tuple(c.get_wrapped_container().logs(tail=1).decode(errors="replace") for _, c in self.daemons())

    def _wait(self, condition, what: str, timeout_s: float, describe=None):
        """tests.waits.wait_for on the federation: `timeout_s` without a new log line of any daemon;
        a daemon that exits fails at once."""
        return wait_for(condition, what, budget_s=timeout_s, progress=self.log_ends, alive=self.assert_alive,
                        describe=describe or self.explain)

    def explain(self, lines: int = 20) -> str:
        """What a failed wait prints: each daemon's last warnings and errors."""
        out = []
        for name, c in self.daemons():
            log = c.get_wrapped_container().logs(tail=3000).decode(errors="replace")
            picked = [line for line in log.splitlines() if " WARN " in line or " ERROR " in line]
            out.append(f"--- {name}: last warnings and errors\n" + "\n".join(picked[-lines:]))
        return "\n".join(out)

    # ---- the Router ------------------------------------------------------------------------
    def rest(self, path: str) -> dict[str, Any]:
        """The Router's REST API (the federation's merged view)."""
        r = requests.get(f"http://127.0.0.1:{self.env['ROUTER_WEB_PORT']}/ws/v1/cluster{path}",
                         headers={"Accept": "application/json"}, timeout=20)
        r.raise_for_status()
        return r.json()

    def nodes(self) -> list[dict[str, Any]]:
        try:
            return (self.rest("/nodes").get("nodes") or {}).get("node") or []
        except (requests.RequestException, ValueError):
            return []

    def exec(self, cmd: list[str], user: str | None = None, detach: bool = False) -> tuple[int, str]:
        """A command in the client container, whose `yarn` talks to the Router."""
        env = {"HADOOP_USER_NAME": user} if user else None
        res = self.client_box.get_wrapped_container().exec_run(cmd, environment=env, detach=detach, demux=False)
        return (0, "") if detach else (res.exit_code, (res.output or b"").decode(errors="replace"))

    def save_policy(self, queue: str, router_weights: dict[str, float], amrm_weights: dict[str, float],
                    headroom_alpha: float = 0.0) -> None:
        """`yarn routeradmin -policy -s`: the queue's weights of the WeightedLocalityPolicyManager
        (router: where an app's AM runs; AMRM: how its asks are split; headroom alpha 0: by weight
        alone, 1: by the sub-clusters' free room alone). Queue `*` is every queue without its own."""
        code, out = self.try_save_policy(queue, router_weights, amrm_weights, headroom_alpha)
        assert code == 0, f"yarn routeradmin -policy -s for {queue} failed:\n{out[-3000:]}"

    def try_save_policy(self, queue: str, router_weights: dict[str, float], amrm_weights: dict[str, float],
                        headroom_alpha: float = 0.0) -> tuple[int, str]:
        def weights(w: dict[str, float]) -> str:  # the Router wants them to sum to 1 within 1e-6
            return ",".join(f"{sc}:{v!r}" for sc, v in w.items())
        spec = f"{queue};{weights(router_weights)};{weights(amrm_weights)};{headroom_alpha!r}"
        code, out = self.exec(["yarn", "routeradmin", "-policy", "-s", spec])
        return (code if "save policy success" in out else code or 1), out

    def submit_dshell(self, name: str, queue: str, num: int, resources: dict[str, int], command: str) -> tuple[int, str]:
        """A distributed-shell app through the Router, its client's output when it ends."""
        return self.exec(dshell_command(name, queue, num, resources, command))

    def submit_spark(self, name: str, queue: str, job_args: list[object], executors: int) -> tuple[int, str]:
        """The project's SleepShuffle job through the Router (cluster mode: its driver is the AM),
        its client's output when it ends."""
        return self.exec(spark_command(name, queue, job_args, executors=executors, conf=SPARK_THROUGH_THE_ROUTER))

    def exec_detached(self, cmd: list[str], name: str) -> None:
        shell = " ".join(shlex.quote(a) for a in cmd) + f" > /tmp/{name}.log 2>&1"
        self.exec(["bash", "-c", shell], detach=True)

    def client_log(self, name: str, tail: int = 60) -> str:
        return self.exec(["tail", "-n", str(tail), f"/tmp/{name}.log"])[1]

    # ---- where containers ran --------------------------------------------------------------
    def marked_command(self, tag: str, seconds: int) -> str:
        """A shell container's command that leaves a mark naming its NodeManager (its RPC port) on
        the shared volume: /shared/marks-TAG/PORT.CONTAINER_ID."""
        return f"mkdir -p /shared/marks-{tag}; touch /shared/marks-{tag}/$NM_PORT.$CONTAINER_ID; sleep {seconds}"

    def marks_by_subcluster(self, tag: str) -> dict[str, list[str]]:
        """Sub-cluster id -> the container ids that left a mark of `tag` on one of its NodeManagers."""
        code, out = self.exec(["bash", "-c", f"ls /shared/marks-{tag} 2>/dev/null || true"])
        owner = {port: sc_id for sc_id, sc in self.subclusters.items() for port in sc.nm_rpc_ports()}
        found: dict[str, list[str]] = {sc_id: [] for sc_id in self.subclusters}
        for mark in out.split():
            port, _, container = mark.partition(".")
            found[owner[int(port)]].append(container)
        return found
