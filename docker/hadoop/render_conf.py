#!/usr/bin/env python3
"""Writes the Hadoop configuration of one container from its environment, at container start.

One image serves the ResourceManager, NodeManagers of any shape and clients: resources, ports and
the scheduler class come from environment variables (documented in docker/DOCKER.md), so three
NodeManagers of different shapes run on one host with host networking.

Besides the named variables, any `FILE.XML_property=value` variable (the apache/hadoop image
convention, e.g. `YARN-SITE.XML_yarn.nodemanager.delete.debug-delay-sec=600`) sets a property in
that file, last word wins.

The secure variant (Kerberos, service authorization, the status server's token) is in
secure_conf.py and applies when its environment variables are set.

With the stock CapacityScheduler, capacity-scheduler.xml is derived from the queue YAML (weights
become weight-mode capacities, ACLs carry over), so the baseline cluster has the same queues and
ACLs as the yarn-drf scheduler reading the same file; with FairScheduler, its allocation file
(weights, ACLs, DRF).

With HDFS_NAMENODE set the default file system is that HDFS (hdfs-site.xml: the NameNode, and the
DataNode of the container's host NM_HOST); with CLUSTER_HOSTS each NodeManager host has a name
(and loopback address) of its own and a rack (Hadoop's TableMapping), so YARN node names, HDFS
block locations and MapReduce's locality asks name the same hosts.

With RM_HA_IDS set (e.g. `rm1,rm2`) the configuration is that of a ResourceManager HA cluster
(`ha_settings`): per-RM-id addresses, ZooKeeper for the state store and the embedded leader
election, one yarn-site.xml for every RM (each RM container names its id on the command line, see
entrypoint.sh), and the RMs reading yarn-site.xml, core-site.xml, resource-types.xml, the queue file
and capacity-scheduler.xml from one store on the shared volume (FileSystemBasedConfigurationProvider).
`render_conf.py publish-conf` writes that store.

With ROUTER_CLIENTRM_PORT set the container is part of a YARN Federation (federation_conf.py): a
sub-cluster's RM or NodeManager (FEDERATION_SUBCLUSTER_ID), the Router (role `router`), or a client
of the Router.

Usage: render_conf.py [ROLE]   (the entrypoint's role: resourcemanager, nodemanager, publish-conf...)
"""
from __future__ import annotations

import os
import socket
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

from federation_conf import NODEMANAGER_FINAL, federation_files, resource_profiles
from secure_conf import krb5_conf, secure_files, status_token_option

CAPACITY_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
FAIR_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
HADOOP_HOME = "/opt/hadoop"
SHARED = "/shared"  # a volume every container mounts at the same path: the cluster's file system
FS_CONFIGURATION_PROVIDER = "org.apache.hadoop.yarn.FileSystemBasedConfigurationProvider"
ZK_STATE_STORE = "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore"
# Ports of the i-th RM id of an HA cluster (0-based) unless set per id: rm1 gets the single RM's
# defaults, every further RM the same plus 10,000 (yarn-drf's loopback ports plus 10 per RM).
RM_PORT_DEFAULTS = {"RM_RPC_PORT": 8032, "RM_SCHEDULER_PORT": 8030, "RM_TRACKER_PORT": 8031,
                    "RM_ADMIN_PORT": 8033, "RM_WEB_PORT": 8088}
YARN_DRF_PORT_DEFAULTS = {"YARN_DRF_BRIDGE_PORT": 25334, "YARN_DRF_STATUS_PORT": 25335}
# Roles that write the RMs' view of an HA cluster (the store is what the RMs read).
RM_ROLES = ("resourcemanager", "publish-conf")
# Files the RMs of an HA cluster read from the shared store over their local conf dir.
STORE_FILES = ("core-site.xml", "yarn-site.xml", "resource-types.xml", "capacity-scheduler.xml")


