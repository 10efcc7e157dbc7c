"""The cluster and workload files: valid input parses, invalid input names file, line and field."""
from __future__ import annotations

import json

import pytest

from scheduler.sim.formats import (DEFAULT_AM, SimInputError, check_cluster_types, check_workload_types,
                                   load_cluster, load_workload, parse_cluster, parse_workload)


def test_cluster_groups_expand_to_named_nodes(files):
    path = files.write("c.yaml", """\
nodes:
  - name: big
    count: 3
    resources: {vcores: 16, memory-mb: 32768, gpu-mem: 20480}
  - name: small
    resources: {vcores: 4, memory-mb: 8192}
    rack: /r2
""")
    cluster = load_cluster(path)
    assert [n.name for n in cluster.nodes] == ["big-1", "big-2", "big-3", "small"]
    assert cluster.nodes[3].rack == "/r2" and cluster.nodes[0].rack == "/default-rack"
    assert cluster.resource_names() == ["vcores", "memory-mb", "gpu-mem"]
    assert cluster.capacity() == {"vcores": 52, "memory-mb": 106496, "gpu-mem": 61440}


@pytest.mark.parametrize("body, line, needle", [
    ("nodes:\n  - name: n\n    count: 0\n    resources: {vcores: 1}\n", 3, "count: must be a positive integer"),
    ("nodes:\n  - name: n\n    resources: {vcores: -1}\n", 3, "vcores: must be a non-negative integer"),
    ("nodes:\n  - name: n\n    resources: {vcores: 2}\n    cpus: 4\n", 4, "cpus: unknown field"),
    ("nodes:\n  - name: n\n", 2, "missing `resources`"),
    ("nodes:\n  - name: n\n    resources: {vcores: 0}\n", 3, "asks for nothing"),
    ("nodes: [\n", 2, "not valid YAML"),
    ("nodes:\n  - {name: n, resources: {vcores: 1}}\n  - {name: n, resources: {vcores: 1}}\n", 3,
     "already defined"),
])
def test_cluster_errors_name_file_line_and_field(files, body, line, needle):
    path = files.write("bad.yaml", body)
    with pytest.raises(SimInputError) as err:
        load_cluster(path)
    text = str(err.value)
    assert f"bad.yaml:{line}:" in text and needle in text


def test_node_naming_a_type_the_queue_yaml_does_not_list_is_an_error():
    cluster = parse_cluster("nodes:\n  - {name: g, resources: {vcores: 4, gpu-mem: 10}}\n", "c.yaml")
    with pytest.raises(SimInputError, match="node g: resource 'gpu-mem' is not one of"):
        check_cluster_types(cluster, ["vcores", "memory-mb"])


def test_workload_parses_stages_and_the_am_each_line_gives(files):
    path = files.workload("w.jsonl", [
        {"id": "x", "queue": "root.a", "user": "u", "submit": 5, "am": DEFAULT_AM,
         "stages": [{"tasks": 2, "resources": {"vcores": 1}, "duration": 3.5}]},
        {"id": "y", "user": "u", "submit": 1, "am": None,
         "stages": [{"tasks": 1, "resources": {"memory-mb": 10}, "duration": 1}]},
        {"id": "z", "user": "u", "submit": 1, "am": {"vcores": 2, "memory-mb": 512},
         "stages": [{"tasks": 1, "resources": {"memory-mb": 10}, "duration": 1}]},
    ])
    apps = load_workload(path)
    assert [a.id for a in apps] == ["y", "z", "x"]  # by submit time, ties in file order
    by_id = {a.id: a for a in apps}
    assert by_id["x"].am == DEFAULT_AM and by_id["x"].line == 1
    assert by_id["y"].am is None and by_id["y"].queue is None
    assert by_id["z"].am == {"vcores": 2, "memory-mb": 512}
    assert by_id["x"].stages[0].tasks == 2 and by_id["x"].stages[0].duration == 3.5


def test_a_line_without_am_is_an_error_not_a_silent_default_am(files):
    line = {"id": "x", "user": "u", "submit": 0, "stages": [{"tasks": 1, "resources": {"vcores": 1}, "duration": 1}]}
    with pytest.raises(SimInputError) as err:
        load_workload(files.workload("w.jsonl", [line]))
    assert "w.jsonl:1: am: required: the ApplicationMaster container's size" in str(err.value)
    assert "or null for an app without one" in str(err.value)


GOOD = {"id": "a", "user": "u", "submit": 0, "am": None, "stages": [{"tasks": 1, "resources": {"vcores": 1}, "duration": 1}]}


@pytest.mark.parametrize("line, needle", [
    ("{not json", "not valid JSON"),
    (json.dumps({**GOOD, "stages": []}), "stages: must be a non-empty list"),
    (json.dumps({**GOOD, "stages": [{"tasks": 0, "resources": {"vcores": 1}, "duration": 1}]}),
     "stages[0].tasks: must be a positive integer"),
    (json.dumps({**GOOD, "stages": [{"tasks": 1, "resources": {"vcores": 1.2345}, "duration": 1}]}),
     "stages[0].resources.vcores: must be a non-negative integer or a number with at most 3 decimals"),
    (json.dumps({**GOOD, "stages": [{"tasks": 1, "resources": {"vcores": 1}, "duration": -2}]}),
     "stages[0].duration: must be a number of seconds > 0"),
    (json.dumps({**GOOD, "submit": "soon"}), "submit: must be a number"),
    (json.dumps({**GOOD, "priorty": 1}), "priorty: unknown field"),
    (json.dumps({**GOOD, "id": "first"}), "'first' is already used on line 1"),
    ("[1, 2]", "must be a JSON object"),
])
def test_workload_errors_name_file_line_and_field(files, line, needle):
    first = json.dumps({**GOOD, "id": "first"})
    path = files.write("w.jsonl", first + "\n\n" + line + "\n")
    with pytest.raises(SimInputError) as err:
        load_workload(path)
    assert "w.jsonl:3:" in str(err.value) and needle in str(err.value)


def test_task_naming_an_unknown_type_is_an_error_with_its_line():
    apps = parse_workload(json.dumps(GOOD) + "\n" + json.dumps(
        {**GOOD, "id": "g", "stages": [{"tasks": 1, "resources": {"gpu-mem": 1}, "duration": 1}]}), "w.jsonl")
    with pytest.raises(SimInputError, match=r"w.jsonl:2: stages\[0\].resources: resource 'gpu-mem'"):
        check_workload_types(apps, ["vcores", "memory-mb"], "w.jsonl", "divided types")


def test_missing_files_and_empty_workload_are_clear_errors(files, tmp_path):
    with pytest.raises(SimInputError, match="cannot read the cluster file"):
        load_cluster(tmp_path / "nope.yaml")
    with pytest.raises(SimInputError, match="has no applications"):
        load_workload(files.write("empty.jsonl", "\n"))
