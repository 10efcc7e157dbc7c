"""The placement view the core keeps queue by queue (queues placement creates, queues re-created for
recovered apps, draining or dynamic, and reloads) equals the view rebuilt from the whole tree,
after every step of any sequence of them. The core used to rebuild it after each created queue:
correct, but O(queues) per new queue (benchmarks/core/queue_creation.py)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from scheduler.placement import QueueView

CONFIGS = [
    """\
placement:
  - {rule: specified, create: true}
  - {rule: user, parent: root.users, create: true}
  - {rule: primary-group, parent: root.groups, create: true}
  - {rule: reject}
queues:
  root:
    children:
      users: {children: {alice: {}}}
      groups: {children: {}}
      dup: {}
""",
    """\
placement:
  - {rule: user, parent: root.users, create: true}
  - {rule: specified}
  - {rule: default, queue: root.team.dup}
queues:
  root:
    children:
      users: {children: {}}
      team: {children: {dup: {}, bob: {}}}
""",
    """\
placement:
  - {rule: specified}
  - {rule: reject}
queues:
  root:
    children:
      other: {children: {dup: {}}}
      alice: {}
""",
]
NAMES = ["alice", "bob", "dup", "carol", "a.b", "x_y"]
PATHS = ["root.users.carol", "root.users.bob", "root.gone.dup", "root.gone.deeper.alice", "root.team.zed",
         "root.dup", "root.alice", "root.other.dup", "root.groups.staff", "root.users.alice", "root.alice.sub",
         "root.dup.x", "root.users.alice.sub"]

steps = st.one_of(
    st.tuples(st.just("submit"), st.sampled_from(NAMES), st.sampled_from([None, *NAMES, *PATHS]),
              st.lists(st.sampled_from(NAMES), max_size=2)),
    st.tuples(st.just("recover"), st.sampled_from(NAMES), st.sampled_from(PATHS)),
    st.tuples(st.just("reload"), st.integers(0, len(CONFIGS) - 1)),
    st.tuples(st.just("remove"), st.integers(0, 30)),
)


def as_compared(view: QueueView) -> tuple[dict[str, bool], dict[str, set[str]]]:
    return dict(view.kinds), {name: set(paths) for name, paths in view.by_leaf_name.items()}


def rebuilt(core: SchedulerCore) -> QueueView:
    return QueueView({p: q.is_leaf for p, q in core.queues.items() if not q.draining})


def run(core: SchedulerCore, step: tuple, n: int) -> None:
    kind = step[0]
    if kind == "submit":
        _, user, queue, groups = step
        core.submit_app(f"app{n}", user, queue, groups)
    elif kind == "recover":
        _, user, path = step
        core.recover_app(f"app{n}", user, path)
    elif kind == "reload":
        try:
            core.reload(parse_config(CONFIGS[step[1]]))
        except Exception:  # noqa: BLE001 (a refused reload changes nothing, which is checked all the same)
            pass
    elif core.apps:
        core.remove_app(sorted(core.apps)[step[1] % len(core.apps)])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(CONFIGS) - 1), st.lists(steps, max_size=40))
def test_the_kept_placement_view_equals_the_rebuilt_one_after_every_step(config, plan):
    core = SchedulerCore(parse_config(CONFIGS[config]))
    core.submit_app("first", "alice")  # the view exists from here on, and is kept up to date
    for n, step in enumerate(plan):
        run(core, step, n)
        if core._view is not None:
            assert as_compared(core._view) == as_compared(rebuilt(core)), step


def test_a_queue_placement_creates_is_added_to_the_existing_view_not_rebuilt():
    core = SchedulerCore(parse_config(CONFIGS[0]))
    core.submit_app("first", "alice")
    view = core._view
    for n in range(50):
        assert core.submit_app(f"app{n}", f"user{n}").queue == f"root.users.user{n}"
    assert core._view is view
    assert as_compared(view) == as_compared(rebuilt(core))
