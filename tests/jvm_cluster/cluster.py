"""A real YARN cluster for the integration tests: one ResourceManager with the yarn-drf shim and
NodeManagers, each its own JVM started from the Maven dependency classpath the shim build writes
(java_shim/target/classpath.txt), all on 127.0.0.1. Distributed-shell apps are submitted with the
real dshell Client. Nothing here fakes YARN."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from xml.sax.saxutils import escape

from tests.ports import free_port
from tests.secret_files import secret_file
from tests.waits import wait_for

REPO = Path(__file__).resolve().parents[2]
SHIM_DIR = REPO / "java_shim"
CONF = REPO / "conf" / "hadoop"
T = TypeVar("T")


def shim_jar() -> Path:
    jars = sorted((SHIM_DIR / "target").glob("yarn-drf-shim-*.jar"))
    jars = [j for j in jars if not j.name.startswith("original-")]
    if not jars:
        raise RuntimeError("the shim jar is missing: run `make shim`")
    return jars[0]


def maven_classpath() -> list[str]:
    return (SHIM_DIR / "target" / "classpath.txt").read_text().strip().split(os.pathsep)


def dshell_jar() -> str:
    return next(p for p in maven_classpath() if "distributedshell" in p)


def java17_opens() -> list[str]:
    return [line.strip() for line in (CONF / "java17-opens").read_text().splitlines() if line.strip()]


def jvm_flags(home: Path) -> list[str]:
    """Every JVM of a test cluster, daemon or client: the JDK internals Hadoop needs on Java 17, and
    a home of the cluster's own (the dshell Client stages each app on the local file system under
    ~/NAME/APP_ID, which nothing removes; a JVM takes its home from the password database, not $HOME)."""
    return [*java17_opens(), f"-Duser.home={home}"]


def write_site(path: Path, props: dict[str, object]) -> None:
    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n"
                   for k, v in props.items())
    path.write_text(f"<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n")


LOG4J = """log4j.rootLogger=INFO,stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger=WARN
log4j.logger.org.apache.hadoop.yarn.server.nodemanager.NMAuditLogger=WARN
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
log4j.logger.http.requests=WARN
"""


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Cluster:
    root: Path
    queues_yaml: Path
    nm_count: int = 2
    nm_memory: int = 8192
    nm_vcores: int = 8
    nm_gpu_mem: int = 8192
    timeout_ms: int = 250
    rm_extra: dict[str, object] = field(default_factory=dict)  # more yarn-site keys for the RM
    ports: dict[str, int] = field(default_factory=dict)
    rm: Daemon | None = None
    nms: list[Daemon] = field(default_factory=list)
    clients: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        for key in ("rm", "rm_sched", "rm_tracker", "rm_admin", "rm_web", "bridge", "status"):
            self.ports[key] = free_port()
        self.home = self.root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.token_file = secret_file(self.root / "token", os.urandom(16).hex())
        # The containers' classpath: every Maven jar, by symlink, plus the client configuration.
        self.lib = self.root / "lib"
        self.lib.mkdir(parents=True, exist_ok=True)
        for jar in maven_classpath():
            link = self.lib / Path(jar).name
            if not link.exists():
                link.symlink_to(jar)
        self.client_conf = self._conf_dir("client", {})

    # ---------------------------------------------------------------- configuration

    def common_props(self) -> dict[str, object]:
        p = self.ports
        return {
            "yarn.resourcemanager.hostname": "127.0.0.1",
            "yarn.resourcemanager.address": f"127.0.0.1:{p['rm']}",
            "yarn.resourcemanager.scheduler.address": f"127.0.0.1:{p['rm_sched']}",
            "yarn.resourcemanager.resource-tracker.address": f"127.0.0.1:{p['rm_tracker']}",
            "yarn.resourcemanager.admin.address": f"127.0.0.1:{p['rm_admin']}",
            "yarn.resourcemanager.webapp.address": f"127.0.0.1:{p['rm_web']}",
            "yarn.application.classpath": f"{self.root / 'conf-client'},{self.lib}/*",
            "fs.defaultFS": "file:///",
            "hadoop.tmp.dir": str(self.root / "tmp"),
            "yarn.log-aggregation-enable": "false",
        }

    def rm_props(self) -> dict[str, object]:
        return {
            **self.common_props(),
            "yarn.resourcemanager.scheduler.class": "org.yarndrf.shim.YarnDrfScheduler",
            "yarn.http.rmwebapp.scheduler.page.class": "org.yarndrf.shim.web.SchedulerPage",
            "yarn.webapp.custom.webservice.class": "org.yarndrf.shim.web.YarnDrfWebServices",
            "yarn-drf.queues.file": str(self.queues_yaml),
            "yarn-drf.serve.command": f"{sys.executable} -m yarn_bridge.cli serve --status-port {self.ports['status']}",
            "yarn-drf.serve.log": str(self.root / "serve.log"),
            "yarn-drf.bridge.port": self.ports["bridge"],
            "yarn-drf.bridge.token-file": str(self.token_file),
            "yarn-drf.bridge.timeout-ms": self.timeout_ms,
            "yarn-drf.bridge.backoff.max-ms": 1000,
            "yarn.resourcemanager.recovery.enabled": "true",
            "yarn.resourcemanager.store.class":
                "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore",
            "yarn.resourcemanager.fs.state-store.uri": f"file://{self.root / 'rmstore'}",
            # Its default, /tmp/hadoop-yarn-USER, is one store for every RM on the machine: two test
            # runs' RMs renamed each other's mirror file, and one failed to start.
            "yarn.node-attribute.fs-store.root-dir": f"file://{self.root / 'node-attribute'}",
            "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms": 2000,
            "yarn.scheduler.minimum-allocation-mb": 128,
            "yarn.scheduler.minimum-allocation-vcores": 1,
            "yarn.resourcemanager.am.max-attempts": 1,
            # Faster than the 1 s default so the tests settle sooner; still twice the call timeout.
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": 500,
            **self.rm_extra,
        }

    def nm_props(self, i: int, ports: dict[str, int]) -> dict[str, object]:
        d = self.root / f"nm{i}"
        return {
            **self.common_props(),
            "yarn.nodemanager.hostname": "127.0.0.1",
            "yarn.nodemanager.address": f"127.0.0.1:{ports['rpc']}",
            "yarn.nodemanager.localizer.address": f"127.0.0.1:{ports['loc']}",
            "yarn.nodemanager.webapp.address": f"127.0.0.1:{ports['web']}",
            "yarn.nodemanager.local-dirs": str(d / "local"),
            "yarn.nodemanager.log-dirs": str(d / "logs"),
            "yarn.nodemanager.resource.memory-mb": self.nm_memory,
            "yarn.nodemanager.resource.cpu-vcores": self.nm_vcores,
            "yarn.nodemanager.resource-type.gpu-mem": self.nm_gpu_mem,
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
            "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb": 10,
            "yarn.nodemanager.env-whitelist": "JAVA_HOME,PATH",
            "yarn.nodemanager.delete.debug-delay-sec": 600,
        }

    def _conf_dir(self, name: str, props: dict[str, object]) -> Path:
        d = self.root / f"conf-{name}"
        d.mkdir(parents=True, exist_ok=True)
        write_site(d / "yarn-site.xml", {**self.common_props(), **props})
        write_site(d / "core-site.xml", {"fs.defaultFS": "file:///", "hadoop.tmp.dir": str(self.root / "tmp")})
        write_site(d / "mapred-site.xml", {"mapreduce.framework.name": "yarn"})
        shutil.copy(CONF / "resource-types.xml", d / "resource-types.xml")
        (d / "log4j.properties").write_text(LOG4J)
        return d

    # ---------------------------------------------------------------- processes

    def _java(self, name: str, conf_dir: Path, main: str, extra_cp: list[str] = (),
              env: dict[str, str] | None = None) -> Daemon:
        log = self.root / f"{name}.log"
        cp = os.pathsep.join([str(conf_dir), *extra_cp, *maven_classpath()])
        cmd = ["java", "-Xmx512m", *jvm_flags(self.home), f"-Dhadoop.log.dir={self.root}",
               f"-Dyarn.log.dir={self.root}", "-cp", cp, main]
        full_env = {**os.environ, "JAVA_HOME": java_home(), **(env or {})}
        full_env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{full_env.get('PATH', '')}"
        out = open(log, "ab")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=full_env,
                                cwd=str(REPO), start_new_session=True)
        return Daemon(name, proc, log)

    def start_rm(self) -> None:
        conf = self._conf_dir("rm", self.rm_props())
        self.rm = self._java("rm", conf, "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
                             [str(shim_jar())])

    def start_nms(self) -> None:
        for i in range(self.nm_count):
            ports = {"rpc": free_port(), "loc": free_port(), "web": free_port()}
            self.ports[f"nm{i}"] = ports["rpc"]
            conf = self._conf_dir(f"nm{i}", self.nm_props(i, ports))
            self.nms.append(self._java(f"nm{i}", conf, "org.apache.hadoop.yarn.server.nodemanager.NodeManager"))

    def start(self) -> None:
        self.start_rm()
        self.wait_rm()
        self.start_nms()
        self.wait_for(lambda: len(self.rest("nodes").get("nodes", {}).get("node", []) or []) == self.nm_count
                      and self.core_status() is not None, 120, "NodeManagers registered and core up")

    def stop(self) -> None:
        for p in self.clients:
            if p.poll() is None:
                p.kill()
                p.wait()
        # NodeManagers first and together (each unregisters from the RM and kills its
        # containers), then the RM, which stops its `yarn-drf serve` child.
        for d in self.nms:
            if d.alive():
                d.proc.send_signal(signal.SIGTERM)
        for d in self.nms:
            d.stop()
        if self.rm is not None:
            self.rm.stop()

    def wait_rm(self, timeout: float = 120) -> None:
        self.wait_for(lambda: self.rest("info").get("clusterInfo", {}).get("state") == "STARTED", timeout,
                      "ResourceManager started")

    def wait_for(self, cond: Callable[[], T], timeout: float, what: str, interval: float = 0.5, **waiting: Any) -> T:
        """tests.waits.wait_for on this cluster: `timeout` is how long its daemons may go without
        writing a log line (activity(): a loaded machine gets as long as they keep working, up to
        LIMIT_FACTOR times it); an error in `cond` counts as not yet (a daemon still starting
        answers with anything); an RM that exits fails at once; a failure shows the RM's and the
        core's last log lines. `waiting`: wait_for's other arguments, these overridden."""
        return wait_for(cond, what, budget_s=timeout, poll_s=interval, **{**self.watching(), **waiting})

    def watching(self) -> dict[str, Any]:
        """What a wait on this cluster watches (tests.waits): its logs for progress, its RM for life,
        and its RM's and core's logs for a failure; an error in the condition counts as not yet."""
        return {"progress": self.activity, "ignore": (Exception,), "alive": self.assert_rm_alive,
                "describe": self.explain}

    def activity(self) -> tuple[int, ...]:
        """The sizes of the daemons', the core's and the clients' logs: they grow while work moves."""
        return tuple(log.stat().st_size for log in sorted(self.root.glob("*.log")))

    def assert_rm_alive(self) -> None:
        if self.rm is not None and not self.rm.alive():
            raise AssertionError(f"ResourceManager died:\n{tail(self.rm.log)}")

    def explain(self) -> str:
        return (f"RM log:\n{tail(self.rm.log) if self.rm else ''}\n"
                f"serve log:\n{tail(self.root / 'serve.log')}")

    # ---------------------------------------------------------------- queries

    def rest(self, path: str) -> dict:
        url = f"http://127.0.0.1:{self.ports['rm_web']}/ws/v1/cluster/{path}"
        req = urllib.request.Request(url, headers={"Accept": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def apps(self, states: str = "") -> list[dict]:
        q = f"apps?states={states}" if states else "apps"
        return (self.rest(q).get("apps") or {}).get("app", []) or []

    def app(self, app_id: str) -> dict:
        return self.rest(f"apps/{app_id}")["app"]

    def core_status(self) -> dict | None:
        return self.status_json("")

    def status_json(self, path: str) -> dict | None:
        """A page of `yarn-drf serve`'s status server ("": the core's state), or None while it is down."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ports['status']}/{path}", timeout=2) as r:
                return json.loads(r.read())
        except OSError:
            return None

    def serve_pid(self) -> int | None:
        """The `yarn-drf serve` child of the RM (found by its unique status port)."""
        needle = f"--status-port\0{self.ports['status']}".encode()
        for p in Path("/proc").iterdir():
            if p.name.isdigit():
                try:
                    if needle in (p / "cmdline").read_bytes():
                        return int(p.name)
                except OSError:
                    continue
        return None

    # ---------------------------------------------------------------- applications

    def dshell(self, queue: str, containers: int, resources: str, *, user: str | None = None,
               command: str = "sleep 600", name: str = "dshell", label: str | None = None) -> subprocess.Popen:
        """Submits a distributed-shell app with the real dshell Client (runs until the app ends).
        `label`: the app's node label expression (its AM's and its containers')."""
        env = {**os.environ, "JAVA_HOME": java_home()}
        if user:
            env["HADOOP_USER_NAME"] = user
        cp = os.pathsep.join([str(self.client_conf), *maven_classpath()])
        cmd = ["java", "-Xmx256m", *jvm_flags(self.home), "-cp", cp,
               "org.apache.hadoop.yarn.applications.distributedshell.Client",
               "-jar", dshell_jar(), "-appname", name, "-queue", queue,
               "-shell_command", command, "-num_containers", str(containers),
               "-container_resources", resources, "-master_memory", "256", "-master_vcores", "1",
               "-timeout", "900000", *(["-node_label_expression", label] if label is not None else [])]
        log = open(self.root / f"client-{name}.log", "ab")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.clients.append(proc)
        return proc

    def cli(self, main: str, *args: str, user: str | None = None, timeout: float = 120,
            classpath: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        """Runs a Hadoop command-line tool (the class `yarn`/`mapred` would run) against this
        cluster; `classpath`: more entries, ahead of Hadoop's (a test tool's classes)."""
        return subprocess.run(self.cli_command(main, classpath) + list(args), capture_output=True,
                              text=True, env=self.cli_env(user), timeout=timeout)

    def cli_command(self, main: str, classpath: tuple[str, ...] = ()) -> list[str]:
        """The java command line of a command-line tool's class (`cli`), without its arguments."""
        cp = os.pathsep.join([str(self.client_conf), *classpath, *maven_classpath()])
        return ["java", "-Xmx256m", *jvm_flags(self.home), "-cp", cp, main]

    def cli_env(self, user: str | None = None) -> dict[str, str]:
        env = {**os.environ, "JAVA_HOME": java_home()}
        if user:
            env["HADOOP_USER_NAME"] = user
        return env

    def yarn(self, sub: str, *args: str, user: str | None = None) -> subprocess.CompletedProcess:
        """`yarn application|queue|rmadmin ...` as bin/yarn runs them."""
        if sub == "application":
            return self.cli("org.apache.hadoop.yarn.client.cli.ApplicationCLI", "application", *args, user=user)
        if sub == "queue":
            return self.cli("org.apache.hadoop.yarn.client.cli.QueueCLI", *args, user=user)
        if sub == "rmadmin":
            return self.cli("org.apache.hadoop.yarn.client.cli.RMAdminCLI", *args, user=user)
        raise ValueError(sub)

    def app_named(self, name: str) -> dict | None:
        for a in self.apps():
            if a.get("name") == name:
                return a
        return None


def java_home() -> str:
    java = Path(shutil.which("java")).resolve()
    return str(java.parents[1])


def tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
