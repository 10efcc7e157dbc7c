"""`yarn-drf workload alibaba-gpu`: the Alibaba GPU-sharing trace (cluster-trace-gpu-v2023) as a
simulator cluster file and workload.

Input: its node list (`sn,cpu_milli,memory_mib,gpu,model`, e.g. openb_node_list_all_node.csv)
and a pod list (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
creation_time,deletion_time,scheduled_time`, e.g. openb_pod_list_default.csv). The rules
(docs/simulator.md, "Workload converters"):

- a node: vcores = cpu_milli / 1000 (exact, in thousandths), memory-mb = memory_mib, and `gpu`
  cards of `card_mib` MiB each (`gpus:`); with `cards=False`, one gpu-mem total of the same size;
- the trace gives a pod's GPU as a share of a card (gpu_milli of num_gpu cards), not as memory,
  so every card gets the same memory and a pod asks gpu-mem = num_gpu * gpu_milli / 1000 *
  card_mib: a pod of 460 milli-GPU asks 46 % of a card, a pod of 8 GPUs eight whole cards;
- a pod is an app without an AM (`"am": null`) of one task, submitted at creation_time (divided
  by `time_scale`, which compresses arrivals to add contention) and running deletion_time -
  scheduled_time seconds, in queue root.<qos> (lower case) for user <qos>;
- pods the trace never scheduled (no scheduled_time: it has no run time for them) are left out
  and counted; gpu_spec (GPU model constraints) is not modelled.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from scheduler.sim.formats import SimInputError

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "qos", "creation_time",
               "deletion_time", "scheduled_time")
DEFAULT_CARD_MIB = 16384


@dataclass(frozen=True)
class Converted:
    nodes: int
    gpu_nodes: int
    pods: int
    left_out: int  # never scheduled in the trace
    queues: tuple[str, ...]


def _rows(path: str | Path, columns: tuple[str, ...], what: str) -> list[tuple[int, dict[str, str]]]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in columns if c not in (reader.fieldnames or ())]
            if missing:
                raise SimInputError([f"{path}:1: the {what} has no column {', '.join(missing)} "
                                     f"(expected: {', '.join(columns)})"])
            return [(i, row) for i, row in enumerate(reader, start=2)]
    except OSError as exc:
        raise SimInputError([f"{path}: cannot read the {what}: {exc.strerror or exc}"]) from None


def _int(row: dict[str, str], column: str, where: str, errors: list[str], *, blank_ok: bool = False) -> int | None:
    text = (row.get(column) or "").strip()
    if not text and blank_ok:
        return None
    try:
        value = int(text)
    except ValueError:
        errors.append(f"{where}: {column}: must be a non-negative integer, got {text!r}")
        return None
    if value < 0:
        errors.append(f"{where}: {column}: must be a non-negative integer, got {value}")
        return None
    return value


def _milli(value: int) -> int | float:
    """value / 1000 as the workload writes it: an integer, or a number with <= 3 decimals."""
    exact = Fraction(value, 1000)
    return int(exact) if exact.denominator == 1 else float(exact)


def convert_nodes(path: str | Path, *, card_mib: int = DEFAULT_CARD_MIB, cards: bool = True) -> tuple[str, int]:
    """The cluster file's text and the number of GPU nodes."""
    errors: list[str] = []
    lines = ["# converted from the Alibaba GPU trace (yarn-drf workload alibaba-gpu)", "nodes:"]
    gpu_nodes = 0
    for lineno, row in _rows(path, NODE_COLUMNS, "node list"):
        where = f"{path}:{lineno}"
        start = len(errors)
        cpu, mem, gpus = (_int(row, c, where, errors) for c in ("cpu_milli", "memory_mib", "gpu"))
        name = row["sn"].strip()
        if not name:
            errors.append(f"{where}: sn: empty node name")
        if len(errors) > start:
            continue
        res = {"vcores": _milli(cpu), "memory-mb": mem}
        group = {"name": name}
        if gpus:
            gpu_nodes += 1
            if cards:
                group["gpus"] = [card_mib] * gpus
            else:
                res["gpu-mem"] = card_mib * gpus
        group["resources"] = res
        lines.append(f"  - {json.dumps(group)}")
    if errors:
        raise SimInputError(errors[:50])
    if len(lines) == 2:
        raise SimInputError([f"{path}: the node list has no nodes"])
    return "\n".join(lines) + "\n", gpu_nodes


