"""A queue file checked as a reload would install it, without touching the running core:
parsed, validated, and installed into a throwaway core (yarn_bridge.reload runs it in its worker
process, yarn_bridge.reload_worker; this module needs neither)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from scheduler import ConfigError, QueueConfig, SchedulerCore, load_config
from scheduler.echo import brief

log = logging.getLogger("yarn_bridge.reload")


def validate(path: str | Path, against: tuple[tuple[str, ...], str],
             loader: Callable[[str | Path], QueueConfig] = load_config,
             memory_bound: bool = False) -> tuple[QueueConfig | None, list[str]]:
    """The file read and validated for the cluster's resource types and policy (`against`): the
    config, or None and every error. Never raises: a bug is a refusal naming it. `memory_bound`:
    run under the worker's memory limit, where running out means the file is too big to check."""
    try:
        config = loader(path)
        try_install(config, against)
    except ConfigError as exc:
        return None, exc.errors
    except Exception as exc:  # noqa: BLE001 (a bug must be a refusal: the RM and the old config stay)
        if memory_bound and isinstance(exc, MemoryError):
            return None, ["(top level): checking the file needs more memory than a reload may use"]
        log.exception("reloading %s failed", path)
        return None, [failure(exc)]
    return config, []


def try_install(config: QueueConfig, against: tuple[tuple[str, ...], str]) -> None:
    """Builds a throwaway core: a config the running core would fail to install fails here, before
    the running core has changed at all."""
    types, policy = against
    SchedulerCore(config, resource_types=types, policy=policy)


def failure(exc: Exception) -> str:
    """A refusal naming an unexpected error: the RM and the old config stay."""
    return f"(top level): the reload failed: {type(exc).__name__}: {brief(str(exc))} (a yarn-drf bug; please report it)"
