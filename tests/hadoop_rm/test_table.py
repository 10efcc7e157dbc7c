"""The table and gate of Hadoop's RM tests run against three schedulers (java_shim/hadoop-tests/table.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

TABLE = Path(__file__).resolve().parents[2] / "java_shim" / "hadoop-tests" / "table.py"
_spec = importlib.util.spec_from_file_location("hadoop_rm_table", TABLE)
table = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = table  # its dataclass looks its module up
_spec.loader.exec_module(table)

PKG = "org.apache.hadoop.yarn.server.resourcemanager"


def _case(cls: str, name: str, outcome: str = "pass") -> str:
    body = {"pass": "", "fail": "<failure message='boom'>trace</failure>",
            "error": "<error message='boom'>trace</error>", "skip": "<skipped/>"}[outcome]
    return f"<testcase classname='{PKG}.{cls}' name='{name}' time='1'>{body}</testcase>"


def _report(reports: Path, run: str, cls: str, *cases: str) -> None:
    (reports / run).mkdir(parents=True, exist_ok=True)
    (reports / run / f"TEST-{PKG}.{cls}.xml").write_text(
        f"<testsuite name='{PKG}.{cls}'>{''.join(cases)}</testsuite>")


def _doc(tmp_path: Path, *rows: str, elsewhere: tuple[str, ...] = ()) -> Path:
    doc = tmp_path / "HADOOP_TESTS.md"
    doc.write_text("# Hadoop's tests\n\n| test | result |\n|---|---|\n| `TestRM.testB` | not a list row |\n\n"
                   + "## Tests judged inapplicable\n\n| test | reason |\n|---|---|\n"
                   + "".join(f"{r}\n" for r in rows)
                   + "\n## Tests that do not run yarn-drf\n\n| test | why |\n|---|---|\n"
                   + "".join(f"{r}\n" for r in elsewhere)
                   + "\n## Figures\n\n| `TestRM.testC` | later section |\n")
    return doc


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    r = tmp_path / "reports"
    _report(r, "parameterized", "TestRM",
            _case("TestRM", "testA[CAPACITY]"), _case("TestRM", "testA[FAIR]"),
            _case("TestRM", "testA[YARN_DRF]"),
            _case("TestRM", "testB[CAPACITY]"), _case("TestRM", "testB[FAIR]"),
            _case("TestRM", "testB[YARN_DRF]", "fail"),
            _case("TestRM", "testC[CAPACITY]"), _case("TestRM", "testC[FAIR]", "error"),
            _case("TestRM", "testC[YARN_DRF]", "fail"))
    # One subclass per scheduler, as Hadoop's ApplicationMasterServiceTestBase has.
    for cls, outcome in (("Capacity", "pass"), ("Fair", "pass"), ("YarnDrf", "skip")):
        _report(r, "parameterized", f"TestApplicationMasterService{cls}",
                _case(f"TestApplicationMasterService{cls}", "testAllocate", outcome))
    # A class that takes the scheduler from yarn-site.xml: one run per scheduler.
    for run, outcome in (("CAPACITY", "pass"), ("FAIR", "pass"), ("YARN_DRF", "pass")):
        _report(r, run, "TestRMHA", _case("TestRMHA", "testTransition", outcome))
    return r


def test_each_test_case_is_placed_in_its_test_and_scheduler(reports: Path) -> None:
    results: dict[str, dict[str, str]] = {}
    for o in table.outcomes(reports):
        results.setdefault(o.test, {})[o.scheduler] = o.status
    assert results == {
        "TestRM.testA": {"CAPACITY": "pass", "FAIR": "pass", "YARN_DRF": "pass"},
        "TestRM.testB": {"CAPACITY": "pass", "FAIR": "pass", "YARN_DRF": "FAIL"},
        "TestRM.testC": {"CAPACITY": "pass", "FAIR": "FAIL", "YARN_DRF": "FAIL"},
        "ApplicationMasterServiceTestBase.testAllocate":
            {"CAPACITY": "pass", "FAIR": "pass", "YARN_DRF": "skip"},
        "TestRMHA.testTransition": {"CAPACITY": "pass", "FAIR": "pass", "YARN_DRF": "pass"},
    }


def test_a_test_both_of_yarns_schedulers_pass_and_yarn_drf_does_not_fails_the_run(
        reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert table.main(["table.py", str(reports), str(_doc(tmp_path))]) == 1
    out = capsys.readouterr().out
    owed = out[out.index("but not on yarn-drf"):]
    assert "TestRM.testB" in owed and "ApplicationMasterServiceTestBase.testAllocate" in owed
    assert "TestRM.testC" not in owed, "FairScheduler failed it too"
    assert "YARN_DRF passed 2, failed 2, skipped 1" in out


def test_a_test_listed_as_inapplicable_with_a_reason_does_not_fail_the_run(
        reports: Path, tmp_path: Path) -> None:
    doc = _doc(tmp_path, "| `TestRM.testB` | casts to CapacityScheduler |",
               "| `ApplicationMasterServiceTestBase.testAllocate` | reads a FairScheduler file |")
    assert table.inapplicable(doc) == {
        "TestRM.testB": "casts to CapacityScheduler",
        "ApplicationMasterServiceTestBase.testAllocate": "reads a FairScheduler file"}
    assert table.main(["table.py", str(reports), str(doc)]) == 0


def test_a_missing_yarn_drf_result_counts_as_not_passed(tmp_path: Path) -> None:
    r = tmp_path / "reports"
    _report(r, "CAPACITY", "TestRMHA", _case("TestRMHA", "testTransition"))
    _report(r, "FAIR", "TestRMHA", _case("TestRMHA", "testTransition"))
    assert table.main(["table.py", str(r), str(_doc(tmp_path))]) == 1


def test_no_reports_at_all_is_an_error_not_a_pass(tmp_path: Path) -> None:
    assert table.main(["table.py", str(tmp_path / "none"), str(_doc(tmp_path))]) == 1


def test_a_test_that_does_not_run_yarn_drf_is_marked_and_left_out_of_its_totals(
        reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _doc(tmp_path, elsewhere=("| `TestRM.testA` | returns at once for any scheduler but Capacity |",))
    table.main(["table.py", str(reports), str(doc)])
    out = capsys.readouterr().out
    assert "(does not run yarn-drf)" in next(line for line in out.splitlines() if line.startswith("TestRM.testA"))
    assert "YARN_DRF passed 1, failed 2, skipped 1" in out
    assert "CAPACITY passed 5, failed 0, skipped 0" in out


def _recording(tmp_path: Path, reports: Path) -> Path:
    """HADOOP_TESTS.md with an empty table section, then the full run `reports` written into it."""
    doc = _doc(tmp_path)
    doc.write_text(doc.read_text() + f"\n{table.TABLE_BEGIN}\n{table.TABLE_END}\n\nafter the table\n")
    table.main(["table.py", str(reports), str(doc), "--write"])
    return doc


def test_write_records_the_runs_table_between_the_markers(reports: Path, tmp_path: Path) -> None:
    doc = _recording(tmp_path, reports)
    assert table.recorded(doc)["TestRM.testC"] == {"CAPACITY": "pass", "FAIR": "FAIL", "YARN_DRF": "FAIL"}
    assert doc.read_text().endswith("after the table\n")
    assert "YARN_DRF passed 2, failed 2, skipped 1" in doc.read_text()


def test_a_yarn_drf_run_alone_is_gated_by_the_recorded_outcomes_of_yarns_schedulers(
        reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _recording(tmp_path, reports)
    alone = tmp_path / "alone"
    _report(alone, "parameterized", "TestRM", _case("TestRM", "testA[YARN_DRF]"),
            _case("TestRM", "testB[YARN_DRF]", "fail"), _case("TestRM", "testC[YARN_DRF]"))
    capsys.readouterr()
    assert table.main(["table.py", str(alone), str(doc)]) == 1
    out = capsys.readouterr().out
    assert "TestRM.testB: boom" in out, "the owed test with yarn-drf's failure message"
    assert "ApplicationMasterServiceTestBase" not in out, "a class the run did not run is left out"
    _report(alone, "parameterized", "TestRM", _case("TestRM", "testA[YARN_DRF]"),
            _case("TestRM", "testB[YARN_DRF]"))
    assert table.main(["table.py", str(alone), str(doc)]) == 0


def test_a_recorded_test_missing_from_a_yarn_drf_run_of_its_class_is_not_a_pass(
        reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _recording(tmp_path, reports)
    alone = tmp_path / "alone"
    _report(alone, "parameterized", "TestRM", _case("TestRM", "testA[YARN_DRF]"))
    capsys.readouterr()
    assert table.main(["table.py", str(alone), str(doc)]) == 1
    assert "TestRM.testB: no yarn-drf result" in capsys.readouterr().out


def test_a_test_listed_as_owed_is_printed_with_its_failure_and_does_not_fail_the_run(
        reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _doc(tmp_path, "| `ApplicationMasterServiceTestBase.testAllocate` | reads a FairScheduler file |")
    doc.write_text(doc.read_text() + "\n## Owed to yarn-drf, not fixed yet\n\n| test | cause |\n|---|---|\n"
                   "| `TestRM.testB` | an offer serves asks made after its heartbeat |\n")
    assert table.main(["table.py", str(reports), str(doc)]) == 0
    out = capsys.readouterr().out
    assert "TestRM.testB: boom" in out[out.index("not fixed yet"):]
