"""The golden messages of tests/bridge/contract/ (the wire contract, also checked by the Java side's
ContractTest): the service takes every golden request without a bad item and answers each with
exactly the golden reply's bytes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from yarn_bridge import protocol
from yarn_bridge.service import CoreService

CONTRACT = Path(__file__).with_name("contract")
QUEUES_PLACEHOLDER = "@QUEUES@"


def examples(name: str) -> list[dict]:
    doc = json.loads((CONTRACT / name).read_text())
    assert doc["direction"] in ("request", "reply")
    return doc["examples"]


def compact(message) -> str:
    return json.dumps(message, separators=(",", ":"))


def story_service(tmp_path: Path) -> CoreService:
    """A fresh service on the story's queue file."""
    path = tmp_path / "queues.yaml"
    path.write_text((CONTRACT / "queues.yaml").read_text())
    # The story's later requests (containers starting where the core put them) follow the replies
    # of the best-fit node choice; which node a container goes to is the service's option, not the
    # format's, so the story keeps to that choice rather than the default.
    return CoreService(path, node_choice="best-fit", headroom_interval_s=0)


@pytest.fixture
def service(tmp_path) -> CoreService:
    return story_service(tmp_path)


def answer(service: CoreService, message: dict) -> str:
    """The service's reply, with the path of its queue file as the golden messages write it."""
    return service.handle(compact(message)).replace(str(service.queues_path), QUEUES_PLACEHOLDER)


def story() -> list[tuple[dict, dict]]:
    """The golden requests in order, each with its golden reply (paired by name)."""
    out = []
    for kind in ("snapshot", "schedule", "reload", "move"):
        replies = {e["name"]: e["message"] for e in examples(f"{kind}.reply.json")}
        requests = examples(f"{kind}.request.json")
        assert set(replies) == {e["name"] for e in requests}, f"{kind}: a request without its reply or the reverse"
        out += [(e, replies[e["name"]]) for e in requests]
    return out


def test_every_request_type_and_every_delta_op_has_a_golden_example():
    requests = [e["message"] for e, _ in story()]
    assert {m["type"] for m in requests} == set(protocol.REQUEST_TYPES)
    ops = {d["op"] for m in requests for d in m.get("deltas", [])}
    assert ops == set(protocol.DELTA_OPS)
    fields = {f for m in requests if m["type"] == "schedule" for f in m}
    assert fields >= set(protocol.REQUESTS["schedule"].names), "every schedule field in some example"


def test_the_service_answers_the_golden_requests_with_the_golden_replies_byte_for_byte(service):
    for example, golden in story():
        got = answer(service, example["message"])
        assert got == compact(golden), f"{example['name']}:\n got {got}\nwant {compact(golden)}"
    assert service.counters["bad_deltas"] == 0 and service.counters["free_mismatches"] == 0
    assert service.counters["bad_requests"] == 0 and service.core.counters["ignored_events"] == 0


def test_the_service_refuses_the_golden_bad_requests_with_the_golden_errors(service):
    snapshot = examples("snapshot.request.json")[0]["message"]
    assert json.loads(answer(service, snapshot))["ok"]
    for example in examples("error.reply.json"):
        got = answer(service, example["request"])
        assert got == compact(example["message"]), f"{example['name']}:\n got {got}"
        assert example["message"]["ok"] is False


def test_every_golden_request_passes_the_envelope_check_and_decodes_to_its_typed_item_with_every_field():
    for example, _ in story():
        message = example["message"]
        msg = protocol.decode_request(json.dumps(message, indent=2))
        assert type(msg) is protocol.REQUESTS[message["type"]].item
        assert set(message) - {"v"} <= set(msg._fields), "every field of the example is one of the spec's"
        assert msg._asdict() == {name: message.get(name) for name in msg._fields}


class StoryClock:
    """The preemption story's clock: each request says at which second of the story it comes.
    The wall clock runs with it from the story's first epoch (1700000000000 ms)."""

    now = 1000.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000 + self.now - 1000.0


