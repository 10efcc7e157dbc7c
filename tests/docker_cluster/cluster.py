"""A yarn-drf mini-cluster in Docker for the end-to-end tests: one ResourceManager and three
NodeManagers of different shapes, host networking, every port picked free on 127.0.0.1 so
the tests never collide with anything else on the machine.

Containers are started through testcontainers; readiness is polled on 127.0.0.1 (host networking
has no port mappings for testcontainers' own waits).
"""
from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import docker
import requests
from testcontainers.core.container import DockerContainer

from tests.ports import free_ports
from tests.waits import wait_for

ROOT = Path(__file__).resolve().parents[2]
HADOOP_IMAGE = "yarn-drf/hadoop:3.4.1"
RM_IMAGE = "yarn-drf/rm:latest"
CAPACITY_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
YARN_DRF_SCHEDULER = "org.yarndrf.shim.YarnDrfScheduler"
DSHELL_JAR = "/opt/hadoop/lib/hadoop-yarn-applications-distributedshell-3.4.2.jar"
DSHELL_CLIENT = "org.apache.hadoop.yarn.applications.distributedshell.Client"
SLEEP_JOB = "org.apache.hadoop.mapreduce.SleepJob"
MR_EXAMPLES_JAR = "/opt/hadoop/lib/hadoop-mapreduce-examples-3.4.2.jar"
# The project's Spark job (docker/spark): SleepShuffle TASKS TASK_MS [IDLE_S].
SPARK_JOB_JAR = "/opt/spark/examples/yarn-drf-spark-job.jar"
SPARK_JOB_CLASS = "org.yarndrf.spark.SleepShuffle"
GPU = "gpu-mem"
# Node labels on (docs/design.md, "Node labels"), centralized: tests set them with `yarn rmadmin`
# (Cluster.label_nodes); with no label set, nothing changes.
NODE_LABELS = {
    "YARN-SITE.XML_yarn.node-labels.enabled": "true",
    "YARN-SITE.XML_yarn.node-labels.configuration-type": "centralized",
    "YARN-SITE.XML_yarn.node-labels.fs-store.root-dir": "file:///tmp/yarn-node-labels",
}

if TYPE_CHECKING:
    from tests.docker_cluster.hdfs import Hdfs

T = TypeVar("T")


@dataclass(frozen=True)
class NodeShape:
    name: str
    vcores: int
    memory_mb: int
    gpu_mem: int
    # GPU cards (MiB each), declared in the NodeManager's configuration as docs/deploy.md, "GPU cards on the NodeManagers", says.
    # YARN keeps node attributes per host, and every NodeManager here runs on this one host: a
    # cluster with a card node must have no other NodeManager.
    cards: tuple[int, ...] = ()

    def capacity(self) -> dict[str, int]:
        return {"memory-mb": self.memory_mb, "vcores": self.vcores, GPU: self.gpu_mem}

    def card_settings(self) -> dict[str, str]:
        """The NodeManager's settings for its cards (docs/deploy.md, "GPU cards on the NodeManagers"), as render_conf overrides."""
        if not self.cards:
            return {}
        return {
            "YARN-SITE.XML_yarn.nodemanager.node-attributes.provider": "config",
            "YARN-SITE.XML_yarn.nodemanager.node-attributes.provider.configured-node-attributes":
                "yarn-drf-gpu-cards,STRING," + "_".join(map(str, self.cards)),
            "YARN-SITE.XML_yarn.nodemanager.container-executor.class": "org.yarndrf.nm.CardsContainerExecutor",
        }


# The shapes of docker/compose.yaml: CPU-rich, memory-rich, and 2 x 10 GiB of GPU memory.
SHAPES = (
    NodeShape("nm-cpu", vcores=16, memory_mb=8192, gpu_mem=0),
    NodeShape("nm-mem", vcores=4, memory_mb=32768, gpu_mem=0),
    NodeShape("nm-gpu", vcores=8, memory_mb=16384, gpu_mem=20480),
)


def resource_map(info: dict[str, Any] | None) -> dict[str, int]:
    """{name: value} from a REST `resourceInformations` block (a Resource in the RM's JSON)."""
    if not info:
        return {}
    items = (info.get("resourceInformations") or {}).get("resourceInformation") or []
    return {item["name"]: int(item["value"]) for item in items}


