"""The table of a run of Hadoop's ResourceManager tests (java_shim/HADOOP_TESTS.md), and its gate.

Reads the surefire reports of java_shim/hadoop-tests (one directory per execution), prints each
test's outcome per scheduler and the totals, and exits 1 if a test that passed on both
CapacityScheduler and FairScheduler did not pass on yarn-drf, unless HADOOP_TESTS.md lists it as
inapplicable with a reason; each such test is printed with yarn-drf's failure message. A test
HADOOP_TESTS.md lists as owed to yarn-drf and not fixed yet (with its cause) is printed as such
and does not fail the run, so the list is the one place such a debt is kept. Tests
HADOOP_TESTS.md lists as not running yarn-drf (they return at once or switch to another scheduler
for any but their own) are marked and left out of yarn-drf's totals: their outcome says nothing
about it.

A run of yarn-drf alone (CI's) takes CapacityScheduler's and FairScheduler's outcomes from the
table HADOOP_TESTS.md records, for the classes the run ran. --write records the run's table there
(a run of all three schedulers: `make hadoop-rm-tests-all`).

    usage: python3 table.py REPORTS_DIR HADOOP_TESTS_MD [--write]
"""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

SCHEDULERS = ("CAPACITY", "FAIR", "YARN_DRF")
PASSED, FAILED, SKIPPED = "pass", "FAIL", "skip"

# Hadoop's test families with one subclass per scheduler: the subclass's suffix names the scheduler.
FAMILIES = {
    "TestApplicationMasterService": ("ApplicationMasterServiceTestBase",
                                     {"Capacity": "CAPACITY", "Fair": "FAIR", "YarnDrf": "YARN_DRF"}),
}
# A parameterized test's name ends with its scheduler: "testFoo[CAPACITY]".
PARAMETER = re.compile(r"^(?P<method>.+)\[(?P<scheduler>[A-Z_]+)\]$")
# A row of the inapplicable list: | `TestClass.testMethod` | reason |
LISTED = re.compile(r"^\|\s*`(?P<test>\w+\.\w+)`\s*\|\s*(?P<reason>[^|]*\S)\s*\|")
# A row of the recorded table: | `TestClass.testMethod` | pass | pass | FAIL | note |
RECORDED = re.compile(r"^\|\s*`(?P<test>\w+\.\w+)`\s*" + r"\|\s*(pass|FAIL|skip|-)\s*" * 3)
TABLE_BEGIN, TABLE_END = "<!-- table.py: begin -->", "<!-- table.py: end -->"
INAPPLICABLE = "## Tests judged inapplicable"
ELSEWHERE = "## Tests that do not run yarn-drf"
OWED = "## Owed to yarn-drf, not fixed yet"


@dataclass(frozen=True)
class Outcome:
    test: str  # "Class.method"
    scheduler: str
    status: str
    message: str = ""  # the failure's, if it failed


def outcomes(reports: Path) -> list[Outcome]:
    """Every test case of every report: a directory named for a scheduler holds the runs of the
    classes that take it from the configuration; the others name it in the test or class name."""
    found = []
    for xml in sorted(reports.glob("*/TEST-*.xml")):
        run_scheduler = xml.parent.name if xml.parent.name in SCHEDULERS else None
        for case in ET.parse(xml).getroot().iter("testcase"):
            placed = _place(case.get("classname", ""), case.get("name", ""), run_scheduler)
            if placed is not None:
                found.append(Outcome(placed[0], placed[1], _status(case), _message(case)))
    return found


def _place(classname: str, name: str, run_scheduler: str | None) -> tuple[str, str] | None:
    """The test ("Class.method") and scheduler of one test case, or None if it names neither."""
    cls = classname.rsplit(".", 1)[-1]
    method, scheduler = name, run_scheduler
    match = PARAMETER.match(name)
    if match and match["scheduler"] in SCHEDULERS:
        method, scheduler = match["method"], match["scheduler"]
    for prefix, (family, suffixes) in FAMILIES.items():
        suffix = cls[len(prefix):] if cls.startswith(prefix) else None
        if suffix in suffixes:
            cls, scheduler = family, suffixes[suffix]
    return None if scheduler is None else (f"{cls}.{method}", scheduler)


def _status(case: ET.Element) -> str:
    if case.find("skipped") is not None:
        return SKIPPED
    if case.find("failure") is not None or case.find("error") is not None:
        return FAILED
    return PASSED  # a flaky pass (passed on a rerun) counts as passed


def _message(case: ET.Element) -> str:
    failed = case.find("failure")
    failed = failed if failed is not None else case.find("error")
    if failed is None:
        return ""
    text = failed.get("message") or failed.get("type") or ""
    return (text.strip().splitlines() or [""])[0][:300]


def listed(doc: Path, heading: str) -> dict[str, str]:
    """The tests of one list of HADOOP_TESTS.md (the section under `heading`), with the reason
    given for each."""
    out: dict[str, str] = {}
    in_list = False
    for line in doc.read_text().splitlines():
        if line.startswith("## "):
            in_list = line.startswith(heading)
        match = LISTED.match(line) if in_list else None
        if match:
            out[match["test"]] = match["reason"]
    return out


def inapplicable(doc: Path) -> dict[str, str]:
    """The tests HADOOP_TESTS.md judges inapplicable to yarn-drf, with the reason for each."""
    return listed(doc, INAPPLICABLE)


def recorded(doc: Path) -> dict[str, dict[str, str]]:
    """The outcomes per scheduler of the run HADOOP_TESTS.md records (its table)."""
    out: dict[str, dict[str, str]] = {}
    for line in doc.read_text().splitlines():
        match = RECORDED.match(line)
        if match:
            out[match["test"]] = {s: st for s, st in zip(SCHEDULERS, match.groups()[1:]) if st != "-"}
    return out


