"""CLI sub-commands of the core: `check-config`, `bench core` and `replay` (the core-only demo)."""
from __future__ import annotations

import argparse
import shutil
import sys

from scheduler.config import ConfigError, PreemptionSpec, QueueSpec, UserLimit, UserLimits, load_config


def register(subparsers: argparse._SubParsersAction) -> None:
    check = subparsers.add_parser("check-config", help="validate a queue YAML file and print its queue tree")
    check.add_argument("file", help="queue configuration (YAML)")
    check.set_defaults(func=check_config)

    bench = subparsers.add_parser("bench", help="benchmarks; `bench core` measures the decision cost")
    bench.add_argument("what", choices=["core"])
    bench.add_argument("--nodes", type=int, default=10_000)
    bench.add_argument("--heartbeats", type=int, default=20_000, help="steady-state heartbeats per size")
    bench.add_argument("--seed", type=int, default=1)
    bench.add_argument("--users", type=int, default=0,
                       help="users of the apps, every leaf with user-limits; the same trees without them are "
                            "measured too (default 0: one user, no user-limits)")
    bench.add_argument("--repeat", type=int, default=1, help="runs of each size: their medians are shown")
    bench.add_argument("--local", type=float, default=0.0,
                       help="fraction of the apps whose requests name 3 nodes and their racks (delay scheduling)")
    bench.set_defaults(func=run_bench)

    replay = subparsers.add_parser("replay", help="replay the built-in example workload through the core and "
                                                  "print each queue's dominant share as it converges")
    replay.add_argument("--queues", help="queue YAML (default: the built-in three-queue example)")
    replay.add_argument("--steps", type=int, default=12, help="rows of the convergence table")
    replay.set_defaults(func=run_replay)


def check_config(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.file)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"{args.file}: valid")
    print(f"resources divided: {', '.join(config.resources) if config.resources else 'every type the cluster has'}")
    timeout = config.starvation_timeout_s
    print(f"reservations: {'off' if timeout is None else f'after {timeout:g} s of starvation'}")
    width = shutil.get_terminal_size().columns  # COLUMNS, the terminal, or 80 when piped
    print(_wrapped("preemption: ", _preemption_text(config.preemption), width))
    print(_wrapped("placement: ", _joined([_rule_text(r) for r in config.placement], " ->"), width))
    _print_tree(config.root, "", width)
    return 0


def _preemption_text(spec: PreemptionSpec) -> list[str]:
    if not spec.enabled:
        return ["off"]
    mode = "observe-only (plans are reported, nothing is preempted)" if spec.observe_only else "on"
    return _joined([mode, f"below {spec.threshold:g} x target for {spec.fair_share_timeout_s:g} s",
                    f"or below min for {spec.min_share_timeout_s:g} s", f"grace {spec.grace_s:g} s",
                    f"at most {spec.max_per_round:.0%} of the cluster per round"], ";")


def _joined(parts: list[str], sep: str) -> list[str]:
    """Each part but the last with `sep` after it: the pieces _wrapped lays out."""
    return [part + sep for part in parts[:-1]] + parts[-1:]


def _wrapped(head: str, pieces: list[str], width: int) -> str:
    """`head` and the pieces, space-separated and broken between pieces to fit `width` (a piece
    longer than a line keeps its own), continuation lines indented under the first piece."""
    lines, line = [], head
    for i, piece in enumerate(pieces):
        if i and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = " " * len(head) + piece
        else:
            line += (" " if i else "") + piece
    return "\n".join([*lines, line])


def _rule_text(rule) -> str:
    text = rule.rule
    if rule.rule in ("user", "primary-group"):
        text += f"({rule.parent}.*)"
    elif rule.rule == "default":
        text += f"({rule.queue})"
    return text + ("+create" if rule.create else "")


def _print_tree(spec: QueueSpec, indent: str, width: int) -> None:
    weight = (", ".join(f"{k}={v:g}" for k, v in spec.weight.items())
              if isinstance(spec.weight, dict) else f"{spec.weight:g}")
    parts = [f"weight {weight}" if spec.path != "root" else ""]
    if spec.min:
        parts.append("min " + _amounts(spec.min))
    if spec.max or spec.max_fraction is not None:
        parts.append("max " + (f"{spec.max_fraction:.0%} of cluster" if spec.max_fraction is not None
                               else _amounts(spec.max)))
    if spec.max_container:
        parts.append("max-container " + _amounts(spec.max_container) + ("" if spec.is_leaf else " (and below)"))
    if spec.max_running_apps is not None:
        parts.append(f"max-running-apps {spec.max_running_apps}")
    if spec.max_am_share is not None:
        parts.append(f"max-am-share {spec.max_am_share:g}" + ("" if spec.is_leaf else " (for the leaves below)"))
    below = "" if spec.is_leaf else " (for the queues below)"
    for key, delay in (("node-locality-delay-s", spec.node_locality_delay_s),
                       ("rack-locality-delay-s", spec.rack_locality_delay_s)):
        if delay is not None:
            parts.append(f"{key} {delay:g}{below}")
    if spec.is_leaf:
        parts.append(f"order {spec.order}")
    if spec.user_limits is not None:
        parts += _user_limits_text(spec.user_limits)
    if not spec.preemptable:
        parts.append("not preemptable" + ("" if spec.is_leaf else " (nor any queue below)"))
    pieces = _joined([p for p in parts if p], ";")
    for label, acl in (("submit-acl", spec.submit_acl), ("admin-acl", spec.admin_acl)):
        if not acl.is_empty():  # the text, then what Hadoop reads it as: a line break may fall between
            if pieces:
                pieces[-1] += ";"
            pieces += [f"{label} {acl.text!r}", f"({acl.describe()})"]
    print(_wrapped(f"{indent}{spec.name}  ", pieces, width))
    for child in spec.children:
        _print_tree(child, indent + "  ", width)


def _user_limits_text(limits: UserLimits) -> list[str]:
    """["each user: weight 1, max-running-apps 3", "user alice: weight 2, max-running-apps 5"]."""
    def one(limit: UserLimit) -> str:
        apps = "unlimited" if limit.max_running_apps is None else limit.max_running_apps
        return f"weight {limit.weight:g}, max-running-apps {apps}"
    named = [f"user {name}: {one(limit)}" for name, limit in limits.users.items()]
    return [f"each user: {one(limits.default)}", *named]


def _amounts(values: dict) -> str:
    return "<" + ", ".join(f"{k} {v:.0%}" if isinstance(v, float) else f"{k} {v}" for k, v in values.items()) + ">"


def run_bench(args: argparse.Namespace) -> int:
    from scheduler import bench
    bench.main(nodes=args.nodes, heartbeats=args.heartbeats, seed=args.seed, users=args.users, local=args.local,
               repeat=args.repeat)
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from scheduler import replay
    try:
        return replay.main(queues_file=args.queues, steps=args.steps)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 1