def dshell_command(name: str, queue: str, num: int, resources: dict[str, int], command: str) -> list[str]:
    """The distributed-shell client's command line: `num` containers of `resources` running
    `command`, an AM of 256 MiB, and a timeout of a day (the client returns when the app ends).
    The client asks the RM for its queue's info before it submits: the queue must exist."""
    res = ",".join(f"{k}={v}" for k, v in resources.items())
    return ["yarn", "jar", DSHELL_JAR, DSHELL_CLIENT, "-jar", DSHELL_JAR, "-appname", name,
            "-queue", queue, "-shell_command", command, "-num_containers", str(num),
            "-container_resources", res, "-master_memory", "256", "-master_vcores", "1",
            "-timeout", "86400000"]


def spark_command(name: str, queue: str | None, job_args: list[object], *, mode: str = "cluster",
                  executors: int | None = None, conf: dict[str, str] | None = None) -> list[str]:
    """spark-submit of the project's SleepShuffle job (the image's spark-defaults.conf: master
    yarn, local Spark jars, 512 MB executors of one core). Without a queue Spark submits to YARN's
    "default", as any app that names none."""
    cmd = ["spark-submit", "--deploy-mode", mode, *(["--queue", queue] if queue else []), "--name", name]
    if executors is not None:
        cmd += ["--num-executors", str(executors)]
    for key, value in (conf or {}).items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd + ["--class", SPARK_JOB_CLASS, SPARK_JOB_JAR, *map(str, job_args)]


def stop_containers(containers: list[DockerContainer | None]) -> None:
    """Stops each container that was started and still exists."""
    for c in containers:
        if c is not None:
            try:
                c.stop()
            except docker.errors.NotFound:
                pass


def remove_volume(client: docker.DockerClient, name: str) -> None:
    try:
        client.volumes.get(name).remove(force=True)
    except docker.errors.NotFound:
        pass


