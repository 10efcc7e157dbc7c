"""The Fair and Capacity configurations generated from the queue YAML divide by the same weights."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import confgen

YAML = """
queues:
  root:
    children:
      a: {weight: 1}
      b: {weight: 3, max: "50%"}
      c:
        weight: 4
        children:
          c1: {weight: 1}
          c2: {weight: 1, max-running-apps: 7}
"""


@pytest.fixture
def cfg(tmp_path: Path):
    p = tmp_path / "q.yaml"
    p.write_text(YAML)
    return confgen.load_config(p)


def _props(xml: str) -> dict[str, str]:
    return {p.findtext("name"): p.findtext("value") for p in ET.fromstring(xml).iter("property")}


def test_fair_queues_carry_weights_and_drf(cfg) -> None:
    root = ET.fromstring(confgen.fair_allocation_xml(cfg))
    queues = {q.get("name"): q for q in root.iter("queue")}
    assert set(queues) == {"a", "b", "c", "c1", "c2"}
    assert float(queues["b"].findtext("weight")) == 3.0
    assert float(queues["c"].findtext("weight")) == 4.0
    assert queues["c"].get("type") == "parent"
    assert all(q.findtext("schedulingPolicy") == "drf" for q in queues.values())
    assert queues["b"].findtext("maxResources") == "50%"
    assert queues["c2"].findtext("maxRunningApps") == "7"
    assert root.findtext("queueMaxAMShareDefault") == "-1.0"


def test_capacity_shares_follow_weights_and_sum_to_100(cfg) -> None:
    p = _props(confgen.capacity_scheduler_xml(cfg))
    assert p["yarn.scheduler.capacity.resource-calculator"].endswith("DominantResourceCalculator")
    assert p["yarn.scheduler.capacity.root.queues"] == "a,b,c"
    caps = [float(p[f"yarn.scheduler.capacity.root.{q}.capacity"]) for q in "abc"]
    assert caps == [12.5, 37.5, 50.0]
    assert float(p["yarn.scheduler.capacity.root.b.maximum-capacity"]) == 50.0
    assert float(p["yarn.scheduler.capacity.root.a.maximum-capacity"]) == 100.0
    assert p["yarn.scheduler.capacity.root.c.queues"] == "c1,c2"
    assert [float(p[f"yarn.scheduler.capacity.root.c.{q}.capacity"]) for q in ("c1", "c2")] == [50.0, 50.0]
    assert p["yarn.scheduler.capacity.root.c.c2.maximum-applications"] == "7"


def test_capacities_of_uneven_weights_still_sum_to_exactly_100() -> None:
    children = tuple(confgen.QueueSpec(path=f"root.q{i}", weight=1.0) for i in range(3))
    shares = confgen._capacities(children)
    assert sum(shares) == 100.0
    assert max(shares) - min(shares) < 0.01


def test_a_fifo_leaf_orders_its_apps_first_in_first_out_in_fair_and_capacity_too(tmp_path: Path) -> None:
    p = tmp_path / "q.yaml"
    p.write_text("queues:\n  root:\n    children:\n      a: {weight: 1, order: fifo}\n      b: {weight: 1}\n")
    cfg = confgen.load_config(p)
    fair = {q.get("name"): q.findtext("schedulingPolicy")
            for q in ET.fromstring(confgen.fair_allocation_xml(cfg)).iter("queue")}
    assert fair == {"a": "fifo", "b": "drf"}
    cs = _props(confgen.capacity_scheduler_xml(cfg))
    # CapacityScheduler has no dominant-share order among apps: both leaves are fifo there
    assert (cs["yarn.scheduler.capacity.root.a.ordering-policy"],
            cs["yarn.scheduler.capacity.root.b.ordering-policy"]) == ("fifo", "fifo")


@pytest.mark.parametrize("queue, needle", [
    ("a: {weight: {vcores: 2, memory-mb: 1}}", "root.a: per-resource weights"),
    ("a: {weight: 1, min: {vcores: 2}}", "root.a: min"),
])
def test_untranslatable_settings_are_refused_naming_the_queue(tmp_path: Path, queue: str, needle: str) -> None:
    p = tmp_path / "q.yaml"
    p.write_text(f"queues:\n  root:\n    children:\n      {queue}\n      b: {{weight: 1}}\n")
    with pytest.raises(confgen.Untranslatable, match=needle):
        confgen.fair_allocation_xml(confgen.load_config(p))


def test_each_scheduler_gets_its_class_and_settings(tmp_path: Path) -> None:
    queues = Path(confgen.__file__).with_name("queues.yaml")
    for name, cls in confgen.SCHEDULERS.items():
        d = tmp_path / name / "conf"
        confgen.write_conf(d, name, queues, confgen.NodeShape(8192, 8, 4096), "yarn-drf serve", 1000)
        site = _props((d / "yarn-site.xml").read_text())
        assert site["yarn.resourcemanager.scheduler.class"] == cls
        runner = _props((d / "sls-runner.xml").read_text())
        assert runner["yarn.sls.nm.gpu-mem"] == "4096"
        assert _props((d / "resource-types.xml").read_text())["yarn.resource-types"] == "gpu-mem"
    fair = _props((tmp_path / "fair" / "conf" / "yarn-site.xml").read_text())
    assert fair["yarn.scheduler.fair.assignmultiple"] == "true"
    drf = _props((tmp_path / "yarn-drf" / "conf" / "yarn-site.xml").read_text())
    assert drf["yarn-drf.queues.file"] == str(queues.resolve())
    assert "yarn-drf.bridge.timeout-ms" not in drf  # the shim's own default unless asked
    confgen.write_conf(tmp_path / "t", "yarn-drf", queues, confgen.NodeShape(1, 1, 1), "x", 10,
                       {"yarn-drf.bridge.timeout-ms": "2000", "yarn-drf.scheduler.max-nodes-per-call": "64"})
    extra = _props((tmp_path / "t" / "yarn-site.xml").read_text())
    assert (extra["yarn-drf.bridge.timeout-ms"], extra["yarn-drf.scheduler.max-nodes-per-call"]) == ("2000", "64")


def test_the_yaml_preemption_settings_reach_fair_and_capacity_and_off_means_no_preemption(
        tmp_path: Path) -> None:
    on = confgen.load_config(Path(confgen.__file__).with_name("preemption-queues.yaml"))
    fair = confgen.preemption_props("fair", on)
    assert fair == {"yarn.scheduler.fair.preemption": "true",
                    "yarn.scheduler.fair.waitTimeBeforeKill": 10000}
    alloc = ET.fromstring(confgen.fair_allocation_xml(on))
    assert alloc.findtext("defaultFairSharePreemptionTimeout") == "15"
    assert alloc.findtext("defaultFairSharePreemptionThreshold") == "0.8"
    assert alloc.findtext("defaultMinSharePreemptionTimeout") == "15"
    cs = confgen.preemption_props("capacity", on)
    key = "yarn.resourcemanager.monitor.capacity.preemption."
    assert cs[key + "observe_only"] == "false"
    assert cs[key + "max_wait_before_kill"] == 10000
    assert cs[key + "total_preemption_per_round"] == 0.1
    assert confgen.preemption_props("yarn-drf", on) == {}  # it reads the YAML itself

    off = confgen.load_config(Path(confgen.__file__).with_name("queues.yaml"))
    assert confgen.preemption_props("fair", off) == {"yarn.scheduler.fair.preemption": "false"}
    assert confgen.preemption_props("capacity", off)[key + "observe_only"] == "true"
    assert ET.fromstring(confgen.fair_allocation_xml(off)).find(
        "defaultFairSharePreemptionTimeout") is None
