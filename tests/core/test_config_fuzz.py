"""A seeded mutation fuzzer over the repository's own queue files: every mutant is accepted or
refused with field-path errors, in bounded time and memory, by parse_config, by the reload path and
by check-config; whatever is accepted, a core runs.

The batch runs in a child process with a memory limit (RLIMIT_AS) and a per-case alarm, so a hang
or a blow-up fails this test with the case that caused it instead of stalling the suite.
"""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEEDS = sorted([REPO / "conf" / "queues.yaml", REPO / "conf" / "docker-queues.yaml",
                REPO / "tests" / "queues.yaml", *(REPO / "conf" / "scenarios").glob("*/queues.yaml")])
CASES = 1000
SEED = 13
CASE_SECONDS = 5
MEMORY_BYTES = 1 << 30
LOCATED = re.compile(r"^(line \d+(, column \d+)?: |\(top level\): |.+\(line \d+\)$)", re.S)


# ---------------------------------------------------------------- the mutator

def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def duplicate_line(rnd: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rnd.randrange(len(lines))
    return b"\n".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])


def swap_lines(rnd: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def delete_line(rnd: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rnd.randrange(len(lines))]
    return b"\n".join(lines)


def anchor_and_alias(rnd: random.Random, data: bytes) -> bytes:
    """Anchors a mapping value and puts an alias to it in place of another value."""
    lines = _lines(data)
    keyed = [i for i, line in enumerate(lines) if re.match(rb"^\s*[\w-]+:\s*\S", line)]
    if len(keyed) < 2:
        return data
    i, j = sorted(rnd.sample(keyed, 2))
    lines[i] = re.sub(rb":\s*", b": &m ", lines[i], count=1)
    lines[j] = re.sub(rb":\s*\S.*$", b": *m", lines[j], count=1)
    return b"\n".join(lines)


def alias_bomb(rnd: random.Random, data: bytes) -> bytes:
    levels, width = rnd.randint(3, 10), rnd.randint(2, 12)
    bomb = b"a0: &a0 [lol]\n" + b"".join(
        b"a%d: &a%d [%s]\n" % (i, i, b",".join([b"*a%d" % (i - 1)] * width)) for i in range(1, levels))
    return bomb + data if rnd.random() < 0.5 else data + b"\n" + bomb.replace(b"a", b"z")


def alias_tree(rnd: random.Random, data: bytes) -> bytes:
    """Queues defined by aliases of queues: a tree of width**depth queues from a few lines."""
    depth, width = rnd.randint(2, 9), rnd.randint(2, 6)
    tree = b"t0: &t0 {weight: 1}\n" + b"".join(
        b"t%d: &t%d {children: {%s}}\n" % (d, d, b", ".join(b"c%d: *t%d" % (k, d - 1) for k in range(width)))
        for d in range(1, depth))
    return tree + re.sub(rb"(\n\s+)(\w+):\s*\{[^\n]*\}", rb"\1\2: *t%d" % (depth - 1), data, count=1)


NUMBER = rb"(?<![\w.-])\d+(\.\d+)?(?![\w%.-])"


def _replace_one(rnd: random.Random, data: bytes, pattern: bytes, new: bytes, group: int = 0) -> bytes:
    """`data` with one random match of `pattern` (its `group`) replaced by `new`."""
    found = list(re.finditer(pattern, data))
    if not found:
        return data
    m = rnd.choice(found)
    return data[:m.start(group)] + new + data[m.end(group):]


def big_number(rnd: random.Random, data: bytes) -> bytes:
    digits = rnd.choice([20, 64, 101, 400, 4301])
    big = rnd.choice([b"18446744073709551621", b"9" * digits, b"1." + b"0" * digits + b"1",
                      b"1.0e+" + str(rnd.randint(300, 400)).encode(), b"0x" + b"f" * digits, b"1:" * 30 + b"1"])
    return _replace_one(rnd, data, NUMBER, big)


def non_finite(rnd: random.Random, data: bytes) -> bytes:
    return _replace_one(rnd, data, NUMBER, rnd.choice([b".nan", b".inf", b"-.inf", b".NaN", b"true", b"~"]))


def deep_nesting(rnd: random.Random, data: bytes) -> bytes:
    n = rnd.choice([50, 63, 64, 65, 180, 1000, 20000])
    open_, close = rnd.choice([(b"[", b"]"), (b"{a: ", b"}")])
    lines = _lines(data)
    i = rnd.randrange(len(lines))
    lines.insert(i, b"deep: " + open_ * n + close * n)
    return b"\n".join(lines)


def bad_bytes(rnd: random.Random, data: bytes) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + bytes(rnd.randrange(128, 256) for _ in range(rnd.randint(1, 3))) + data[i:]


def odd_key(rnd: random.Random, data: bytes) -> bytes:
    key = rnd.choice([b"5", b"~", b"no", b"on", b"1.5", b"2024-01-01", b"[a]", b"{x: 1}", b"? [b]", b"<<", b"''"])
    return _replace_one(rnd, data, rb"(?m)^(\s*)([\w-]+):", key, group=2)


def byte_flip(rnd: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + bytes([rnd.choice(b" \t\n:-,[]{}&*!|>'\"#%@`?" + bytes(range(32)))]) + data[i + 1:]


def truncate(rnd: random.Random, data: bytes) -> bytes:
    return data[:rnd.randrange(len(data) + 1)]


def odd_tag(rnd: random.Random, data: bytes) -> bytes:
    tag = rnd.choice([b"!!binary ", b"!!python/object:os.system ", b"!!timestamp ", b"!!int ", b"!!float ", b"!!bool ",
                      b"!!set ", b"!!omap ", b"!local ", b"!!str ", b"!!null ", b"!!merge "])
    return _replace_one(rnd, data, rb":[ \t]+()(?=[^\s&*!])", tag, group=1)


def long_value(rnd: random.Random, data: bytes) -> bytes:
    value = rnd.choice([b"x", b"a,b ", b"9", b"\xc3\xa9"]) * rnd.randint(100, 5000)
    return _replace_one(rnd, data, rb"(?m):[ \t]+([^\n#{\[]+)$", value, group=1)


def many_queues(rnd: random.Random, data: bytes) -> bytes:
    m = re.search(rb"(?m)^(\s+)children:\s*$", data)
    if not m:
        return data
    indent = m.group(1) + b"  "
    n = 5001 if rnd.random() < 0.04 else rnd.choice([10, 300])  # a big file costs ~1 s: a few only
    return data[:m.end()] + b"".join(b"\n%sq%d: {}" % (indent, k) for k in range(n)) + data[m.end():]


MUTATIONS = [duplicate_line, swap_lines, delete_line, anchor_and_alias, alias_bomb, alias_tree, big_number,
             non_finite, deep_nesting, bad_bytes, odd_key, byte_flip, truncate, odd_tag, long_value, many_queues]


def mutants(seed: int, count: int) -> list[tuple[str, bytes]]:
    """`count` mutated queue files: (what was done, the bytes), the same for the same seed."""
    rnd = random.Random(seed)
    bases = [p.read_bytes() for p in SEEDS]
    out = []
    for _ in range(count):
        data = rnd.choice(bases)
        done = []
        for mutate in rnd.sample(MUTATIONS, rnd.randint(1, 3)):
            data = mutate(rnd, data)
            done.append(mutate.__name__)
        out.append(("+".join(done), data))
    return out


# ---------------------------------------------------------------- the child process

CHILD = r"""
import argparse, contextlib, io, json, logging, resource, signal, tempfile, time, traceback
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
from scheduler import ConfigError, SchedulerCore, parse_config
from scheduler.commands import check_config
from tests.core.test_config_fuzz import mutants
from yarn_bridge.reload import Reloader
from yarn_bridge.service import CoreService
logging.disable(logging.CRITICAL)

class Timeout(Exception):
    pass

def alarm(*_):
    raise Timeout()

signal.signal(signal.SIGALRM, alarm)
tmp = Path(tempfile.mkdtemp())
base = tmp / "base.yaml"
base.write_text("resources: [memory-mb, vcores, gpu-mem]\nqueues: {{root: {{children: {{a: {{}}}}}}}}\n")
service = CoreService(base)
reloader = Reloader(lambda: service.core, service.lock, base)
case_file = tmp / "case.yaml"
for i, (what, data) in enumerate(mutants({seed}, {count})):
    signal.alarm({seconds})
    start = time.perf_counter()
    out = {{"i": i, "what": what}}
    try:
        try:
            config = parse_config(data)
            out["outcome"] = "accepted"
        except ConfigError as exc:
            out["outcome"], out["errors"] = "refused", exc.errors
        if out["outcome"] == "accepted":
            try:
                core = SchedulerCore(config, resource_types=["memory-mb", "vcores", "gpu-mem"])
            except ConfigError as exc:  # a resource type this cluster lacks: the core's own refusal
                out["core"] = exc.errors
            else:
                core.add_node("n", {{"memory-mb": 65536, "vcores": 16, "gpu-mem": 8192}})
                core.submit_app("app", "alice", None, ["analysts"])
                core.update_request("app", 1, {{"memory-mb": 1024, "vcores": 1}}, 2)
                core.update_request("app", 2, {{"memory-mb": 512, "vcores": 1}}, 1, location="elsewhere")
                core.update_request("app", 2, {{"memory-mb": 512, "vcores": 1}}, 1)
                core.on_nodes(["n"])  # (the second request waits for its node: the locality delays run)
                out["core"] = "ran"
        if i % {every} == 0:  # the reload path and the command read the file with the same parser
            case_file.write_bytes(data)
            result = reloader.reload(case_file, trigger="fuzz")
            out["reload"], out["reload_errors"] = result.accepted, result.errors
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                out["check_config"] = check_config(argparse.Namespace(file=str(case_file)))
            out["check_config_err"] = err.getvalue()[:3000]
    except Timeout:
        out["outcome"] = "timeout"
    except BaseException:
        out["outcome"] = "crash"
        out["traceback"] = traceback.format_exc()[-3000:]
    finally:
        signal.alarm(0)
    out["ms"] = round((time.perf_counter() - start) * 1000, 1)
    print(json.dumps(out), flush=True)
"""
RELOAD_EVERY = 4


def run_batch(seed: int = SEED, count: int = CASES) -> list[dict]:
    script = CHILD.format(memory=MEMORY_BYTES, seed=seed, count=count, seconds=CASE_SECONDS, every=RELOAD_EVERY)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=count * CASE_SECONDS + 60)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and len(results) == count, (proc.returncode, len(results), proc.stderr[-3000:])
    return results


def test_every_mutant_queue_file_is_accepted_or_refused_with_located_errors_in_bounded_time():
    results = run_batch()
    bad = [r for r in results if r["outcome"] not in ("accepted", "refused")]
    assert not bad, bad[:3]
    for r in results:
        if r["outcome"] == "refused":
            assert r["errors"], r
            for error in r["errors"]:
                assert len(error) <= 400 and LOCATED.match(error), (r["i"], r["what"], error[:500])
        else:
            assert r["core"] == "ran" or all("resource type" in e for e in r["core"]), r
        if "reload" in r:
            # the same decision, except that the running core also knows the cluster's resource types
            assert r["reload"] == (r["outcome"] == "accepted" and r["core"] == "ran"), r
            assert not any("yarn-drf bug" in e for e in r["reload_errors"]), r
            assert r["check_config"] == (0 if r["outcome"] == "accepted" else 1), r
            assert "Traceback" not in r["check_config_err"] and "yarn-drf bug" not in r["check_config_err"], r
    refused = sum(r["outcome"] == "refused" for r in results)
    slowest = max(results, key=lambda r: r["ms"])
    print(f"\nfuzz: {len(results)} mutants of {len(SEEDS)} queue files, {refused} refused, "
          f"{len(results) - refused} accepted; {sum('reload' in r for r in results)} also reloaded and "
          f"checked by check-config; slowest case {slowest['ms']} ms ({slowest['what']}); "
          f"{sum(r['ms'] for r in results) / 1000:.1f} s in all")
    assert {name for r in results for name in r["what"].split("+")} == {m.__name__ for m in MUTATIONS}
    assert len(results) // 2 < refused < len(results)  # the mutants reach both outcomes
