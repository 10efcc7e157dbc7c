"""The 10,000-node driver's report (benchmarks/scale/driver.py): every figure it prints adds up.

The scheduling thread's parts are read from the shim's LoopClock at the window's two ends, so they
cover the window exactly; the call splits into the core's own timer and the rest. A figure that
does not add up (the "JSON both sides + py4j" line once read -165.6 ms/s: the core's timer counted
calls that timed out, which the call timer, fed only by answered calls, did not) shows here."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import driver

# One run's line as ScaleDriver printed it (2026-11-27, 64 assignments a call, load average 88).
RECORDED = {
    "nodes": 10000, "apps": 200, "asks_per_app": 100, "seconds": 15.0, "heartbeats_per_s": 15397,
    "allocations_per_s": 123, "handle_p50_us": 1.11, "handle_p99_us": 4.82, "am_rounds": 34,
    "core_decide_ms_per_s": 307.5, "rm_cpu_ms_per_s": 172.6, "core_cpu_ms_per_s": 10.7,
    "loop_calls_per_s": 2.2, "loop_nodes_per_call": 120, "loop_assignments_per_call": 64.0,
    "loop_call_mean_ms": 321.46,
    "loop_ms_per_s": {"wait": 0.0, "collect": 140.3, "call": 603.6, "commit": 256.1, "resync": 0.0, "handed": 0.0},
    "bridge": "calls=28 failures=0 timeouts=3 resyncs=0 retried=3 applied=1600 refused=0",
    "bridge_whole_run": "calls=137 failures=5 timeouts=4 resyncs=1 retried=4 applied=2752 refused=0",
    "offer_between_heartbeats": False,
}


def _rows(text: str) -> dict[str, float]:
    """The report's table: figure -> value, for the rows whose value is one number."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"-?[\d,]+(\.\d+)?", cells[1]):
            out[cells[0]] = float(cells[1].replace(",", ""))
    return out


def _loop_parts(rows: dict[str, float]) -> list[float]:
    return [rows[label.strip()] for _, label in driver.LOOP_PARTS]


def test_the_scheduling_threads_parts_of_a_recorded_run_add_up_to_the_whole_window():
    rows = _rows(driver.report(RECORDED))
    parts = _loop_parts(rows)
    assert abs(sum(parts) - rows["all parts"]) < 0.1 * len(parts)
    assert abs(rows["all parts"] - 1000) < 1


def test_the_call_is_the_cores_time_plus_json_and_py4j_and_the_core_fits_in_the_call():
    rows = _rows(driver.report(RECORDED))
    call = rows[driver.LOOP_PARTS[2][1].strip()]
    core, rest = rows["of which the core's apply + decide"], rows["of which JSON both sides + py4j"]
    assert abs(core + rest - call) < 0.11
    assert 0 <= rest <= call


def test_every_input_figure_is_printed_as_it_was_measured():
    rows = _rows(driver.report(RECORDED))
    assert rows["allocations per second"] == RECORDED["allocations_per_s"]
    assert rows["heartbeats per second"] == RECORDED["heartbeats_per_s"]
    assert _loop_parts(rows) == [RECORDED["loop_ms_per_s"][k] for k, _ in driver.LOOP_PARTS]


ms = st.floats(min_value=0, max_value=1000, allow_nan=False)


@settings(max_examples=50, deadline=None)
@given(parts=st.fixed_dictionaries({k: ms for k, _ in driver.LOOP_PARTS}), core=ms)
def test_for_any_measured_parts_the_rows_sum_as_printed(parts, core):
    r = {**RECORDED, "loop_ms_per_s": parts, "core_decide_ms_per_s": min(core, parts["call"])}
    rows = dict((label.strip(), value) for label, value, _ in driver.loop_rows(r))
    assert rows["all parts"] == pytest.approx(sum(parts.values()))
    assert rows["of which the core's apply + decide"] + rows["of which JSON both sides + py4j"] == pytest.approx(parts["call"])