def timed_answers(tmp_path: Path, story: str) -> tuple[CoreService, dict[str, str]]:
    """A story on preemption.yaml against a fresh service, each request at its second: the service
    and its replies by name, in the story's order."""
    path = tmp_path / "preemption.yaml"
    path.write_text((CONTRACT / "preemption.yaml").read_text())
    clock = StoryClock()
    service = CoreService(path, clock=clock, wall_clock=clock.wall, headroom_interval_s=0)
    answers = {}
    for example in examples(f"{story}.request.json"):
        clock.now = 1000.0 + example["at_s"]
        answers[example["name"]] = answer(service, example["message"])
    return service, answers


def play(tmp_path, story: str) -> tuple[CoreService, dict[str, dict]]:
    """A timed story whose every reply must be the golden one, byte for byte. Returns the service
    and the golden replies by name."""
    service, answers = timed_answers(tmp_path, story)
    replies = {e["name"]: e["message"] for e in examples(f"{story}.reply.json")}
    assert list(answers) == list(replies)
    for name, got in answers.items():
        assert got == compact(replies[name]), f"{name}:\n got {got}"
    return service, replies


def test_the_service_answers_the_preemption_story_with_the_golden_replies_byte_for_byte(tmp_path):
    service, replies = play(tmp_path, "preemption")
    told, killed = (next(m[f] for m in replies.values() if f in m) for f in ("preempt", "kill"))
    assert [v["container"] for v in told] == [v["container"] for v in killed]
    assert service.counters["bad_deltas"] == 0 and service.core.preemption.counters["killed"] == len(killed)


def test_a_new_rm_goes_on_from_the_saved_preemption_state_as_the_restart_story_says(tmp_path):
    """The restart story: a fresh service (a new RM's core) given back the state of the preemption
    story's told reply waits for YARN to recover what it names, tells the AM again with the grace
    left, and kills at the deadline first given, once."""
    service, replies = play(tmp_path, "restart")
    saved = next(m["preemption_state"] for m in (e["message"] for e in examples("preemption.reply.json"))
                 if "preempt" in m)
    assert examples("restart.request.json")[0]["message"]["preemption_state"] == saved
    told = replies["am-resynced"]["preempt"]
    assert [v["container"] for v in told] == [m["container"] for m in saved["marks"]]
    assert {v["kill_in_ms"] for v in told} == {1000}  # 8.5 s, as first given, minus 7.5 s
    assert [v["container"] for v in replies["original-deadline-kill"]["kill"]] == [v["container"] for v in told]
    assert service.counters["bad_deltas"] == 0 and service.core.preemption.counters["restored"] == len(told)


def write_replies(kind: str, answers: dict[str, str]) -> None:
    """Puts the service's answers into the messages of `kind`.reply.json (paired by name)."""
    path = CONTRACT / f"{kind}.reply.json"
    doc = json.loads(path.read_text())
    assert {e["name"] for e in doc["examples"]} == set(answers), f"{path.name}: not one reply per request"
    for e in doc["examples"]:
        e["message"] = json.loads(answers[e["name"]])
    path.write_text(json.dumps(doc, indent=2) + "\n")


def regenerate(tmp_path: Path) -> None:
    """Rewrites every story's golden replies with what the real service answers to its golden
    requests. After a change of the format: run it, read the diff (it is the change on the wire),
    then make Messages.java agree (the Java ContractTest checks it against these same files)."""
    service = story_service(tmp_path)
    for kind in ("snapshot", "schedule", "reload", "move"):
        write_replies(kind, {e["name"]: answer(service, e["message"]) for e in examples(f"{kind}.request.json")})
    for story in ("preemption", "restart"):
        (tmp_path / story).mkdir()
        write_replies(story, timed_answers(tmp_path / story, story)[1])


if __name__ == "__main__":
    import sys
    import tempfile

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.bridge.test_contract --write  (rewrites tests/bridge/contract/*.reply.json)")
    with tempfile.TemporaryDirectory() as tmp:
        regenerate(Path(tmp))