def with_recorded(results: dict[str, dict[str, str]],
                  record: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The run's outcomes, and for each class the run ran, YARN's schedulers' outcomes from the
    record where the run has none (CI runs yarn-drf alone). A recorded test of such a class that
    the run lacks stays in, with no yarn-drf result: a test that vanished is not a pass."""
    ran = {t.split(".")[0] for t in results}
    merged = {t: dict(r) for t, r in results.items()}
    for test, row in record.items():
        if test.split(".")[0] in ran:
            for s in ("CAPACITY", "FAIR"):
                if s in row:
                    merged.setdefault(test, {}).setdefault(s, row[s])
    return merged


def markdown(results: dict[str, dict[str, str]], exempt: dict[str, str],
             elsewhere: dict[str, str]) -> str:
    """The table as HADOOP_TESTS.md records it, with the totals."""
    lines = ["| test | " + " | ".join(SCHEDULERS) + " | note |", "|---" * (len(SCHEDULERS) + 2) + "|"]
    for test in sorted(results):
        note = ("inapplicable" if test in exempt
                else "does not run yarn-drf" if test in elsewhere else "")
        lines.append(f"| `{test}` | " + " | ".join(results[test].get(s, "-") for s in SCHEDULERS)
                     + f" | {note} |")
    return "\n".join(lines) + "\n\n```\n" + totals(results, elsewhere) + "\n```"


def write(doc: Path, text: str) -> None:
    """Replaces the recorded table of HADOOP_TESTS.md (between its markers) with `text`."""
    old = doc.read_text()
    if TABLE_BEGIN not in old or TABLE_END not in old:
        raise SystemExit(f"{doc}: no {TABLE_BEGIN} ... {TABLE_END} section to write the table into")
    head, rest = old.split(TABLE_BEGIN, 1)
    doc.write_text(head + TABLE_BEGIN + "\n" + text + "\n" + TABLE_END + rest.split(TABLE_END, 1)[1])


def table(results: dict[str, dict[str, str]], exempt: dict[str, str],
          elsewhere: dict[str, str]) -> str:
    width = max([len(t) for t in results] + [4])
    lines = [f"{'test':<{width}}  " + "  ".join(f"{s:<8}" for s in SCHEDULERS)]
    for test in sorted(results):
        row = results[test]
        mark = ("  (inapplicable)" if test in exempt
                else "  (does not run yarn-drf)" if test in elsewhere else "")
        lines.append(f"{test:<{width}}  " + "  ".join(f"{row.get(s, '-'):<8}" for s in SCHEDULERS)
                     + mark)
    return "\n".join(lines) + "\n\n" + totals(results, elsewhere)


def totals(results: dict[str, dict[str, str]], elsewhere: dict[str, str]) -> str:
    lines = []
    for s in SCHEDULERS:
        counted = [r for t, r in results.items() if s != "YARN_DRF" or t not in elsewhere]
        counts = {st: sum(1 for r in counted if r.get(s) == st) for st in (PASSED, FAILED, SKIPPED)}
        lines.append(f"{s:<8} passed {counts[PASSED]}, failed {counts[FAILED]}, "
                     f"skipped {counts[SKIPPED]}")
    lines.append(f"(yarn-drf's totals leave out {sum(1 for t in results if t in elsewhere)} "
                 "test(s) that do not run it)")
    return "\n".join(lines)


def owed(results: dict[str, dict[str, str]], exempt: dict[str, str]) -> list[str]:
    """Tests that passed on CapacityScheduler and FairScheduler, are not listed as inapplicable,
    and did not pass on yarn-drf (no result counts as not passed)."""
    return sorted(t for t, r in results.items()
                  if r.get("CAPACITY") == PASSED and r.get("FAIR") == PASSED
                  and r.get("YARN_DRF") != PASSED and t not in exempt)


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4) or argv[3:] not in ([], ["--write"]):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    reports, doc = Path(argv[1]), Path(argv[2])
    results: dict[str, dict[str, str]] = {}
    messages: dict[str, str] = {}
    for o in outcomes(reports):
        results.setdefault(o.test, {})[o.scheduler] = o.status
        if o.scheduler == "YARN_DRF":
            messages[o.test] = o.message
    if not results:
        print(f"no test reports under {reports}", file=sys.stderr)
        return 1
    exempt, elsewhere = inapplicable(doc), listed(doc, ELSEWHERE)
    if argv[3:] == ["--write"]:
        write(doc, markdown(results, exempt, elsewhere))
    else:
        results = with_recorded(results, recorded(doc))
    print(table(results, exempt, elsewhere))
    known = listed(doc, OWED)
    stale = sorted(t for t in {**exempt, **known} if results.get(t, {}).get("YARN_DRF") == PASSED)
    if stale:
        print(f"\nlisted as inapplicable or owed in {doc} but passed on yarn-drf: " + ", ".join(stale))
    still = owed(results, exempt)
    if any(t in known for t in still):
        print(f"\nowed to yarn-drf and not fixed yet ({doc} gives each cause):")
        print("\n".join(f"  {t}: {messages.get(t) or 'no yarn-drf result'}" for t in still if t in known))
    missing = [t for t in still if t not in known]
    if missing:
        print(f"\n{len(missing)} test(s) passed on CapacityScheduler and FairScheduler but not on "
              f"yarn-drf, and {doc} does not list them as inapplicable:")
        print("\n".join(f"  {t}: {messages.get(t) or 'no yarn-drf result'}" for t in missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
