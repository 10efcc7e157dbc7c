"""Fractional amounts: a type some input gives in fractions is simulated in thousandths.

The core divides integers. A cluster or workload file may give any amount as a number with at
most three decimals (`vcores: 0.5`, `gpu-mem: 1536.25`); then every amount of that type (each
node's, AM's and task's, the cards of `gpus:`, and absolute `min`/`max` of the queue YAML) is
multiplied by 1000 before the run, exactly, and the report divides it back. Shares are ratios,
so they do not change; a type given only in integers keeps its unit, so integer inputs run
exactly as before.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from fractions import Fraction

from scheduler.cards import GPU_MEM
from scheduler.config import QueueConfig, QueueSpec
from scheduler.sim.formats import FRACTION_SCALE, Amount, AppSpec, ClusterSpec


def fraction_scales(cluster: ClusterSpec, apps: Iterable[AppSpec]) -> dict[str, int]:
    """{type: FRACTION_SCALE} for every type some amount gives in fractions."""
    amounts: list[Mapping[str, Amount]] = [n.resources for n in cluster.nodes]
    for app in apps:
        amounts += [app.am or {}] + [s.resources for s in app.stages]
    return {name: FRACTION_SCALE for res in amounts for name, v in res.items() if type(v) is Fraction}


def _scaled(res: Mapping[str, Amount], scales: Mapping[str, int]) -> dict[str, int]:
    return {name: int(v * scales.get(name, 1)) for name, v in res.items()}


def scale_inputs(config: QueueConfig, cluster: ClusterSpec, apps: list[AppSpec],
                 scales: Mapping[str, int]) -> tuple[QueueConfig, ClusterSpec, list[AppSpec]]:
    """The three inputs with every amount of a scaled type in thousandths, all integers."""
    card_scale = scales.get(GPU_MEM, 1)
    nodes = tuple(replace(n, resources=_scaled(n.resources, scales),
                          cards=n.cards and tuple(c * card_scale for c in n.cards)) for n in cluster.nodes)
    scaled_apps = [replace(a, am=a.am and _scaled(a.am, scales),
                           stages=tuple(replace(s, resources=_scaled(s.resources, scales)) for s in a.stages))
                   for a in apps]
    root = _scaled_limits(config.root, scales) if scales else config.root
    return replace(config, root=root), replace(cluster, nodes=nodes), scaled_apps


def _scaled_limits(q: QueueSpec, scales: Mapping[str, int]) -> QueueSpec:
    """Absolute min and max in the scaled unit (a float max is a fraction of the cluster: kept)."""
    return replace(q, min={k: v * scales.get(k, 1) for k, v in q.min.items()},
                   max={k: v if isinstance(v, float) else v * scales.get(k, 1) for k, v in q.max.items()},
                   children=tuple(_scaled_limits(c, scales) for c in q.children))
