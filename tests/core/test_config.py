"""Queue YAML: every documented field, every validation error, the minimal form, and the CLI."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from scheduler import ConfigError, SchedulerCore, load_config, parse_config
from yarn_bridge.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
MINIMAL = """\
queues:
  root:
    children:
      a: {weight: 1}
      b: {weight: 2}
"""


def errors_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return info.value.errors


def test_minimal_form_works_end_to_end():
    config = parse_config(MINIMAL)
    assert [q.path for q in config.root.walk()] == ["root", "root.a", "root.b"]
    assert config.queues()["root.b"].weight == 2.0
    assert config.resource_types() == ("memory-mb", "vcores")
    assert config.starvation_timeout_s == 60.0
    core = SchedulerCore(config)
    assert core.submit_app("x", "anyone", "b").queue == "root.b"  # root's ACLs default to "*"


def test_the_docker_clusters_default_tree_is_the_one_the_readme_shows_and_places_as_it_says():
    text = (REPO / "conf" / "docker-queues.yaml").read_text()
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### The Docker cluster's default tree"):]
    shown = section[section.index("```yaml\n") + 8:section.index("\n```\n")]
    assert shown + "\n" == text[text.index("resources:"):]
    core = SchedulerCore(parse_config(text))
    q = core.config.queues()
    assert not q["root.research"].is_leaf and q["root.research.dev"].user_limits is not None
    assert q["root.research.ml"].weight == {"gpu-mem": 2.0, "vcores": 1.0, "memory-mb": 1.0}
    assert core.submit_app("a1", "bob", "dev").queue == "root.research.dev"
    assert core.submit_app("a2", "carol", "default").queue == "root.users.carol"  # names no queue
    assert not core.submit_app("a3", "mallory", "prod").accepted


def test_documented_example_sets_every_field():
    config = load_config(REPO / "conf" / "queues.yaml")
    q = config.queues()
    assert config.resources == ("memory-mb", "vcores", "gpu-mem")
    assert config.starvation_timeout_s == 60.0
    assert [r.rule for r in config.placement] == ["specified", "user", "primary-group", "default", "reject"]
    assert config.placement[1].create and config.placement[1].parent == "root.users"
    assert config.placement[3].queue == "root.default"
    assert q["root"].max_running_apps == 500
    assert q["root"].submit_acl.is_empty() and q["root"].admin_acl.allows("x", ["hadoop-admins"])
    analytics = q["root.analytics"]
    assert analytics.weight == 2.0
    assert analytics.min == {"vcores": 8, "memory-mb": 16384}
    assert analytics.max == {"vcores": 0.6, "memory-mb": 262144, "gpu-mem": 0}
    assert analytics.submit_acl.allows("bob", []) and analytics.submit_acl.allows("eve", ["analysts"])
    assert not analytics.submit_acl.allows("eve", ["dev"])
    assert q["root.analytics.adhoc"].order == "fifo" and q["root.analytics.adhoc"].max_running_apps == 10
    assert q["root.ml"].weight == {"gpu-mem": 2.0, "vcores": 1.0, "memory-mb": 1.0}
    assert q["root.ml"].max_fraction == 0.75
    assert not q["root.users"].is_leaf and q["root.users"].children == ()
    assert (q["root"].node_locality_delay_s, q["root"].rack_locality_delay_s) == (1.0, 1.0)
    assert q["root.analytics.etl"].node_locality_delay_s == 3.0
    assert q["root.analytics.etl"].rack_locality_delay_s is None  # root's, through analytics


def test_percentage_max_follows_the_cluster():
    config = parse_config("queues: {root: {children: {a: {max: {vcores: '50%'}}, b: {}}}}\n")
    core = SchedulerCore(config)
    core.add_node("n1", {"vcores": 10, "memory-mb": 1000})
    core.add_node("n2", {"vcores": 10, "memory-mb": 1000})
    core.submit_app("x", "u", "a")
    core.update_request("x", 1, {"vcores": 1, "memory-mb": 1}, 100)
    for node in ("n1", "n2"):
        core.on_heartbeat(node, now=0)
    assert core.snapshot()["queues"]["root.a"]["usage"]["vcores"] == 10


@pytest.mark.parametrize("text, expected", [
    ("queues: {root: {children: {b: {weight: -1}}}}", "queues.root.children.b.weight: must be > 0, got -1"),
    ("queues: {root: {children: {b: {weight: 0}}}}", "queues.root.children.b.weight: must be > 0, got 0"),
    ("queues: {root: {children: {b: {weight: {vcores: -2}}}}}",
     "queues.root.children.b.weight.vcores: must be > 0, got -2"),
    ("queues: {root: {children: {b: {weight: heavy}}}}", "queues.root.children.b.weight: must be a number"),
    ("queues: {root: {children: {b: {min: {vcores: -1}}}}}", "queues.root.children.b.min.vcores: must be >= 0"),
    ("queues: {root: {children: {b: {min: {vcores: 1.5}}}}}", "queues.root.children.b.min.vcores: must be an integer"),
    ("queues: {root: {children: {b: {max: {vcores: lots}}}}}",
     "queues.root.children.b.max.vcores: must be an integer amount or a percentage"),
    ("queues: {root: {children: {b: {max: '150%'}}}}", "queues.root.children.b.max: percentage must be in (0, 100]"),
    ("queues: {root: {children: {b: {min: {vcores: 9}, max: {vcores: 4}}}}}",
     "queues.root.children.b.min.vcores: min 9 is above max 4"),
    ("queues: {root: {children: {b: {max-running-apps: -1}}}}",
     "queues.root.children.b.max-running-apps: must be >= 0"),
    ("queues: {root: {children: {b: {order: lifo}}}}", "queues.root.children.b.order: must be one of drf, fifo"),
    ("queues: {root: {children: {b: {admin-acl: 7}}}}", "queues.root.children.b.admin-acl: must be a string"),
    ("queues: {root: {children: {b: {wieght: 1}}}}", "queues.root.children.b.wieght: unknown field (did you mean 'weight'?)"),
    ("queues: {root: {children: {b.c: {}}}}", "queue name 'b.c' may only hold"),
    ("queues: {root: {weight: 2}}", "queues.root.weight: not allowed on root"),
    ("queues: {}", "queues: root: required field is missing"),
    ("{}", "(top level): queues: required field is missing"),
    ("resources: [vcores]\nqueues: {root: {children: {b: {min: {gpu-mem: 1}}}}}",
     "queues.root.children.b.min.gpu-mem: unknown resource type"),
    ("resources: []\nqueues: {root: {}}", "resources: must not be empty"),
    ("resources: ['9bad']\nqueues: {root: {}}", "is not a valid resource type name"),
    ("reservation: {starvation-timeout-s: -5}\nqueues: {root: {}}", "reservation.starvation-timeout-s: must be > 0"),
    ("queues: {root: {children: {b: {node-locality-delay-s: -1}}}}",
     "queues.root.children.b.node-locality-delay-s: must be >= 0, got -1"),
    ("queues: {root: {children: {b: {rack-locality-delay-s: 5000}}}}",
     "queues.root.children.b.rack-locality-delay-s: must be at most 3,600, got 5000"),
    ("queues: {root: {rack-locality-delay-s: soon, children: {}}}",
     "queues.root.rack-locality-delay-s: must be a number, got 'soon'"),
    ("queues: {root: {children: {b: {node-locality-delay-s: true}}}}",
     "queues.root.children.b.node-locality-delay-s: must be a number, got True"),
    ("queues: {root: {children: {b: {node-locality-delay: 3}}}}",
     "queues.root.children.b.node-locality-delay: unknown field (did you mean 'node-locality-delay-s'?)"),
    ("placement: [{rule: guess}]\nqueues: {root: {}}", "placement.0.rule: must be one of"),
    ("placement: [{rule: user, parent: root.x}]\nqueues: {root: {}}", "placement.0.parent: queue 'root.x' does not exist"),
    ("placement: [{rule: default}]\nqueues: {root: {}}", "placement.0: the default rule needs 'queue'"),
    ("placement: [{rule: default, queue: root.q}]\nqueues: {root: {}}", "placement.0.queue: queue 'root.q' does not exist"),
    ("placement: [{rule: reject}, {rule: specified}]\nqueues: {root: {}}", "placement.0: rules after 'reject'"),
    ("queues: [", "invalid YAML"),
    ("- just a list", "(top level): must be a mapping"),
])
def test_each_validation_error_names_the_field_and_the_problem(text, expected):
    assert any(expected in e for e in errors_of(text)), errors_of(text)


def test_all_errors_are_reported_at_once_with_lines():
    errors = errors_of("queues:\n  root:\n    children:\n      a: {weight: -1}\n      b: {order: x}\n")
    assert len(errors) == 2
    assert errors[0].endswith("(line 4)") and errors[1].endswith("(line 5)")


def test_a_queue_naming_a_type_the_cluster_lacks_is_refused_by_the_core():
    config = parse_config("queues: {root: {children: {a: {min: {gpu-mem: 5}}}}}\n")
    with pytest.raises(ConfigError, match="gpu-mem: unknown resource type"):
        SchedulerCore(config)  # only memory-mb and vcores
    SchedulerCore(config, resource_types=["memory-mb", "vcores", "gpu-mem"])


def test_check_config_cli_prints_the_tree_or_the_errors(tmp_path, capsys):
    assert cli(["check-config", str(REPO / "conf" / "queues.yaml")]) == 0
    out = capsys.readouterr().out
    assert "analytics  weight 2; min <vcores 8, memory-mb 16384>" in out
    assert "ml  weight gpu-mem=2, vcores=1, memory-mb=1; max 75% of cluster" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("queues:\n  root:\n    children:\n      b: {weight: -1}\n")
    assert cli(["check-config", str(bad)]) == 1
    assert "queues.root.children.b.weight: must be > 0, got -1 (line 4)" in capsys.readouterr().err


def test_replay_demo_settles_at_the_targets_of_the_decisions(capsys):
    assert cli(["replay", "--steps", "4"]) == 0
    out = capsys.readouterr().out
    assert "verdict: shares at their targets, within one container" in out
    # the pooled fair share promises root.cpu more than whole containers on these nodes can give
    share, target, pooled = map(float, re.search(
        r"root\.cpu (\d\.\d+) \(target (\d\.\d+), pooled (\d\.\d+)\)", out).groups())
    assert share == target < pooled == 0.655
