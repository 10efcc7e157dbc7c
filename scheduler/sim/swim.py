"""Converts SWIM Facebook traces (FB-2009, FB-2010 samples) to simulator workloads.

A SWIM line is `job_id submit_s gap_s map_input_bytes shuffle_bytes reduce_output_bytes`
(tab separated). It has no task counts, durations or shapes; this module derives them by the
rules below (also in docs/simulator.md), chosen to follow Hadoop/Hive defaults where one exists:

- a job with shuffle bytes has a map stage then a reduce stage; without, it is map-only and
  its maps also write the output
- map tasks    = ceil(map bytes / 256 MiB), at least 1, at most 4000 (one map per split; the
                 cap stands for CombineFileInputFormat-style split merging on huge inputs);
                 map bytes = input (+ output for a map-only job)
- reduce tasks = ceil((shuffle + output) / 1 GiB), at least 1, at most 999 (Hive's
                 bytes-per-reducer and max-reducers defaults)
- durations    = 5 s task start-up + the task's even share of its stage's bytes / 8 MiB/s
- shapes by job class (shuffle / input ratio):
    filter/aggregate (no shuffle or shuffle <= 0.25 x input): CPU-heavy maps <2 vcores, 2 GiB>,
        reduces <1 vcore, 2 GiB>
    expand/join (shuffle >= 1 x input):                       memory-heavy maps <1 vcore, 4 GiB>,
        reduces <1 vcore, 8 GiB>
    otherwise (transform):                                    maps <1 vcore, 2 GiB>,
        reduces <1 vcore, 4 GiB>
- users and queues: job k (0-based, file order) belongs to user `user<k mod U>`. By default
  (`--queue-by user`) user u submits to queue number (u mod Q) of the given queue list, so every
  queue gets every kind of job in the trace's own arrival pattern. With `--queue-by class` the
  job's class picks the queue: filter -> 1st, transform -> 2nd, expand -> 3rd (mod Q), so
  CPU-heavy and memory-heavy work compete as separate tenants.
- submit = the trace's submit time; AM <1 vcore, 1 GiB> (the workload default) unless --no-am.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from scheduler.sim.formats import DEFAULT_AM, SimInputError

MIB = 1 << 20
GIB = 1 << 30
SPLIT_BYTES = 256 * MIB
MAX_MAPS = 4000
BYTES_PER_REDUCER = GIB
MAX_REDUCERS = 999
TASK_STARTUP_S = 5.0
BYTES_PER_S = 8 * MIB

QUEUE_BY = ("user", "class")
CLASS_ORDER = ("filter", "transform", "expand")
SHAPES = {
    "filter": ({"vcores": 2, "memory-mb": 2048}, {"vcores": 1, "memory-mb": 2048}),
    "transform": ({"vcores": 1, "memory-mb": 2048}, {"vcores": 1, "memory-mb": 4096}),
    "expand": ({"vcores": 1, "memory-mb": 4096}, {"vcores": 1, "memory-mb": 8192}),
}


def job_class(input_bytes: int, shuffle_bytes: int) -> str:
    if shuffle_bytes <= 0.25 * input_bytes:
        return "filter"
    if shuffle_bytes >= input_bytes:
        return "expand"
    return "transform"


def convert_job(k: int, job_id: str, submit: float, input_bytes: int, shuffle_bytes: int,
                output_bytes: int, queues: list[str], users: int, with_am: bool = True,
                queue_by: str = "user") -> dict:
    """The workload line for the k-th job of a trace."""
    kind = job_class(input_bytes, shuffle_bytes)
    map_shape, reduce_shape = SHAPES[kind]
    map_bytes = input_bytes if shuffle_bytes > 0 else input_bytes + output_bytes
    maps = min(MAX_MAPS, max(1, math.ceil(map_bytes / SPLIT_BYTES)))
    stages = [{"tasks": maps, "resources": map_shape,
               "duration": round(TASK_STARTUP_S + map_bytes / maps / BYTES_PER_S, 3)}]
    if shuffle_bytes > 0:
        reduce_bytes = shuffle_bytes + output_bytes
        reduces = min(MAX_REDUCERS, max(1, math.ceil(reduce_bytes / BYTES_PER_REDUCER)))
        stages.append({"tasks": reduces, "resources": reduce_shape,
                       "duration": round(TASK_STARTUP_S + reduce_bytes / reduces / BYTES_PER_S, 3)})
    user = k % users
    pick = user if queue_by == "user" else CLASS_ORDER.index(kind)
    return {"id": job_id, "queue": queues[pick % len(queues)], "user": f"user{user}",
            "submit": submit, "am": dict(DEFAULT_AM) if with_am else None, "stages": stages}


def convert_swim(path: str | Path, out: str | Path, *, queues: list[str], users: int = 16,
                 limit: int | None = None, with_am: bool = True, queue_by: str = "user") -> int:
    """Converts a SWIM .tsv file to JSON lines; returns the number of jobs written."""
    if not queues:
        raise SimInputError(["--queues: give at least one queue"])
    if queue_by not in QUEUE_BY:
        raise SimInputError([f"--queue-by: must be one of {', '.join(QUEUE_BY)}, got {queue_by!r}"])
    if users < 1:
        raise SimInputError([f"--users: must be >= 1, got {users}"])
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SimInputError([f"{path}: cannot read the trace: {exc.strerror or exc}"]) from None
    lines, errors = [], []
    seen: set[str] = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        if limit is not None and len(lines) >= limit:
            break
        fields = raw.split("\t")
        if len(fields) != 6:
            errors.append(f"{path}:{lineno}: expected 6 tab-separated fields (job_id, submit_s, gap_s, "
                          f"map_input_bytes, shuffle_bytes, reduce_output_bytes), got {len(fields)}")
            continue
        job_id = fields[0].strip()
        try:
            submit = float(fields[1])
            sizes = [int(f) for f in fields[3:]]
        except ValueError:
            errors.append(f"{path}:{lineno}: submit time must be a number and byte counts integers")
            continue
        if submit < 0 or min(sizes) < 0 or not math.isfinite(submit):
            errors.append(f"{path}:{lineno}: negative or non-finite value")
            continue
        if job_id in seen:
            errors.append(f"{path}:{lineno}: job id {job_id!r} appears twice")
            continue
        seen.add(job_id)
        lines.append(convert_job(len(lines), job_id, submit, *sizes, queues=queues, users=users,
                                 with_am=with_am, queue_by=queue_by))
        if len(errors) > 50:
            break
    if errors:
        raise SimInputError(errors)
    with open(out, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, separators=(", ", ": ")) + "\n")
    return len(lines)