def env(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def env_int(name: str, default: int) -> int:
    raw = env(name, str(default))
    try:
        value = int(raw)
    except ValueError:
        sys.exit(f"render_conf: environment variable {name}={raw!r} is not an integer")
    if value < 0:
        sys.exit(f"render_conf: environment variable {name}={raw!r} must not be negative")
    return value


def site_files() -> dict[str, dict[str, str]]:
    rm = env("RM_HOST", "127.0.0.1")
    rm_ports = {
        "yarn.resourcemanager.address": env_int("RM_RPC_PORT", 8032),
        "yarn.resourcemanager.scheduler.address": env_int("RM_SCHEDULER_PORT", 8030),
        "yarn.resourcemanager.resource-tracker.address": env_int("RM_TRACKER_PORT", 8031),
        "yarn.resourcemanager.admin.address": env_int("RM_ADMIN_PORT", 8033),
        "yarn.resourcemanager.webapp.address": env_int("RM_WEB_PORT", 8088),
    }
    nm = env("NM_HOST", "127.0.0.1")
    classpath = f"{HADOOP_HOME}/etc/hadoop,{HADOOP_HOME}/lib/*"
    user = env("HADOOP_OS_USER", "hadoop")
    core = {
        # Without HDFS (the default) a volume mounted at the same path in every container is the
        # shared file system (staging of jobs, distributed-shell jars, localization).
        "fs.defaultFS": f"hdfs://{namenode()}" if namenode() else "file:///",
        "hadoop.tmp.dir": "/tmp/hadoop-${user.name}",
        "hadoop.security.authentication": "simple",
        # Web UI and REST requests (127.0.0.1 only) act as this user; the default "dr.who" may not
        # see app details (usage, containers) with ACLs on.
        "hadoop.http.staticuser.user": env("HADOOP_HTTP_USER", user),
    }
    yarn = {
        "yarn.resourcemanager.hostname": rm,
        **{key: f"{rm}:{port}" for key, port in rm_ports.items()},
        "yarn.resourcemanager.scheduler.class": env("YARN_SCHEDULER_CLASS", CAPACITY_SCHEDULER),
        # Every NodeManager runs on the same host: node names must carry the port to be distinct,
        # unless each has a host name of its own (CLUSTER_HOSTS, hdfs_settings).
        "yarn.scheduler.include-port-in-node-name": "false" if cluster_hosts() else "true",
        # yarn-drf's shim (read only when it is the scheduler): the queue YAML and the loopback
        # port of the Python scheduler it starts as its child.
        "yarn-drf.queues.file": env("QUEUES_YAML", "/etc/yarn-drf/queues.yaml"),
        "yarn-drf.bridge.port": str(env_int("YARN_DRF_BRIDGE_PORT", 25334)),
        # The core's state as JSON on 127.0.0.1:YARN_DRF_STATUS_PORT (0: off).
        "yarn-drf.serve.command": "yarn-drf serve" + (
            f" --status-port {env_int('YARN_DRF_STATUS_PORT', 0)}" if env_int("YARN_DRF_STATUS_PORT", 0) else ""),
        # The RM web UI's Scheduler page for yarn-drf (the queue tree and the dashboard's address).
        "yarn.http.rmwebapp.scheduler.page.class": "org.yarndrf.shim.web.SchedulerPage",
        # /ws/v1/cluster/scheduler for yarn-drf (YARN's own answer for its three schedulers).
        "yarn.webapp.custom.webservice.class": "org.yarndrf.shim.web.YarnDrfWebServices",
        "yarn.acl.enable": "true",
        "yarn.admin.acl": env("YARN_ADMIN_ACL", user),
        "yarn.scheduler.minimum-allocation-mb": "128",
        "yarn.scheduler.maximum-allocation-mb": str(env_int("YARN_MAX_ALLOCATION_MB", 16384)),
        "yarn.scheduler.minimum-allocation-vcores": "1",
        "yarn.scheduler.maximum-allocation-vcores": str(env_int("YARN_MAX_ALLOCATION_VCORES", 16)),
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": str(env_int("NM_HEARTBEAT_MS", 500)),
        # Work-preserving restart: apps and containers survive a restart of the RM container.
        "yarn.resourcemanager.recovery.enabled": env("RM_RECOVERY", "true"),
        "yarn.resourcemanager.work-preserving-recovery.enabled": "true",
        "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms": str(env_int("RM_RECOVERY_WAIT_MS", 5000)),
        "yarn.resourcemanager.store.class":
            "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore",
        "yarn.resourcemanager.fs.state-store.uri": "file:///var/lib/hadoop/rm-state",
        # NodeManagers and AMs reconnect within seconds after an RM restart (default 30 s).
        "yarn.resourcemanager.connect.retry-interval.ms": "1000",
        "yarn.resourcemanager.connect.max-wait.ms": "900000",
        "yarn.client.nodemanager-connect.retry-interval-ms": "1000",
        # NodeManager: shape and ports from the environment.
        "yarn.nodemanager.hostname": nm,
        "yarn.nodemanager.address": f"{nm}:{env_int('NM_RPC_PORT', 45454)}",
        "yarn.nodemanager.localizer.address": f"{nm}:{env_int('NM_LOCALIZER_PORT', 8040)}",
        "yarn.nodemanager.webapp.address": f"{nm}:{env_int('NM_WEB_PORT', 8042)}",
        "yarn.nodemanager.resource.memory-mb": str(env_int("NM_MEMORY_MB", 8192)),
        "yarn.nodemanager.resource.cpu-vcores": str(env_int("NM_VCORES", 8)),
        "yarn.nodemanager.resource.detect-hardware-capabilities": "false",
        "yarn.nodemanager.pmem-check-enabled": "false",
        "yarn.nodemanager.vmem-check-enabled": "false",
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
        "yarn.nodemanager.aux-services": "mapreduce_shuffle",
        "yarn.nodemanager.aux-services.mapreduce_shuffle.class": "org.apache.hadoop.mapred.ShuffleHandler",
        "yarn.nodemanager.env-whitelist":
            "JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,HADOOP_YARN_HOME,HADOOP_MAPRED_HOME,LANG",
        "yarn.nodemanager.delete.debug-delay-sec": "0",
        "yarn.application.classpath": classpath,
        "yarn.log-aggregation-enable": "false",
    }
    mapred = {
        "mapreduce.framework.name": "yarn",
        "mapreduce.application.classpath": classpath,
        "yarn.app.mapreduce.am.staging-dir": f"{SHARED}/staging",
        "yarn.app.mapreduce.am.env": f"HADOOP_MAPRED_HOME={HADOOP_HOME}",
        "mapreduce.map.env": f"HADOOP_MAPRED_HOME={HADOOP_HOME}",
        "mapreduce.reduce.env": f"HADOOP_MAPRED_HOME={HADOOP_HOME}",
        "yarn.app.mapreduce.am.resource.mb": "512",
        "yarn.app.mapreduce.am.command-opts": "-Xmx384m",
        "mapreduce.map.memory.mb": "256",
        "mapreduce.reduce.memory.mb": "256",
        "mapreduce.map.java.opts": "-Xmx200m",
        "mapreduce.reduce.java.opts": "-Xmx200m",
        "mapreduce.shuffle.port": str(env_int("NM_SHUFFLE_PORT", 13562)),
        "mapreduce.job.reduce.slowstart.completedmaps": "1.0",
    }
    gpu_name = env("GPU_MEM_RESOURCE", "gpu-mem")
    resource_types = {
        "yarn.resource-types": gpu_name,
        f"yarn.resource-types.{gpu_name}.units": "Mi",
    }
    # With its unit: a bare number is read as unit-less and converted to Mi, i.e. divided by 2^20.
    node_resources = {f"yarn.nodemanager.resource-type.{gpu_name}": f"{env_int('NM_GPU_MEM', 0)}Mi"}
    return {
        "core-site.xml": core,
        "yarn-site.xml": yarn,
        "mapred-site.xml": mapred,
        "resource-types.xml": resource_types,
        "node-resources.xml": node_resources,
    }


def namenode() -> str:
    """The HDFS NameNode's RPC address (HDFS_NAMENODE, host:port), or "" for no HDFS."""
    return env("HDFS_NAMENODE", "")


def cluster_hosts() -> dict[str, str]:
    """CLUSTER_HOSTS: the NodeManager (and DataNode) hosts by name with their racks,
    `nm-cpu=/rack-a,nm-gpu=/rack-b`; {} when the NodeManagers share one host name."""
    hosts: dict[str, str] = {}
    for item in filter(None, (i.strip() for i in env("CLUSTER_HOSTS", "").split(","))):
        name, sep, rack = item.partition("=")
        if not (sep and name.strip() and rack.strip().startswith("/")):
            sys.exit(f"render_conf: CLUSTER_HOSTS item {item!r} is not NAME=/RACK")
        hosts[name.strip()] = rack.strip()
    return hosts


def topology_table(hosts: dict[str, str]) -> str:
    """Hadoop's TableMapping file for the hosts' racks. Hadoop resolves a name to its address before
    it looks it up (CachedDNSToSwitchMapping), so each host is listed by name and by address."""
    lines = []
    for name, rack in hosts.items():
        try:
            address = socket.gethostbyname(name)
        except OSError as err:
            sys.exit(f"render_conf: CLUSTER_HOSTS host {name!r} does not resolve ({err}): "
                     "give every container its address (docker --add-host)")
        lines += [f"{name} {rack}", f"{address} {rack}"]
    return "\n".join(lines) + "\n"


def hdfs_settings() -> dict[str, str]:
    """hdfs-site.xml (HDFS_NAMENODE set): the NameNode's and this host's DataNode's addresses.

    A DataNode reports the host name of its NodeManager (NM_HOST), so HDFS block locations name
    YARN nodes and a MapReduce split's hosts become node-local asks; clients reach DataNodes by
    that name. Every server of a host binds that host's (loopback) address."""
    host = env("NM_HOST", "127.0.0.1")
    return {
        "dfs.namenode.rpc-address": namenode(),
        "dfs.namenode.http-address": f"127.0.0.1:{env_int('NN_HTTP_PORT', 9870)}",
        "dfs.namenode.name.dir": "file:///var/lib/hadoop/dfs/name",
        "dfs.datanode.data.dir": "file:///var/lib/hadoop/dfs/data",
        "dfs.replication": str(env_int("HDFS_REPLICATION", 1)),
        # A fresh NameNode has no blocks to wait for: leave safe mode at once (default 30 s).
        "dfs.namenode.safemode.extension": "0",
        "dfs.datanode.hostname": host,
        "dfs.datanode.address": f"{host}:{env_int('DN_PORT', 9866)}",
        "dfs.datanode.http.address": f"{host}:{env_int('DN_HTTP_PORT', 9864)}",
        "dfs.datanode.ipc.address": f"{host}:{env_int('DN_IPC_PORT', 9867)}",
        "dfs.client.use.datanode.hostname": "true",
        "dfs.datanode.use.datanode.hostname": "true",
    }


def topology_settings(conf_dir: Path, hosts: dict[str, str]) -> dict[str, str]:
    """core-site.xml's rack mapping of CLUSTER_HOSTS (its table written beside it), read alike by
    the RM, the AMs and HDFS."""
    table = conf_dir / "topology.table"
    table.write_text(topology_table(hosts))
    return {
        "net.topology.node.switch.mapping.impl": "org.apache.hadoop.net.TableMapping",
        "net.topology.table.file.name": str(table),
    }


def ha_ids() -> list[str]:
    """The RM ids of an HA cluster (RM_HA_IDS), or [] for a single ResourceManager."""
    return [i.strip() for i in env("RM_HA_IDS", "").split(",") if i.strip()]


def ha_port(name: str, rm_id: str, index: int) -> int:
    """NAME_<RMID> (e.g. RM_WEB_PORT_RM2), else the default of the index-th RM id."""
    if name in RM_PORT_DEFAULTS:
        default = RM_PORT_DEFAULTS[name] + 10_000 * index
    else:
        default = YARN_DRF_PORT_DEFAULTS[name] + 10 * index
    return env_int(f"{name}_{rm_id.upper()}", default)


def conf_store() -> str:
    """The FileSystemBasedConfigurationProvider store of an HA cluster, on the shared volume."""
    return env("RM_CONF_STORE", f"{SHARED}/conf")


def ha_settings(ids: list[str]) -> dict[str, dict[str, str]]:
    """ResourceManager HA: what replaces the single RM's addresses, store and queue file.

    Every RM and every client reads the same keys: nothing here depends on which RM the container
    runs (its id comes from the command line), so both RMs load one identical yarn-site.xml.
    yarn-drf's own keys are given per RM id as Hadoop gives addresses (`yarn-drf.bridge.port.rm1`):
    two RMs on one host must not share the core's loopback ports."""
    rm = env("RM_HOST", "127.0.0.1")
    yarn = {
        "yarn.resourcemanager.ha.enabled": "true",
        "yarn.resourcemanager.ha.rm-ids": ",".join(ids),
        "yarn.resourcemanager.cluster-id": env("RM_HA_CLUSTER_ID", "yarn-drf"),
        "yarn.resourcemanager.ha.automatic-failover.enabled": env("RM_HA_AUTO_FAILOVER", "true"),
        "yarn.resourcemanager.ha.automatic-failover.embedded": "true",
        "yarn.resourcemanager.store.class": ZK_STATE_STORE,
        "yarn.resourcemanager.recovery.enabled": "true",
        # Until this long after it became active an RM allows asks up to the configured maximum;
        # then only up to the largest registered node's. An AM that resyncs before the only node
        # with gpu-mem has re-registered would have its gpu-mem asks refused (and a distributed
        # shell AM fails): in HA the NodeManagers need the time to fail over. Hadoop's default.
        "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms": str(env_int("RM_RECOVERY_WAIT_MS", 10_000)),
        # A name in the RMs' configuration store (rm_store_settings), as capacity-scheduler.xml is.
        "yarn-drf.queues.file": "queues.yaml",
        # NodeManagers, AMs and clients try the next RM within a second or two (exponential backoff
        # from the base to the max); an outage is as long as ZooKeeper's session timeout.
        "yarn.client.failover-sleep-base-ms": "500",
        "yarn.client.failover-sleep-max-ms": "2000",
    }
    for index, rm_id in enumerate(ids):
        yarn[f"yarn.resourcemanager.hostname.{rm_id}"] = rm
        for name, key in (("RM_RPC_PORT", "address"), ("RM_SCHEDULER_PORT", "scheduler.address"),
                          ("RM_TRACKER_PORT", "resource-tracker.address"), ("RM_ADMIN_PORT", "admin.address"),
                          ("RM_WEB_PORT", "webapp.address")):
            yarn[f"yarn.resourcemanager.{key}.{rm_id}"] = f"{rm}:{ha_port(name, rm_id, index)}"
        yarn[f"yarn-drf.bridge.port.{rm_id}"] = str(ha_port("YARN_DRF_BRIDGE_PORT", rm_id, index))
        status = ha_port("YARN_DRF_STATUS_PORT", rm_id, index)
        yarn[f"yarn-drf.serve.command.{rm_id}"] = "yarn-drf serve" + (f" --status-port {status}" if status else "")
    core = {
        "hadoop.zk.address": env("ZK_ADDRESS", "127.0.0.1:2181"),
        "hadoop.zk.timeout-ms": str(env_int("ZK_SESSION_TIMEOUT_MS", 10_000)),
    }
    return {"yarn-site.xml": yarn, "core-site.xml": core}


def rm_store_settings() -> dict[str, str]:
    """The RMs (only they: YARN's resource-type loader reads node-resources.xml through the same
    provider, and that file differs per node) read their files from the store on the shared volume."""
    return {
        "yarn.resourcemanager.configuration.provider-class": FS_CONFIGURATION_PROVIDER,
        "yarn.resourcemanager.configuration.file-system-based-store": conf_store(),
    }


def apply_ha(files: dict[str, dict[str, str]], ids: list[str], role: str) -> None:
    """Turns the single-RM configuration into the HA one: the single RM's address, state store and
    port keys go (each RM id has its own), the HA keys come in."""
    yarn = files["yarn-site.xml"]
    for key in [k for k in yarn if k.startswith("yarn.resourcemanager.") and k.endswith(".address")]:
        del yarn[key]
    for key in ("yarn.resourcemanager.hostname", "yarn.resourcemanager.fs.state-store.uri",
                "yarn-drf.bridge.port", "yarn-drf.serve.command"):
        yarn.pop(key, None)
    for fname, props in ha_settings(ids).items():
        files[fname].update(props)
    if role in RM_ROLES:
        yarn.update(rm_store_settings())


def publish(conf_dir: Path, queues: Path, store: Path) -> None:
    """Writes the HA cluster's shared configuration store: the rendered cluster-wide files and the
    queue YAML. Each file is replaced atomically (written beside it, then renamed), so an RM never
    reads half a file."""
    store.mkdir(parents=True, exist_ok=True)
    sources = [conf_dir / name for name in STORE_FILES if (conf_dir / name).is_file()]
    if not queues.is_file():
        sys.exit(f"render_conf publish-conf: the queue YAML {queues} (QUEUES_YAML) does not exist")
    for src, name in [*((s, s.name) for s in sources), (queues, "queues.yaml")]:
        with tempfile.NamedTemporaryFile("wb", dir=store, prefix=f".{name}.", delete=False) as tmp:
            tmp.write(src.read_bytes())
        os.chmod(tmp.name, 0o644)
        os.replace(tmp.name, store / name)
        print(f"render_conf: published {store / name}")


def queue_file(queues_yaml: Path) -> dict:
    """The yarn-drf queue YAML, with its `queues.root` checked to be a mapping."""
    import yaml  # Debian's python3-yaml in the image

    try:
        doc = yaml.safe_load(queues_yaml.read_text())
    except (OSError, yaml.YAMLError) as err:
        sys.exit(f"render_conf: cannot read queue YAML {queues_yaml}: {err}")
    root = (doc or {}).get("queues", {}).get("root")
    if not isinstance(root, dict):
        sys.exit(f"render_conf: {queues_yaml}: queues.root: missing or not a mapping")
    return doc


def queue_root(queues_yaml: Path) -> dict:
    """The `queues.root` mapping of the yarn-drf YAML."""
    return queue_file(queues_yaml)["queues"]["root"]


def queue_weight(spec: dict) -> float:
    """A queue's one weight (per-resource weights: the largest; Capacity/FairScheduler have one)."""
    weight = spec.get("weight", 1)
    return float(max(weight.values()) if isinstance(weight, dict) else weight)


def fair_allocations(queues_yaml: Path) -> str:
    """FairScheduler's allocation file for the queues of the yarn-drf YAML: weights, submit/admin
    ACLs, DRF in every queue (FairScheduler's own DRF, as benchmarks/sls compares it)."""
    def visit(name: str, spec: dict, is_root: bool, depth: int) -> list[str]:
        pad = "  " * depth
        # A parent that placement fills (`children: {}`): FairScheduler reads a queue without
        # children as a leaf unless its type says otherwise.
        kind = ' type="parent"' if "children" in spec and not spec["children"] else ""
        lines = [f'{pad}<queue name="{escape(name)}"{kind}>']
        if not is_root:
            lines.append(f"{pad}  <weight>{queue_weight(spec):g}</weight>")
        # As in capacity_scheduler: root's default ACL is "*", so it is set, " " for nobody.
        lines.append(f"{pad}  <aclSubmitApps>{escape(spec.get('submit-acl', ' '))}</aclSubmitApps>")
        lines.append(f"{pad}  <aclAdministerApps>{escape(spec.get('admin-acl', ' '))}</aclAdministerApps>")
        for child, child_spec in (spec.get("children") or {}).items():
            lines += visit(child, child_spec or {}, False, depth + 1)
        return lines + [f"{pad}</queue>"]

    body = visit("root", queue_root(queues_yaml), True, 1)
    return "\n".join(['<?xml version="1.0"?>', "<!-- written by render_conf.py at container start -->",
                      "<allocations>", "  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>",
                      *body, "</allocations>"]) + "\n"


def capacity_scheduler(queues_yaml: Path) -> dict[str, str]:
    """capacity-scheduler.xml for the queues of the yarn-drf YAML: weights, submit/admin ACLs, user
    weights of `user-limits`, and the `user` placement rule with `create` (CapacityScheduler's
    queue mapping, used when an app names no queue, into a parent that creates its leaves)."""
    doc = queue_file(queues_yaml)
    props = {
        "yarn.scheduler.capacity.resource-calculator":
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
    }

    def visit(path: str, spec: dict, is_root: bool) -> None:
        key = f"yarn.scheduler.capacity.{path}"
        # YARN ACLs are inherited downwards and root's default is "*": without an explicit root ACL
        # every queue would accept everyone. " " means nobody.
        props[f"{key}.acl_submit_applications"] = spec.get("submit-acl", " ")
        props[f"{key}.acl_administer_queue"] = spec.get("admin-acl", " ")
        if not is_root:
            props[f"{key}.capacity"] = f"{queue_weight(spec):g}w"
        children = spec.get("children") or {}
        if "children" in spec and not children:
            # A parent that placement fills (`children: {}`); without this CapacityScheduler reads a
            # queue without children as a leaf.
            props[f"{key}.auto-queue-creation-v2.enabled"] = "true"
        user_weights = {user: float(settings["weight"])
                        for user, settings in ((spec.get("user-limits") or {}).get("users") or {}).items()
                        if "weight" in (settings or {})}
        for user, weight in user_weights.items():
            props[f"{key}.user-settings.{user}.weight"] = f"{weight:g}"
        if user_weights and max(user_weights.values()) > 1:
            # CapacityScheduler refuses a user weight above 100 / minimum-user-limit-percent.
            props[f"{key}.minimum-user-limit-percent"] = str(max(1, int(100 / max(user_weights.values()))))
        if not children and not is_root:
            # One user may use what the leaf can borrow from idle queues, as under yarn-drf (and as
            # in the SLS comparison, benchmarks/sls/confgen.py); the default 1 caps a user at the
            # leaf's capacity.
            props[f"{key}.user-limit-factor"] = "100"
        if children:
            props[f"{key}.queues"] = ",".join(children)
            for name, child in children.items():
                visit(f"{path}.{name}", child or {}, False)

    visit("root", doc["queues"]["root"], True)
    created = [f"u:%user:{rule.get('parent', 'root')}.%user" for rule in doc.get("placement") or []
               if isinstance(rule, dict) and rule.get("rule") == "user" and rule.get("create")]
    if created:
        props["yarn.scheduler.capacity.queue-mappings"] = ",".join(created)
    return props


def overrides() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, value in os.environ.items():
        head, sep, prop = name.partition(".XML_")
        if sep and prop:
            out.setdefault(f"{head.lower()}.xml", {})[prop] = value
    return out


def write_xml(path: Path, props: dict[str, str], final: frozenset[str] = frozenset()) -> None:
    """Hadoop's configuration file of `props`; the keys in `final` cannot be overridden by a
    configuration loaded after it."""
    lines = ['<?xml version="1.0"?>', "<!-- written by render_conf.py at container start -->", "<configuration>"]
    for key, value in props.items():
        mark = "<final>true</final>" if key in final else ""
        lines.append(f"  <property><name>{escape(key)}</name><value>{escape(str(value))}</value>{mark}</property>")
    lines.append("</configuration>")
    path.write_text("\n".join(lines) + "\n")


def add_security(files: dict[str, dict[str, str]], conf_dir: Path) -> None:
    """The secure variant's settings (secure_conf.py): Kerberos and service authorization when
    KRB5_REALM is set, the status server's token when YARN_DRF_STATUS_TOKEN_FILE is."""
    env = dict(os.environ)
    for fname, props in secure_files(env).items():
        files.setdefault(fname, {}).update(props)
    krb5 = krb5_conf(env)
    if krb5 is not None:
        (conf_dir / "krb5.conf").write_text(krb5)
    yarn = files["yarn-site.xml"]
    # the single RM's command, or in an HA cluster each RM id's (yarn-drf.serve.command.rm1, ...)
    for key in [k for k in yarn if k == "yarn-drf.serve.command" or k.startswith("yarn-drf.serve.command.")]:
        yarn[key] += status_token_option(env)


def main(argv: list[str]) -> int:
    conf_dir = Path(env("HADOOP_CONF_DIR", f"{HADOOP_HOME}/etc/hadoop"))
    conf_dir.mkdir(parents=True, exist_ok=True)
    files = site_files()
    role = argv[1] if len(argv) > 1 else ""
    if ha_ids():
        apply_ha(files, ha_ids(), role)
    if env("ROUTER_CLIENTRM_PORT", ""):
        for fname, props in federation_files(env, env_int, role).items():
            files[fname].update(props)
        if role == "resourcemanager":
            (conf_dir / "resource-profiles.json").write_text(resource_profiles())
    scheduler = files["yarn-site.xml"]["yarn.resourcemanager.scheduler.class"]
    queues = Path(env("QUEUES_YAML", "/etc/yarn-drf/queues.yaml"))
    if scheduler == CAPACITY_SCHEDULER and queues.is_file():
        files["capacity-scheduler.xml"] = capacity_scheduler(queues)
    if scheduler == FAIR_SCHEDULER and queues.is_file():
        allocations = conf_dir / "fair-scheduler.xml"
        allocations.write_text(fair_allocations(queues))
        files["yarn-site.xml"]["yarn.scheduler.fair.allocation.file"] = str(allocations)
    if namenode():
        files["hdfs-site.xml"] = hdfs_settings()
    if cluster_hosts():
        files["core-site.xml"].update(topology_settings(conf_dir, cluster_hosts()))
    add_security(files, conf_dir)
    for fname, props in overrides().items():
        files.setdefault(fname, {}).update(props)
    federated_nm = bool(env("ROUTER_CLIENTRM_PORT", "")) and role == "nodemanager"
    for fname, props in files.items():
        write_xml(conf_dir / fname, props, NODEMANAGER_FINAL if federated_nm and fname == "yarn-site.xml" else frozenset())
    if role == "publish-conf":
        publish(conf_dir, Path(env("QUEUES_YAML", "/etc/yarn-drf/queues.yaml")), Path(conf_store()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
