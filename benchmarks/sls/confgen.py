"""Site files for one SLS run, generated from a yarn-drf queue YAML.

The same queue tree becomes FairScheduler's allocation file (policy `drf`, the YAML's weights) and
CapacityScheduler's capacity-scheduler.xml (DominantResourceCalculator, capacities proportional to
the weights), so the three schedulers divide the cluster by the same weights. Only what all three
can express is translated; anything else is refused with the queue and field named.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from scheduler.config import QueueConfig, QueueSpec, load_config

# SLS's own Fair and Capacity wrappers with the benchmark's ask probe (benchmarks/sls/java);
# the scheduling is theirs, unchanged.
FAIR = "org.yarndrf.sls.ProbedFairScheduler"
CAPACITY = "org.yarndrf.sls.ProbedCapacityScheduler"
YARN_DRF = "org.yarndrf.sls.SlsYarnDrfScheduler"
SCHEDULERS = {"fair": FAIR, "capacity": CAPACITY, "yarn-drf": YARN_DRF}


class Untranslatable(ValueError):
    """A queue setting the Fair or Capacity configuration cannot express the same way."""


@dataclass(frozen=True)
class NodeShape:
    memory_mb: int
    vcores: int
    gpu_mem: int


def _props(props: dict[str, object]) -> str:
    body = "".join(f"  <property>\n    <name>{escape(k)}</name>\n    <value>{escape(str(v))}</value>\n"
                   f"  </property>\n" for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


def _weight(q: QueueSpec) -> float:
    if isinstance(q.weight, dict):
        raise Untranslatable(f"{q.path}: per-resource weights have no Fair/Capacity equivalent; "
                             "use one number")
    return q.weight


def _check(cfg: QueueConfig) -> None:
    for q in cfg.root.walk():
        _weight(q)
        if q.min:
            raise Untranslatable(f"{q.path}: min has no CapacityScheduler equivalent in weight terms")
        if q.max:
            raise Untranslatable(f"{q.path}: per-resource max is not translated; use a percentage")
        if q.parent and not q.children:
            raise Untranslatable(f"{q.path}: parent queues without children are not translated")


def _preempting(cfg: QueueConfig) -> bool:
    return cfg.preemption.enabled and not cfg.preemption.observe_only


def _fair_policy(q: QueueSpec) -> str:
    """Fair's policy of a queue: drf between queues; a leaf's is also its order among its apps."""
    return "fifo" if q.is_leaf and q.order == "fifo" else "drf"


def fair_allocation_xml(cfg: QueueConfig) -> str:
    """FairScheduler allocation file: every queue `drf` (a `fifo` leaf `fifo`), weights and max
    shares from the YAML."""
    _check(cfg)

    def queue(q: QueueSpec, indent: str) -> str:
        kind = ' type="parent"' if q.children else ""
        lines = [f'{indent}<queue name="{escape(q.name)}"{kind}>',
                 f"{indent}  <weight>{_weight(q)}</weight>",
                 f"{indent}  <schedulingPolicy>{_fair_policy(q)}</schedulingPolicy>"]
        if q.max_fraction is not None:
            lines.append(f"{indent}  <maxResources>{q.max_fraction * 100:g}%</maxResources>")
        if q.max_running_apps is not None:
            lines.append(f"{indent}  <maxRunningApps>{q.max_running_apps}</maxRunningApps>")
        lines += [queue(c, indent + "  ") for c in q.children]
        lines.append(f"{indent}</queue>")
        return "\n".join(lines)

    children = "\n".join(queue(c, "  ") for c in cfg.root.children)
    p = cfg.preemption
    # yarn-drf's starvation timeouts and dead zone (threshold x fair share) are Fair's own.
    preemption = (f"  <defaultFairSharePreemptionTimeout>{p.fair_share_timeout_s:g}"
                  "</defaultFairSharePreemptionTimeout>\n"
                  f"  <defaultFairSharePreemptionThreshold>{p.threshold:g}"
                  "</defaultFairSharePreemptionThreshold>\n"
                  f"  <defaultMinSharePreemptionTimeout>{p.min_share_timeout_s:g}"
                  "</defaultMinSharePreemptionTimeout>\n") if _preempting(cfg) else ""
    # AM shares are not limited: yarn-drf has no AM limit, so neither do the others.
    return ('<?xml version="1.0"?>\n<allocations>\n'
            "  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>\n"
            "  <queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>\n"
            f"{preemption}{children}\n"
            '  <queuePlacementPolicy>\n    <rule name="specified" create="false"/>\n'
            '    <rule name="reject"/>\n  </queuePlacementPolicy>\n'
            "</allocations>\n")


def _capacities(children: tuple[QueueSpec, ...]) -> list[float]:
    """Percentages proportional to the weights, summing to exactly 100 (CS checks the sum)."""
    total = sum(_weight(c) for c in children)
    shares = [round(100 * _weight(c) / total, 3) for c in children]
    shares[-1] = round(100 - sum(shares[:-1]), 3)
    return shares


def capacity_scheduler_xml(cfg: QueueConfig) -> str:
    """capacity-scheduler.xml: DRC, capacity in proportion to weight, elastic up to max."""
    _check(cfg)
    props: dict[str, object] = {
        "yarn.scheduler.capacity.resource-calculator":
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        # No AM limit, as for the other two.
        "yarn.scheduler.capacity.maximum-am-resource-percent": 1.0,
        "yarn.scheduler.capacity.maximum-applications": 100000,
        # Jobs carry no locality; do not wait for node-local offers.
        "yarn.scheduler.capacity.node-locality-delay": -1,
    }

    def queue(q: QueueSpec) -> None:
        key = f"yarn.scheduler.capacity.{q.path}"
        if q.children:
            props[f"{key}.queues"] = ",".join(c.name for c in q.children)
            for c, cap in zip(q.children, _capacities(q.children)):
                ck = f"yarn.scheduler.capacity.{c.path}"
                props[f"{ck}.capacity"] = cap
                props[f"{ck}.maximum-capacity"] = (
                    c.max_fraction * 100 if c.max_fraction is not None else 100)
                # One SLS user per queue may use the whole queue and grow to its maximum.
                props[f"{ck}.user-limit-factor"] = 100
                if c.max_running_apps is not None:
                    props[f"{ck}.maximum-applications"] = c.max_running_apps
                # A leaf orders its apps first in, first out, whatever its `order`: CS has no
                # dominant-share order among apps (its `fair` ordering weighs memory alone), so
                # `drf` leaves differ here from the other two (RESULTS.md, "Ask to allocation").
                if c.is_leaf:
                    props[f"{ck}.ordering-policy"] = "fifo"
            for c in q.children:
                queue(c)

    queue(cfg.root)
    return _props(props)


def resource_types_xml() -> str:
    return _props({"yarn.resource-types": "gpu-mem",
                   "yarn.resource-types.gpu-mem.units": "",
                   "yarn.resource-types.gpu-mem.minimum-allocation": 0})


def preemption_props(scheduler: str, cfg: QueueConfig) -> dict[str, object]:
    """yarn-site settings that give Fair and Capacity the YAML's `preemption:` section (off:
    no preemption). What has no counterpart is named here:
    - Fair: the starvation timeouts and threshold go in the allocation file; grace-s is
      waitTimeBeforeKill; Fair has no limit per round (it preempts a starved app's whole
      starvation at once).
    - Capacity: the policy has no starvation timeout (it preempts for any queue below its
      capacity with pending asks, every monitoring interval); grace-s is max_wait_before_kill,
      max-per-round is total_preemption_per_round; natural_termination_factor 1 takes a round's
      whole need at once, as yarn-drf does; max_ignored_over_capacity 0, as yarn-drf lets no
      victim queue stay above its target (its dead zone, `threshold`, is on the starved side)."""
    p = cfg.preemption
    on = _preempting(cfg)
    if scheduler == "fair":
        props: dict[str, object] = {"yarn.scheduler.fair.preemption": str(on).lower()}
        if on:
            props["yarn.scheduler.fair.waitTimeBeforeKill"] = int(p.grace_s * 1000)
        return props
    if scheduler == "capacity":
        # SLS forces the preemption monitor on for CapacityScheduler (for its own wrapper; the
        # probed one subclasses it, so the same is set here); without preemption it only observes.
        key = "yarn.resourcemanager.monitor.capacity.preemption."
        props = {
            "yarn.resourcemanager.scheduler.monitor.enable": "true",
            "yarn.resourcemanager.scheduler.monitor.policies": "org.apache.hadoop.yarn.server."
            "resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy",
            key + "observe_only": str(not on).lower(),
        }
        if on:
            props.update({key + "max_wait_before_kill": int(p.grace_s * 1000),
                          key + "total_preemption_per_round": p.max_per_round,
                          key + "natural_termination_factor": 1.0,
                          key + "max_ignored_over_capacity": 0.0})
        return props
    return {}


def yarn_site_xml(scheduler: str, conf_dir: Path, serve_command: str, queues_file: Path,
                  cfg: QueueConfig, yarn_drf_conf: dict[str, str] | None = None) -> str:
    props: dict[str, object] = {
        "yarn.resourcemanager.scheduler.class": SCHEDULERS[scheduler],
        # Every RM server on loopback, ephemeral ports (the run is in its own network namespace).
        "yarn.resourcemanager.hostname": "127.0.0.1",
        "yarn.resourcemanager.address": "127.0.0.1:0",
        "yarn.resourcemanager.scheduler.address": "127.0.0.1:0",
        "yarn.resourcemanager.resource-tracker.address": "127.0.0.1:0",
        "yarn.resourcemanager.admin.address": "127.0.0.1:0",
        "yarn.resourcemanager.webapp.address": "127.0.0.1:0",
        "yarn.scheduler.minimum-allocation-mb": 512,
        "yarn.scheduler.maximum-allocation-mb": 65536,
        "yarn.scheduler.minimum-allocation-vcores": 1,
        "yarn.scheduler.maximum-allocation-vcores": 64,
        # No work-preserving wait: schedule from the first heartbeat, for all three.
        "yarn.resourcemanager.recovery.enabled": "false",
        "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms": 0,
        # Keep every finished app in the RM, so each job maps back to its queue.
        "yarn.resourcemanager.max-completed-applications": 100000,
        # Every container's allocation reaches the RM's metrics publisher, where the benchmark's
        # probe records it (YARN's default, stated because the figures depend on it).
        "yarn.timeline-service.generic-application-history.save-non-am-container-meta-info": "true",
        # The run's own node-attribute store: the default (/tmp/hadoop-yarn-USER) is every RM's on
        # the machine, the tests' and other runs' included.
        "yarn.node-attribute.fs-store.root-dir": f"file://{conf_dir.resolve().parent / 'node-attribute'}",
    }
    if scheduler == "fair":
        props.update({
            "yarn.scheduler.fair.allocation.file": str(conf_dir / "fair-scheduler.xml"),
            # Several containers per heartbeat, as CapacityScheduler and yarn-drf do.
            "yarn.scheduler.fair.assignmultiple": "true",
            "yarn.scheduler.fair.user-as-default-queue": "false",
            "yarn.scheduler.fair.allow-undeclared-pools": "false",
        })
    props.update(preemption_props(scheduler, cfg))
    if scheduler == "yarn-drf":
        props.update({
            "yarn-drf.queues.file": str(queues_file),
            "yarn-drf.serve.mode": "child",
            "yarn-drf.serve.command": serve_command,
            "yarn-drf.serve.log": str(conf_dir.parent / "yarn-drf-serve.log"),
        })
        props.update(yarn_drf_conf or {})
    return _props(props)


def sls_runner_xml(node: NodeShape, timer_window: int) -> str:
    return _props({
        "yarn.sls.runner.pool.size": 20,
        "yarn.sls.nm.memory.mb": node.memory_mb,
        "yarn.sls.nm.vcores": node.vcores,
        "yarn.sls.nm.gpu-mem": node.gpu_mem,
        "yarn.sls.nm.heartbeat.interval.ms": 1000,
        "yarn.sls.am.heartbeat.interval.ms": 1000,
        "yarn.sls.am.container.memory": 1024,
        "yarn.sls.am.container.vcores": 1,
        "yarn.sls.container.memory.mb": 1024,
        "yarn.sls.container.vcores": 1,
        "yarn.sls.metrics.switch": "ON",
        "yarn.sls.metrics.web.address.port": 10001,
        "yarn.sls.metrics.record.interval.ms": 1000,
        # Keep every timed call of the run, not SLS's default last 100, for exact p50/p99.
        "yarn.sls.metrics.timer.window.size": timer_window,
        "yarn.sls.am.type.mapreduce": "org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator",
    })


LOG4J = """log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.yarn.sls.SLSRunner=INFO
log4j.logger.org.apache.hadoop.yarn.sls.RMRunner=INFO
log4j.logger.org.apache.hadoop.yarn.sls.NMRunner=INFO
log4j.logger.org.yarndrf=INFO
"""


def write_conf(conf_dir: Path, scheduler: str, queues_yaml: Path, node: NodeShape,
               serve_command: str, timer_window: int, yarn_drf_conf: dict[str, str] | None = None) -> None:
    """Writes the classpath configuration directory of one run."""
    cfg = load_config(queues_yaml)
    conf_dir.mkdir(parents=True, exist_ok=True)
    files = {
        # Simulated nodes have made-up host names: name token services by host, never resolve.
        "core-site.xml": _props({"hadoop.security.token.service.use_ip": "false"}),
        "yarn-site.xml": yarn_site_xml(scheduler, conf_dir, serve_command, queues_yaml.resolve(),
                                       cfg, yarn_drf_conf),
        "resource-types.xml": resource_types_xml(),
        "sls-runner.xml": sls_runner_xml(node, timer_window),
        "fair-scheduler.xml": fair_allocation_xml(cfg),
        "capacity-scheduler.xml": capacity_scheduler_xml(cfg),
        "log4j.properties": LOG4J,
    }
    for name, text in files.items():
        (conf_dir / name).write_text(text)


def weights(queues_yaml: Path) -> dict[str, float]:
    """Leaf queue name -> weight, for the fairness figures."""
    cfg = load_config(queues_yaml)
    return {q.name: _weight(q) for q in cfg.root.walk() if q.is_leaf}
