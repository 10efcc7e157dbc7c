"""The `yarn-drf` command's output as a newcomer first meets it: piped into `head`, and on an
80-column terminal. Each command runs as a real process through the installed console script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ops.test_ops_cli import load

REPO = Path(__file__).resolve().parents[2]
YARN_DRF = str(Path(sys.executable).with_name("yarn-drf"))
SIGPIPE_STATUS = 141  # what a shell shows for a process ended by SIGPIPE (128 + 13)
SCENARIO = REPO / "conf" / "scenarios" / "drf-paper-example"


def command(name: str, url: str) -> list[str]:
    return {
        "check-config": ["check-config", str(REPO / "conf" / "queues.yaml")],
        "status": ["status", "--url", url],
        "why": ["why", "a-etl", "--url", url],
        "simulate": ["simulate", "--queues", str(SCENARIO / "queues.yaml"), "--cluster",
                     str(SCENARIO / "cluster.yaml"), "--workload", str(SCENARIO / "workload.jsonl")],
        "replay": ["replay", "--steps", "6"],
    }[name]


def environment(buffered: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return env if buffered else {**env, "PYTHONUNBUFFERED": "1"}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", ["check-config", "status", "why", "simulate", "replay"])
def test_a_command_whose_reader_has_gone_exits_quietly_with_the_sigpipe_status(ops, name, buffered):
    load(ops)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (`head`) is gone before the first write: every write fails with EPIPE
    try:
        done = subprocess.run([YARN_DRF, *command(name, ops.url)], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=60, cwd=REPO, env=environment(buffered))
    finally:
        os.close(write_end)
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored" at exit
    assert done.returncode == SIGPIPE_STATUS


def test_a_long_output_piped_into_head_ends_quietly(tmp_path):
    script = (f"set -o pipefail; '{YARN_DRF}' workload synthetic --out /dev/stdout --apps 5000 "
              "--queues root.a,root.b --seed 1 | head -n 2")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert len(done.stdout.splitlines()) == 2 and done.stdout.startswith("{")
    assert done.stderr == ""
    assert done.returncode == SIGPIPE_STATUS  # with pipefail: the writer's status, as for `cat big | head`


def test_a_command_run_to_the_end_still_exits_0():
    done = subprocess.run([YARN_DRF, "check-config", "conf/queues.yaml"], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("conf/queues.yaml: valid\n")


def test_check_config_wraps_its_tree_at_80_columns_between_fields():
    done = subprocess.run([YARN_DRF, "check-config", "conf/queues.yaml"], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**os.environ, "COLUMNS": "80"})
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    # a long queue line continues under its first field, each field whole
    start = next(i for i, line in enumerate(lines) if line.startswith("  analytics  "))
    indent = len("  analytics  ")
    assert all(line.startswith(" " * indent) and line[indent] != " " for line in lines[start + 1:start + 4])
    assert " ".join(line[indent:] for line in lines[start:start + 4]) == (
        "weight 2; min <vcores 8, memory-mb 16384>; max <vcores 60%, memory-mb 262144, gpu-mem 0>; "
        "submit-acl 'alice,bob analysts' (users 'alice', 'bob'; groups 'analysts')")
    assert lines[start + 4].startswith("    adhoc  weight 1")
    placement = lines[lines.index(next(line for line in lines if line.startswith("placement: "))) + 1]
    assert placement.startswith(" " * len("placement: ")) and "->" in placement

    wide = subprocess.run([YARN_DRF, "check-config", "conf/queues.yaml"], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    assert "  analytics  weight 2; min <vcores 8, memory-mb 16384>; max <vcores 60%, memory-mb 262144, " \
           "gpu-mem 0>; submit-acl 'alice,bob analysts' (users 'alice', 'bob'; groups 'analysts')\n" in wide.stdout