@dataclass
class Cluster:
    scheduler: str
    queues_file: Path
    env: dict[str, str]
    web_port: int
    volume: str
    shapes: tuple[NodeShape, ...] = SHAPES
    # the HDFS its NodeManagers' hosts share (tests/docker_cluster/hdfs.py; started and stopped by its owner)
    hdfs: Hdfs | None = None
    rm: DockerContainer | None = None
    nms: dict[str, DockerContainer] = field(default_factory=dict)
    client: docker.DockerClient = field(default_factory=docker.from_env)
    # the environment variables of each NodeManager's own ports, picked free in create()
    NM_PORTS: ClassVar[tuple[str, ...]] = ("NM_RPC_PORT", "NM_LOCALIZER_PORT", "NM_WEB_PORT", "NM_SHUFFLE_PORT")

    # ---- lifecycle -------------------------------------------------------------------------
    @classmethod
    def create(cls, scheduler: str, queues_file: Path, shapes: tuple[NodeShape, ...] = SHAPES,
               hdfs: Hdfs | None = None) -> "Cluster":
        """A cluster on free ports; with `hdfs` (whose hosts are the shapes' names), each
        NodeManager runs on its DataNode's host and HDFS is the default file system."""
        ports = free_ports(7 + len(cls.NM_PORTS) * len(shapes))
        env = {
            "RM_HOST": "127.0.0.1",
            "RM_RPC_PORT": str(ports[0]),
            "RM_SCHEDULER_PORT": str(ports[1]),
            "RM_TRACKER_PORT": str(ports[2]),
            "RM_ADMIN_PORT": str(ports[3]),
            "RM_WEB_PORT": str(ports[4]),
            "YARN_DRF_BRIDGE_PORT": str(ports[5]),
            "YARN_DRF_STATUS_PORT": str(ports[6]),
            **(hdfs.env() if hdfs else {}),
        }
        cluster = cls(scheduler=scheduler, queues_file=queues_file, env=env, web_port=ports[4],
                      volume=f"yarn-drf-e2e-{uuid.uuid4().hex[:8]}", shapes=shapes, hdfs=hdfs)
        cluster._nm_ports = ports[7:]
        return cluster

    def start(self, timeout_s: float = 120) -> None:
        self.client.volumes.create(self.volume, labels={"yarn-drf": "1"})
        self.rm = self._container(RM_IMAGE, "resourcemanager", {
            **self.env, "YARN_SCHEDULER_CLASS": self.scheduler, **NODE_LABELS,
        }, queues=True)
        self.rm.start()
        self._start_nodemanagers()
        self.wait_for_nodes(len(self.shapes), timeout_s)

    def _start_nodemanagers(self) -> None:
        n = len(self.NM_PORTS)
        for i, shape in enumerate(self.shapes):
            ports = dict(zip(self.NM_PORTS, map(str, self._nm_ports[n * i: n * i + n])))
            # the RM image carries the project's jar, whose CardsContainerExecutor a card node runs
            nm = self._container(RM_IMAGE if shape.cards else HADOOP_IMAGE, "nodemanager", {
                **self.env,
                "NM_VCORES": str(shape.vcores), "NM_MEMORY_MB": str(shape.memory_mb),
                "NM_GPU_MEM": str(shape.gpu_mem), **ports,
                **({"NM_HOST": shape.name} if self.hdfs else {}),
                **shape.card_settings(),
            })
            nm.start()
            self.nms[shape.name] = nm

    def _container(self, image: str, command: str, env: dict[str, str], queues: bool = False) -> DockerContainer:
        hosts = self.hdfs.extra_hosts() if self.hdfs else None
        c = DockerContainer(image).with_command(command).with_kwargs(
            network_mode="host", labels={"yarn-drf": "1"}, extra_hosts=hosts)
        c.with_volume_mapping(self.volume, "/shared", "rw")
        if queues:
            c.with_volume_mapping(str(self.queues_file), "/etc/yarn-drf/queues.yaml", "ro")
        for k, v in env.items():
            c.with_env(k, v)
        return c

    def containers(self) -> list[DockerContainer | None]:
        """Every container of the cluster (None: not started)."""
        return [*self.nms.values(), self.rm]

    def stop(self) -> None:
        stop_containers(self.containers())
        remove_volume(self.client, self.volume)

    def logs(self, container: DockerContainer, tail: int = 60) -> str:
        try:
            return container.get_wrapped_container().logs(tail=tail).decode(errors="replace")
        except docker.errors.NotFound:
            return "<container gone>"

    def daemons(self) -> list[tuple[str, DockerContainer]]:
        """The containers that must keep running, by name."""
        return [("resourcemanager", self.rm), *self.nms.items()]

    def assert_alive(self) -> None:
        """Fail fast, with its log, when a daemon container exited."""
        for name, c in self.daemons():
            w = c.get_wrapped_container()
            w.reload()
            if w.status not in ("running", "created"):
                raise AssertionError(f"{name} container is {w.status}; last log lines:\n{self.logs(c)}")

    def wait_for(self, condition: Callable[[], T], budget_s: float, what: str, **waiting: Any) -> T:
        """tests.waits.wait_for on this cluster: `budget_s` is how long its work may go without any
        change (activity(): a loaded machine gets as long as the cluster keeps moving, up to
        LIMIT_FACTOR times it); a daemon that exits fails at once; a failure says what the apps and
        the RM were doing (explain()). `waiting`: wait_for's other arguments, these overridden."""
        return wait_for(condition, what, budget_s=budget_s, **{"poll_s": 1, **self.watching(), **waiting})

    def watching(self) -> dict[str, Any]:
        """What a wait on this cluster watches (tests.waits): its work for progress, its daemons for
        life, and explain() for a failure."""
        return {"progress": self.activity, "alive": self.assert_alive, "describe": self.explain}

    def explain(self) -> str:
        """What a failed wait prints: the apps' states and diagnostics, and the RM's last log lines."""
        try:
            apps = "; ".join(f"{a['name']} {a['state']} {a['runningContainers']} {a['diagnostics'][:300]}"
                             for a in self.apps())
        except requests.RequestException as exc:
            apps = f"(the RM's REST API does not answer: {exc})"
        log = self.logs(self.rm, tail=40) if self.rm is not None else "(not started)"
        return f"apps: {apps}\nRM log:\n{log}"

    # ---- REST ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/ws/v1/cluster"

    def rest(self, path: str) -> dict[str, Any]:
        r = requests.get(f"{self.url}{path}", headers={"Accept": "application/json"}, timeout=10)
        r.raise_for_status()
        return r.json()

    def wait_rest(self, timeout_s: float) -> None:
        """Until the RM's REST API answers; fails when no daemon wrote a log line for `timeout_s`
        (a loaded machine starts slowly but its daemons keep logging), or a daemon exited."""
        self.wait_for(lambda: self.rest("/info"), timeout_s, "the RM's REST API", progress=self.log_ends,
                      poll_s=0.5, ignore=(requests.RequestException,), describe=lambda: self.logs(self.rm))

    def log_ends(self) -> tuple[str, ...]:
        """The last log line of each daemon: it changes while they start."""
        return tuple(self.logs(c, tail=1) for _, c in self.daemons() if c is not None)

    def nodes(self) -> list[dict[str, Any]]:
        return (self.rest("/nodes").get("nodes") or {}).get("node") or []

    def running_nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.nodes() if n["state"] == "RUNNING"]

    def wait_for_nodes(self, count: int, timeout_s: float) -> list[dict[str, Any]]:
        """Until `count` NodeManagers run and the scheduler has each (the RM's node report shows
        `availableResource` only once the scheduler's NODE_ADDED is done: under a CPU hog the demo
        read a RUNNING node without it); the budget as wait_rest's."""
        self.wait_rest(timeout_s)

        def registered() -> list[dict[str, Any]] | None:
            nodes = [n for n in self.running_nodes() if "availableResource" in n]
            return nodes if len(nodes) >= count else None

        return self.wait_for(registered, timeout_s, f"{count} NodeManagers to register", progress=self.log_ends,
                             poll_s=0.5, describe=lambda: f"{len(self.running_nodes())} of {count} registered")

    def apps(self, states: str = "") -> list[dict[str, Any]]:
        q = f"?states={states}" if states else ""
        return (self.rest(f"/apps{q}").get("apps") or {}).get("app") or []

    def app_by_name(self, name: str) -> dict[str, Any] | None:
        found = [a for a in self.apps() if a["name"] == name]
        return max(found, key=lambda a: a["id"]) if found else None

    def wait_app(self, name: str, states: tuple[str, ...], timeout_s: float) -> dict[str, Any]:
        def there() -> dict[str, Any] | None:
            app = self.app_by_name(name)
            return app if app is not None and app["state"] in states else None

        return self.wait_for(there, timeout_s, f"app {name} in {states}", poll_s=0.5,
                             describe=lambda: repr(self.app_by_name(name)))

    def activity(self) -> tuple:
        """What changes while the cluster's work moves (a wait's progress): each app's state,
        progress and running containers, and the nodes' used room; () while the REST API is down."""
        try:
            apps = tuple(sorted((a["id"], a["state"], a.get("progress"), a.get("runningContainers"),
                                 a.get("allocatedMB")) for a in self.apps()))
            used = tuple(sorted((n["id"], n.get("numContainers")) for n in self.nodes()))
        except requests.RequestException:
            return ()
        return apps, used

    def status_port(self) -> int:
        return int(self.env["YARN_DRF_STATUS_PORT"])

    def rest_status(self, path: str) -> dict[str, Any]:
        """A page of the Python core's status server (yarn-drf serve --status-port), or raises
        when it is down."""
        r = requests.get(f"http://127.0.0.1:{self.status_port()}{path}", timeout=5)
        r.raise_for_status()
        return r.json()

    def core_status(self) -> dict[str, Any]:
        """The Python core's raw state."""
        return self.rest_status("/")["core"]

    def serve_pids(self) -> list[int]:
        """Process ids of `yarn-drf serve` inside the RM container."""
        code, out = self.exec(["ps", "-eo", "pid=,args="])
        assert code == 0, out
        return [int(line.split(None, 1)[0]) for line in out.splitlines()
                if "yarn-drf serve" in line and "ps -eo" not in line]

    def running_containers(self) -> dict[str, dict[str, Any]]:
        """Every running container of every running app, by container id, from the RM REST API:
        {id: {"app", "queue", "user", "node", "resources": {name: amount}, "started": ms, "am": bool}}.
        An attempt's AM is the container its attempt names, not the one numbered 1: after a
        failover the new RM numbers an app's containers from 1 again, in a new epoch."""
        out: dict[str, dict[str, Any]] = {}
        for app in self.apps("RUNNING"):
            queue = app["queue"] if app["queue"].startswith("root.") else f"root.{app['queue']}"
            attempts = self.app_attempts(app["id"])
            ams = {att.get("containerId") for att in attempts}
            for c in self.app_containers(app["id"], attempts):
                entries = (c.get("allocatedResources") or {}).get("entry") or []
                if isinstance(entries, dict):
                    entries = [entries]
                out[c["containerId"]] = {
                    "app": app["id"], "queue": queue, "user": app["user"],
                    "node": c.get("nodeId") or c.get("assignedNodeId"),
                    "resources": {e["key"]: int(e["value"]) for e in entries},
                    "started": int(c.get("startedTime") or 0),  # ms: when the RM allocated it
                    "am": c["containerId"] in ams,
                }
        return out

    def app_attempts(self, app_id: str) -> list[dict[str, Any]]:
        """An app's attempts from the RM REST API (each names its AM container, `containerId`)."""
        return (self.rest(f"/apps/{app_id}/appattempts").get("appAttempts") or {}).get("appAttempt") or []

    def app_containers(self, app_id: str, attempts: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Running containers of an app (current attempt) from the RM REST API."""
        out: list[dict[str, Any]] = []
        for att in self.app_attempts(app_id) if attempts is None else attempts:
            try:
                data = self.rest(f"/apps/{app_id}/appattempts/{att['appAttemptId']}/containers")
            except requests.HTTPError:
                continue
            items = data.get("container") if isinstance(data, dict) else None
            if isinstance(items, dict):
                items = [items]
            out.extend(c for c in items or [] if c.get("containerState") in (None, "RUNNING"))
        return out

    # ---- clients (run inside the RM container, as its user unless told) ---------------------
    def client_container(self) -> DockerContainer:
        return self.rm

    def exec(self, cmd: list[str], user: str | None = None, detach: bool = False) -> tuple[int, str]:
        env = {"HADOOP_USER_NAME": user} if user else None
        res = self.client_container().get_wrapped_container().exec_run(
            cmd, environment=env, detach=detach, demux=False)
        if detach:
            return 0, ""
        return res.exit_code, (res.output or b"").decode(errors="replace")

    def submit_dshell(self, name: str, queue: str, num: int, resources: dict[str, int], *,
                      command: str = "sleep 3600", user: str | None = None, wait: bool = False) -> tuple[int, str]:
        cmd = dshell_command(name, queue, num, resources, command)
        return self.exec(cmd, user=user) if wait else self.exec_detached(cmd, name, user=user)

    def exec_detached(self, cmd: list[str], name: str, user: str | None = None) -> tuple[int, str]:
        """Starts a client that only monitors an app, which lives on without it; its output goes to
        /tmp/NAME.log in the RM container (client_log)."""
        shell = " ".join(shlex.quote(a) for a in cmd) + f" > /tmp/{name}.log 2>&1"
        return self.exec(["bash", "-c", shell], user=user, detach=True)

    def client_log(self, name: str, tail: int = 60) -> str:
        return self.exec(["tail", "-n", str(tail), f"/tmp/{name}.log"])[1]

    def spark_submit(self, name: str, queue: str | None, job_args: list[object], *, mode: str = "cluster",
                     executors: int | None = None, conf: dict[str, str] | None = None,
                     wait: bool = True, user: str | None = None) -> tuple[int, str]:
        """The project's SleepShuffle job through spark-submit (spark_command)."""
        cmd = spark_command(name, queue, job_args, mode=mode, executors=executors, conf=conf)
        return self.exec(cmd, user=user) if wait else self.exec_detached(cmd, name, user=user)

    def gpu_node_id(self) -> str:
        """The id (host:port) of the NodeManager with GPU memory."""
        ids = [n["id"] for n in self.running_nodes()
               if resource_map(n["usedResource"]).get(GPU, 0) + resource_map(n["availableResource"]).get(GPU, 0)]
        assert len(ids) == 1, ids
        return ids[0]

    def rmadmin(self, *args: str) -> None:
        code, out = self.exec(["yarn", "rmadmin", *args])
        assert code == 0, f"yarn rmadmin {' '.join(args)} failed:\n{out[-2000:]}"

    def label_nodes(self, labels: str, nodes: dict[str, str], timeout_s: float = 60) -> None:
        """Adds the cluster's node labels (`rmadmin -addToClusterNodeLabels`, e.g.
        "gpu(exclusive=true)") and puts nodes (id -> label, "" for none) in them, as an operator
        does; returns once the RM's REST API shows the nodes labelled (the budget as wait_rest's)."""
        if labels:
            self.rmadmin("-addToClusterNodeLabels", labels)
        self.rmadmin("-replaceLabelsOnNode", " ".join(f"{n}={label}" for n, label in nodes.items()))
        want = {n: [label] if label else [] for n, label in nodes.items()}

        def labelled() -> dict[str, list[str]]:
            return {n["id"]: n.get("nodeLabels") or [] for n in self.nodes() if n["id"] in nodes}

        self.wait_for(lambda: labelled() == want, timeout_s, f"nodes labelled {want}", progress=self.log_ends,
                      poll_s=0.5, describe=lambda: repr(labelled()))

    def kill_app(self, app_id: str) -> None:
        code, out = self.exec(["yarn", "application", "-kill", app_id])
        assert code == 0, f"yarn application -kill {app_id} failed:\n{out[-2000:]}"

    def kill_all_apps(self, timeout_s: float = 60) -> None:
        for app in self.apps("NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING"):
            self.kill_app(app["id"])
        self.wait_for(lambda: not self.apps("NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING") and not any(
            n.get("numContainers", 0) for n in self.running_nodes()), timeout_s,
            "no app or container running after the kill", poll_s=0.5,
            alive=None, describe=lambda: json.dumps([n.get("numContainers") for n in self.running_nodes()]))
