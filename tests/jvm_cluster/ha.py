"""ResourceManager HA for the integration tests: a real ZooKeeper server (the 3.8 server on
Hadoop's classpath, as its own JVM) and two ResourceManagers with ZKRMStateStore, work-preserving
recovery and embedded automatic failover, each with its own yarn-drf core, ports, token and logs;
NodeManagers and clients configured with both. All on 127.0.0.1."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.jvm_cluster.cluster import Cluster, Daemon, jvm_flags, maven_classpath, shim_jar, tail
from tests.ports import free_port
from tests.waits import wait_for

RM_IDS = ("rm1", "rm2")
RM_PORTS = ("rm", "rm_sched", "rm_tracker", "rm_admin", "rm_web", "bridge", "status")
STATE_ZNODE = "/rmstore/ZKRMStateRoot/YarnDrfPreemptionState"  # (ZkRecordStore, with the default parent path)


class ZooKeeper:
    """A standalone ZooKeeper server on a free loopback port, its data under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = root / "zookeeper.log"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 120) -> None:
        data = self.root / "zookeeper"
        data.mkdir(parents=True, exist_ok=True)
        cfg = self.root / "zoo.cfg"
        # tickTime 1 s: sessions may be as short as 2 s, so a killed RM's leader lock goes soon.
        cfg.write_text(f"tickTime=1000\ndataDir={data}\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
                       "admin.enableServer=false\nmaxSessionTimeout=20000\n")
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(["java", "-Xmx256m", *jvm_flags(self.root / "home"), "-cp", ":".join(maven_classpath()),
                                      "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)],
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self.listens, "ZooKeeper to listen", budget_s=timeout, progress=lambda: self.log.stat().st_size,
                 poll_s=0.3, alive=self.assert_alive, describe=lambda: tail(self.log))

    def listens(self) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def assert_alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(f"ZooKeeper exited:\n{tail(self.log)}")

    def get(self, path: str, conf_dir: Path) -> str | None:
        """A znode's data as text (ZooKeeper's own CLI), or None if it has none."""
        cp = ":".join([str(conf_dir), *maven_classpath()])
        out = subprocess.run(["java", "-Xmx128m", *jvm_flags(self.root / "home"), "-cp", cp, "org.apache.zookeeper.ZooKeeperMain",
                              "-server", self.address, "get", path], capture_output=True, text=True, timeout=120)
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        return lines[-1] if lines else None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class HACluster(Cluster):
    """Two RMs (rm1 starts first and becomes active) sharing state in ZooKeeper. `rm` is the
    active one's daemon, `rest` and `status_json` ask the active one."""

    rms: dict[str, Daemon] = field(default_factory=dict)
    rm_ports: dict[str, dict[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.zk = ZooKeeper(self.root)
        self.rm_ports = {rid: {key: free_port() for key in RM_PORTS} for rid in RM_IDS}
        super().__post_init__()
        self.active_id = RM_IDS[0]
        self.ports.update(self.rm_ports[self.active_id])

    def common_props(self) -> dict[str, object]:
        props = {k: v for k, v in super().common_props().items() if not k.startswith("yarn.resourcemanager.")}
        props.update({
            "yarn.resourcemanager.ha.enabled": "true",
            "yarn.resourcemanager.ha.rm-ids": ",".join(RM_IDS),
            "yarn.resourcemanager.cluster-id": "yarn-drf-it",
            "hadoop.zk.address": self.zk.address,
            # NodeManagers and AMs look for the new active RM every half second, not every 30 s.
            "yarn.resourcemanager.connect.retry-interval.ms": 500,
            "yarn.client.failover-sleep-base-ms": 200,
            "yarn.client.failover-sleep-max-ms": 1000,
        })
        for rid, p in self.rm_ports.items():
            props.update({
                f"yarn.resourcemanager.hostname.{rid}": "127.0.0.1",
                f"yarn.resourcemanager.address.{rid}": f"127.0.0.1:{p['rm']}",
                f"yarn.resourcemanager.scheduler.address.{rid}": f"127.0.0.1:{p['rm_sched']}",
                f"yarn.resourcemanager.resource-tracker.address.{rid}": f"127.0.0.1:{p['rm_tracker']}",
                f"yarn.resourcemanager.admin.address.{rid}": f"127.0.0.1:{p['rm_admin']}",
                f"yarn.resourcemanager.webapp.address.{rid}": f"127.0.0.1:{p['rm_web']}",
            })
        return props

    def rm_props_of(self, rid: str) -> dict[str, object]:
        p = self.rm_ports[rid]
        props = {k: v for k, v in self.rm_props().items() if not k.startswith("yarn.resourcemanager.fs.")}
        props.update({
            "yarn.resourcemanager.ha.id": rid,
            "yarn.resourcemanager.store.class":
                "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
            # A killed RM's ZooKeeper session (and with it its leader lock) ends after 3 s.
            "yarn.resourcemanager.zk-timeout-ms": 3000,
            "yarn-drf.serve.command": f"{sys.executable} -m yarn_bridge.cli serve --status-port {p['status']}",
            "yarn-drf.serve.log": str(self.root / f"serve-{rid}.log"),
            "yarn-drf.bridge.port": p["bridge"],
        })
        return props

    def start_rm_id(self, rid: str) -> None:
        conf = self._conf_dir(rid, self.rm_props_of(rid))
        self.rms[rid] = self._java(rid, conf, "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
                                   [str(shim_jar())])

    def start(self) -> None:
        self.zk.start()
        self.start_rm_id(RM_IDS[0])
        self.rm = self.rms[RM_IDS[0]]
        self.wait_for(lambda: self.ha_state(RM_IDS[0]) == "ACTIVE", 180, "rm1 active")
        self.start_rm_id(RM_IDS[1])
        self.wait_for(lambda: self.ha_state(RM_IDS[1]) == "STANDBY", 180, "rm2 standby")
        self.start_nms()
        self.wait_for(lambda: len(self.rest("nodes").get("nodes", {}).get("node", []) or []) == self.nm_count
                      and self.core_status() is not None, 180, "NodeManagers registered and core up")

    def ha_state(self, rid: str) -> str | None:
        url = f"http://127.0.0.1:{self.rm_ports[rid]['rm_web']}/ws/v1/cluster/info"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}),
                                        timeout=5) as r:
                return json.loads(r.read())["clusterInfo"]["haState"]
        except (OSError, ValueError, KeyError):
            return None

    def kill_active(self) -> str:
        """SIGKILLs the active RM; returns the id of the one that takes over, once it is active."""
        dead = self.active_id
        self.rms[dead].stop(signal.SIGKILL)
        self.active_id = next(rid for rid in RM_IDS if rid != dead)
        self.rm = self.rms[self.active_id]
        self.ports.update(self.rm_ports[self.active_id])
        self.wait_for(lambda: self.ha_state(self.active_id) == "ACTIVE", 180, f"{self.active_id} active")
        return self.active_id

    def saved_state(self) -> dict | None:
        """The preemption state the active RM saved in ZooKeeper."""
        text = self.zk.get(STATE_ZNODE, self.client_conf)
        return json.loads(text) if text else None

    def stop(self) -> None:
        super().stop()
        for d in self.rms.values():
            d.stop()
        self.zk.stop()
