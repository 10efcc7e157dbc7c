"""The policies the simulator compares, all run by the same SchedulerCore.

`drf`, `drf-no-gpu`, `fair-memory` and `asset` are share functions of the core itself. `fifo` and
`slots` are built here by transforming the core's inputs, never by a second scheduler:

- fifo: the queue tree is replaced by one leaf, root.fifo, with `order: fifo`; every accepted app
  is submitted there, so the core serves apps strictly by submit time. Apps are still placed (and
  ACL-checked) by the original configuration, and results are reported under that queue.
- slots: Hadoop-1 style fixed slots. Every node gets a countable resource `slots` (S per node);
  every task container asks for 1 slot on top of its real resources (AM containers take none:
  Hadoop 1 ran a job's master logic in the JobTracker, outside the slots). Each queue's
  weight becomes {slots: w, every other type: 1e9 * w}, so the weighted dominant share is the
  queue's share of slots: fairness by slot count. Real resources are still checked for fit on
  the node (a slot never overcommits a node), as in the DRF paper's comparison where a slot is a
  fixed share of a machine.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from scheduler.acl import EVERYONE
from scheduler.config import PlacementRule, QueueConfig, QueueSpec

CORE_POLICIES = ("drf", "drf-no-gpu", "fair-memory", "asset")
POLICIES = ("drf", "fifo", "slots", "fair-memory", "drf-no-gpu", "asset")
SLOTS = "slots"
FIFO_QUEUE = "root.fifo"
# Weights this large make a type's weighted share negligible next to the slot share (shares <= 1).
_IGNORED_WEIGHT = 1e9


class PolicyError(ValueError):
    pass


@dataclass(frozen=True)
class PolicySetup:
    """What the engine needs to run one policy on the core."""

    name: str
    core_policy: str
    config: QueueConfig
    resource_types: tuple[str, ...]
    node_extra: dict[str, int]      # added to every node's capacity (slots)
    container_extra: dict[str, int]  # added to every task container's ask (1 slot)
    submit_queue: str | None        # fifo: every app goes to this queue; None: the app's own queue


def check_policy(name: str) -> str:
    if name not in POLICIES:
        raise PolicyError(f"unknown policy {name!r}; valid policies: {', '.join(POLICIES)}")
    return name


def prepare(name: str, config: QueueConfig, resource_types: tuple[str, ...],
            slots_per_node: int | None = None) -> PolicySetup:
    """Builds the core's configuration and input transforms for policy `name`."""
    check_policy(name)
    if name in CORE_POLICIES:
        return PolicySetup(name, name, config, resource_types, {}, {}, None)
    if name == "fifo":
        leaf = QueueSpec(path=FIFO_QUEUE, order="fifo", submit_acl=EVERYONE)
        root = QueueSpec(path="root", submit_acl=EVERYONE, children=(leaf,))
        fifo_config = replace(config, root=root, placement=(PlacementRule(rule="specified"),))
        return PolicySetup(name, "drf", fifo_config, resource_types, {}, {}, FIFO_QUEUE)
    if slots_per_node is None or slots_per_node < 1:
        raise PolicyError("the slots policy needs --slots-per-node N (N >= 1)")
    if SLOTS in resource_types:
        raise PolicyError(f"the slots policy adds a resource type {SLOTS!r}; the cluster already has one")
    types = tuple(resource_types) + (SLOTS,)
    slot_config = replace(config, root=_slot_weights(config.root, resource_types),
                          resources=types if config.resources else None)
    return PolicySetup(name, "drf", slot_config, types, {SLOTS: slots_per_node}, {SLOTS: 1}, None)


def _slot_weights(queue: QueueSpec, real_types: tuple[str, ...]) -> QueueSpec:
    """Rewrites every queue's weight so that only its slot share counts."""
    children = tuple(_slot_weights(c, real_types) for c in queue.children)
    if queue.path == "root":
        return replace(queue, children=children)
    w = queue.weight if isinstance(queue.weight, (int, float)) else max(queue.weight.values())
    weight = {t: _IGNORED_WEIGHT * w for t in real_types}
    weight[SLOTS] = float(w)
    # min/max limits name real types only; they stay as configured.
    return replace(queue, weight=weight, children=children)
