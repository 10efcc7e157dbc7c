"""One wait helper (tests/waits.py): outside it, no loop polls with a sleep, and a function named
wait* only names what it waits for and calls the helper (a cluster's wait_for binds its hooks).
A new hand-rolled wait would bring back a fixed deadline that fails a loaded machine, and a failure
that does not say why."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("tests", "docker", "benchmarks")
HELPER = Path("tests/waits.py")
# Loops that sample for a fixed time on purpose (a measurement, not a wait for a condition).
SAMPLERS = {
    (Path("docker/demo.py"), "run"): "the demo's run: a sample every 2 s for --seconds",
    (Path("tests/docker_cluster/failover.py"), "tick"): "the failover's samples before the kill",
    (Path("tests/docker_cluster/failover.py"), "run"): "the failover's samples for limit_s after the kill",
    (Path("benchmarks/federation/policy.py"), "measure"): "federation-wide shares, a sample every --sample s for --measure s",
}


def hand_rolled_waits(root: Path, scanned: tuple[str, ...] = SCANNED) -> list[str]:
    """`path:line function: why` for each wait outside the helper."""
    found = []
    for path in sorted(p for d in scanned for p in (root / d).rglob("*.py")):
        rel = path.relative_to(root)
        if rel == HELPER or ".venv" in rel.parts:
            continue
        for function, node in _loops_and_waits(ast.parse(path.read_text(), str(rel))):
            if isinstance(node, ast.While) and (rel, function) not in SAMPLERS:
                found.append(f"{rel}:{node.lineno} {function}: a loop that sleeps (use tests.waits.wait_for)")
            elif isinstance(node, ast.FunctionDef) and not _only_delegates(node):
                found.append(f"{rel}:{node.lineno} {function}: a wait of its own (call tests.waits.wait_for)")
    return found


def _loops_and_waits(tree: ast.AST):
    """(enclosing function, node) for each `while` loop that sleeps and each function named wait*."""
    def visit(node: ast.AST, function: str):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.FunctionDef) and (child.name == "wait" or child.name.startswith("wait_")):
                yield child.name, child
            if isinstance(child, ast.While) and any(_calls(n, "sleep") for n in ast.walk(child)):
                yield function, child
            yield from visit(child, inner)
    yield from visit(tree, "<module>")


def _only_delegates(function: ast.FunctionDef) -> bool:
    """No loop of its own, and a call to a wait (the helper's, or a cluster's binding of it)."""
    nodes = list(ast.walk(function))
    return (not any(isinstance(n, (ast.While, ast.For)) for n in nodes)
            and any(_calls(n, "wait_for") or _calls(n, "wait_steady") or _calls_a_wait(n) for n in nodes))


def _calls(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def _calls_a_wait(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith("wait_"))


def test_no_wait_outside_the_one_helper():
    found = hand_rolled_waits(ROOT)
    assert found == [], "hand-rolled waits:\n" + "\n".join(found)


def test_a_sleeping_loop_and_a_wait_of_its_own_are_found_and_a_delegating_wait_is_not(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text('''
import time
from tests.waits import wait_for


def wait_until(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)


def wait_rm(cluster):
    return wait_for(cluster.up, "the RM", budget_s=60)


def wait_app(cluster):
    return cluster.wait_for(cluster.app, 60, "the app")


def settle(cluster):
    while not cluster.settled():
        time.sleep(1)


def wait_quietly(cluster):
    return cluster.up()
''')
    assert hand_rolled_waits(tmp_path, ("tests",)) == [
        "tests/helpers.py:6 wait_until: a wait of its own (call tests.waits.wait_for)",
        "tests/helpers.py:8 wait_until: a loop that sleeps (use tests.waits.wait_for)",
        "tests/helpers.py:23 settle: a loop that sleeps (use tests.waits.wait_for)",
        "tests/helpers.py:27 wait_quietly: a wait of its own (call tests.waits.wait_for)",
    ]