def convert_pods(path: str | Path, *, card_mib: int = DEFAULT_CARD_MIB,
                 time_scale: float = 1.0) -> tuple[list[dict], int]:
    """The workload's apps (one per scheduled pod, by submit time) and how many pods were left out."""
    if not time_scale > 0:
        raise SimInputError([f"--time-scale: must be > 0, got {time_scale}"])
    errors: list[str] = []
    apps, left_out = [], 0
    for lineno, row in _rows(path, POD_COLUMNS, "pod list"):
        where = f"{path}:{lineno}"
        start = len(errors)
        cpu, mem, num_gpu, gpu_milli, created, deleted = (
            _int(row, c, where, errors) for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
                                                  "creation_time", "deletion_time"))
        scheduled = _int(row, "scheduled_time", where, errors, blank_ok=True)
        if len(errors) > start:
            continue
        if scheduled is None:
            left_out += 1
            continue
        if gpu_milli > 1000:
            errors.append(f"{where}: gpu_milli: at most 1000 (one whole card), got {gpu_milli}")
            continue
        duration = deleted - scheduled
        res = {"vcores": _milli(cpu), "memory-mb": mem}
        gpu_mem = Fraction(num_gpu * gpu_milli * card_mib, 1000)
        if gpu_mem:
            res["gpu-mem"] = int(gpu_mem) if gpu_mem.denominator == 1 else float(gpu_mem)
        if duration <= 0 or not any(res.values()):
            left_out += 1  # nothing to run: no time, or asks for nothing
            continue
        qos = (row.get("qos") or "").strip().lower() or "none"
        apps.append({"id": row["name"].strip(), "queue": f"root.{qos}", "user": qos,
                     "submit": round(created / time_scale, 3), "am": None,
                     "stages": [{"tasks": 1, "resources": res, "duration": float(duration)}]})
    if errors:
        raise SimInputError(errors[:50])
    apps.sort(key=lambda a: a["submit"])
    return apps, left_out


def queues_yaml(queues: list[str]) -> str:
    """A queue file with one equally weighted leaf per queue the pods name."""
    leaves = "".join(f"      {q.split('.', 1)[1]}: {{weight: 1}}\n" for q in queues)
    return "queues:\n  root:\n    children:\n" + leaves


def convert(nodes: str | Path, pods: str | Path, *, cluster_out: str | Path, workload_out: str | Path,
            queues_out: str | Path | None = None, card_mib: int = DEFAULT_CARD_MIB, cards: bool = True,
            time_scale: float = 1.0) -> Converted:
    if not 0 < card_mib < 1 << 40:
        raise SimInputError([f"--card-mib: must be a positive number of MiB, got {card_mib}"])
    cluster, gpu_nodes = convert_nodes(nodes, card_mib=card_mib, cards=cards)
    apps, left_out = convert_pods(pods, card_mib=card_mib, time_scale=time_scale)
    queues = sorted({a["queue"] for a in apps})
    Path(cluster_out).write_text(cluster, encoding="utf-8")
    Path(workload_out).write_text("".join(json.dumps(a) + "\n" for a in apps), encoding="utf-8")
    if queues_out is not None:
        Path(queues_out).write_text(queues_yaml(queues), encoding="utf-8")
    return Converted(cluster.count("\n  - "), gpu_nodes, len(apps), left_out, tuple(queues))
