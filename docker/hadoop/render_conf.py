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
ACLs as the yarn-drf scheduler reading the same file.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from xml.sax.saxutils import escape

from secure_conf import krb5_conf, secure_files, status_token_option

CAPACITY_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
HADOOP_HOME = "/opt/hadoop"
SHARED = "/shared"  # a volume every container mounts at the same path: the cluster's file system


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
        # No HDFS: a volume mounted at the same path in every container is the shared file system
        # (staging of jobs, distributed-shell jars, localization).
        "fs.defaultFS": "file:///",
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
        # Every NodeManager runs on the same host: node names must carry the port to be distinct.
        "yarn.scheduler.include-port-in-node-name": "true",
        # yarn-drf's shim (read only when it is the scheduler): the queue YAML and the loopback
        # port of the Python scheduler it starts as its child.
        "yarn-drf.queues.file": env("QUEUES_YAML", "/etc/yarn-drf/queues.yaml"),
        "yarn-drf.bridge.port": str(env_int("YARN_DRF_BRIDGE_PORT", 25334)),
        # The core's state as JSON on 127.0.0.1:YARN_DRF_STATUS_PORT (0: off).
        "yarn-drf.serve.command": "yarn-drf serve" + (
            f" --status-port {env_int('YARN_DRF_STATUS_PORT', 0)}" if env_int("YARN_DRF_STATUS_PORT", 0) else ""),
        # The RM web UI's Scheduler page for yarn-drf (the queue tree and the dashboard's address).
        "yarn.http.rmwebapp.scheduler.page.class": "org.yarndrf.shim.web.SchedulerPage",
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


def capacity_scheduler(queues_yaml: Path) -> dict[str, str]:
    """capacity-scheduler.xml for the queues of the yarn-drf YAML (weights, submit/admin ACLs)."""
    import yaml  # Debian's python3-yaml in the image

    try:
        doc = yaml.safe_load(queues_yaml.read_text())
    except (OSError, yaml.YAMLError) as err:
        sys.exit(f"render_conf: cannot read queue YAML {queues_yaml}: {err}")
    root = (doc or {}).get("queues", {}).get("root")
    if not isinstance(root, dict):
        sys.exit(f"render_conf: {queues_yaml}: queues.root: missing or not a mapping")
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
            weight = spec.get("weight", 1)
            if isinstance(weight, dict):  # per-resource weights: CapacityScheduler has one number
                weight = max(weight.values())
            props[f"{key}.capacity"] = f"{float(weight):g}w"
        children = spec.get("children") or {}
        if children:
            props[f"{key}.queues"] = ",".join(children)
            for name, child in children.items():
                visit(f"{path}.{name}", child or {}, False)

    visit("root", root, True)
    return props


def overrides() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for name, value in os.environ.items():
        head, sep, prop = name.partition(".XML_")
        if sep and prop:
            out.setdefault(f"{head.lower()}.xml", {})[prop] = value
    return out


def write_xml(path: Path, props: dict[str, str]) -> None:
    lines = ['<?xml version="1.0"?>', "<!-- written by render_conf.py at container start -->", "<configuration>"]
    for key, value in props.items():
        lines.append(f"  <property><name>{escape(key)}</name><value>{escape(str(value))}</value></property>")
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
    files["yarn-site.xml"]["yarn-drf.serve.command"] += status_token_option(env)


def main() -> int:
    conf_dir = Path(env("HADOOP_CONF_DIR", f"{HADOOP_HOME}/etc/hadoop"))
    conf_dir.mkdir(parents=True, exist_ok=True)
    files = site_files()
    if files["yarn-site.xml"]["yarn.resourcemanager.scheduler.class"] == CAPACITY_SCHEDULER:
        queues = Path(env("QUEUES_YAML", "/etc/yarn-drf/queues.yaml"))
        if queues.is_file():
            files["capacity-scheduler.xml"] = capacity_scheduler(queues)
    add_security(files, conf_dir)
    for fname, props in overrides().items():
        files.setdefault(fname, {}).update(props)
    for fname, props in files.items():
        write_xml(conf_dir / fname, props)
    return 0


if __name__ == "__main__":
    sys.exit(main())
