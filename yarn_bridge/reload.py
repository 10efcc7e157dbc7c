"""The one validated queue-configuration reload, and the file watcher that triggers it.

Every trigger — `yarn rmadmin -refreshQueues` through the shim, `yarn-drf reload` through the
status server, and a change of the queue file on disk — ends in `Reloader.check` then
`Reloader.install`: the file is parsed and validated whole (in a worker process, reload_worker, so
scheduling calls neither wait for a parse nor share the interpreter with it), the core checks it
against the running apps, and only
then is it installed (under the lock). A refused file changes nothing and every error is
reported. Each outcome is logged with a diff summary (queues added, removed or draining, and per
queue the settings that changed).
"""
from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler import ConfigError, QueueConfig, SchedulerCore, load_config
from scheduler.config import QueueSpec
from yarn_bridge.reload_worker import ParseWorker
from yarn_bridge.validation import failure, try_install, validate

log = logging.getLogger("yarn_bridge.reload")


@dataclass
class ReloadResult:
    accepted: bool
    path: str
    trigger: str
    version: int  # the config version in force after this attempt
    errors: list[str] = field(default_factory=list)
    changes: dict[str, list[str]] = field(default_factory=dict)  # the core's added/removed/changed/draining
    diff: list[str] = field(default_factory=list)  # one line per change, for people

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "path": self.path, "trigger": self.trigger, "version": self.version,
                "errors": self.errors, "changes": self.changes, "diff": self.diff}


@dataclass
class Checked:
    """A queue file read and validated, not yet installed (Reloader.check, then Reloader.install)."""
    path: Path
    trigger: str
    config: QueueConfig | None  # None: refused, for `errors`
    errors: list[str]
    against: tuple[tuple[str, ...], str]  # the resource types and policy it was validated for


class Reloader:
    """Holds which file the service runs and which version of it; applies reloads.

    A reload reads and validates the file without the service's `lock` (check), then installs it
    under the lock (install): scheduling calls wait for the install only, never for the parse of a
    big or broken file. `on_applied(config, path)` lets the service keep its own copy (it rebuilds
    the core from it on a resync).
    """

    def __init__(self, get_core: Callable[[], SchedulerCore], lock: Any, path: str | Path, *,
                 loader: Callable[[str | Path], QueueConfig] = load_config, metrics: Any = None,
                 on_applied: Callable[[QueueConfig, Path], None] | None = None) -> None:
        self.get_core = get_core
        self.lock = lock
        self.path = Path(path)
        self.loader = loader
        self.metrics = metrics
        self.on_applied = on_applied
        self.version = 1
        self.digest = _digest(self.path)
        self.last: ReloadResult | None = None
        self.worker = ParseWorker()

    def reload(self, path: str | Path | None = None, trigger: str = "api") -> ReloadResult:
        """Validates the queue file (default: the current one) and installs it, taking the lock for
        the install only."""
        checked = self.check(path, trigger)
        if checked.config is None:
            return self._refuse(checked.path, trigger, checked.errors)
        with self.lock:
            return self.install(checked)

    def check(self, path: str | Path | None = None, trigger: str = "api") -> Checked:
        """Reads and validates the file; the service's lock is not needed (nor should it be held).
        The queue file's parse runs in the worker process (reload_worker); a loader of the
        caller's (tests) runs in this one."""
        path = Path(path) if path else self.path
        core = self.get_core()  # only its resource types and policy are read, which a reload never changes
        against = (core.types.names, core.policy.name)
        if self.loader is load_config:
            config, errors = self.worker.check(str(path), against)
            if config is not None:  # a throwaway core of this process too: then the running one takes it
                config, errors = validate(path, against, lambda _path: config)
        else:
            config, errors = validate(path, against, self.loader)
        return Checked(path, trigger, config, errors, against)

    def install(self, checked: Checked) -> ReloadResult:
        """Installs a checked file. Caller holds the lock."""
        path, trigger, config = checked.path, checked.trigger, checked.config
        if config is None:
            return self._refuse(path, trigger, checked.errors)
        core = self.get_core()
        old = core.config
        try:
            against = (core.types.names, core.policy.name)
            if against != checked.against:  # a resync rebuilt the core for other resource types meanwhile
                try_install(config, against)
            changes = core.reload(config)
        except ConfigError as exc:
            return self._refuse(path, trigger, exc.errors)
        except Exception as exc:  # noqa: BLE001 (as in check)
            log.exception("reloading %s failed", path)
            return self._refuse(path, trigger, [failure(exc)])
        self.path, self.version, self.digest = path, self.version + 1, _digest(path)
        diff = describe_changes(old, config, changes, core)
        result = ReloadResult(True, str(path), trigger, self.version, changes=changes, diff=diff)
        log.info("queue configuration %s reloaded (trigger: %s), now version %d: %s", path, trigger,
                 self.version, "; ".join(diff) if diff else "no changes")
        if self.on_applied is not None:
            self.on_applied(config, path)
        self._record(result)
        return result

    def _refuse(self, path: Path, trigger: str, errors: list[str]) -> ReloadResult:
        result = ReloadResult(False, str(path), trigger, self.version, errors=[f"{path}: {e}" for e in errors])
        log.warning("queue configuration %s refused (trigger: %s); the running configuration (version %d) "
                    "stays. %d error(s):\n  %s", path, trigger, self.version, len(errors), "\n  ".join(errors))
        self._record(result)
        return result

    def _record(self, result: ReloadResult) -> None:
        self.last = result
        if self.metrics is not None:
            self.metrics.reload(result.accepted)

    def info(self) -> dict[str, Any]:
        """What /v1/health shows about the configuration."""
        last = self.last
        return {"version": self.version, "path": str(self.path), "sha256": self.digest,
                "last_reload": None if last is None else
                {"accepted": last.accepted, "trigger": last.trigger, "errors": last.errors, "diff": last.diff}}


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


# ---------------------------------------------------------------------------- diff summary

_FIELDS = (("weight", "weight"), ("min", "min"), ("max", "max"), ("max_fraction", "max"),
           ("max_container", "max-container"), ("max_running_apps", "max-running-apps"),
           ("max_am_share", "max-am-share"), ("node_locality_delay_s", "node-locality-delay-s"),
           ("rack_locality_delay_s", "rack-locality-delay-s"), ("accessible_labels", "accessible-node-labels"),
           ("default_label", "default-node-label-expression"), ("order", "order"), ("preemptable", "preemptable"))


def describe_changes(old: QueueConfig, new: QueueConfig, changes: dict, core: SchedulerCore) -> list[str]:
    """One line per change: queues added/removed/draining, per queue the settings that changed."""
    lines = [f"+ {p} (added)" for p in changes.get("added", ())]
    draining = changes.get("draining", ())
    lines += [f"- {p} (removed)" for p in changes.get("removed", ()) if p not in draining]
    for p in draining:  # the core keeps a removed queue that still has apps, draining
        q = core.queues.get(p)
        apps = len(q.apps) if q is not None else 0
        lines.append(f"- {p} (removed; draining: {apps} app(s) keep running, no new apps)")
    before, after = old.queues(), new.queues()
    for p in sorted(set(before) & set(after)):
        parts = _spec_changes(before[p], after[p])
        if parts:
            lines.append(f"~ {p}: " + "; ".join(parts))
    if old.placement != new.placement:
        lines.append("~ placement rules changed")
    if old.starvation_timeout_s != new.starvation_timeout_s:
        lines.append(f"~ reservation.starvation-timeout-s: {old.starvation_timeout_s} -> {new.starvation_timeout_s}")
    for attr in ("enabled", "observe_only", "fair_share_timeout_s", "min_share_timeout_s", "threshold", "grace_s",
                 "max_per_round"):
        x, y = getattr(old.preemption, attr), getattr(new.preemption, attr)
        if x != y:
            lines.append(f"~ preemption.{attr.replace('_', '-')}: {_setting(attr, x)} -> {_setting(attr, y)}")
    if old.resources != new.resources:
        lines.append(f"~ resources: {old.resources} -> {new.resources}")
    return lines


def _spec_changes(a: QueueSpec, b: QueueSpec) -> list[str]:
    parts = []
    for attr, label in _FIELDS:
        x, y = getattr(a, attr), getattr(b, attr)
        if x != y:
            parts.append(f"{label} {_show(x)} -> {_show(y)}")
    for attr, label in (("submit_acl", "submit-acl"), ("admin_acl", "admin-acl")):
        x, y = getattr(a, attr).text, getattr(b, attr).text
        if x != y:
            parts.append(f"{label} {x!r} -> {y!r}")
    return parts


def _setting(attr: str, value: Any) -> str:
    """A preemption setting as the queue file writes it."""
    return f"{value * 100:g}%" if attr == "max_per_round" else _show(value)


def _show(value: Any) -> str:
    if value is None or value == {}:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, frozenset):  # accessible-node-labels
        return "[" + ", ".join(sorted(value)) + "]"
    if value == "":  # default-node-label-expression: the default partition
        return '""'
    if isinstance(value, dict):
        return "<" + ", ".join(f"{k} {v:.0%}" if isinstance(v, float) else f"{k} {v}" for k, v in value.items()) + ">"
    return str(value)


# ---------------------------------------------------------------------------- file watcher

class FileWatcher:
    """Polls the reloader's current file and reloads when its content changes.

    Content (not mtime) decides, so a touch does nothing and a same-second edit is not missed. A
    change is applied once the content is the same on two polls in a row (an editor's partial
    write is not loaded), and a refused content is not retried until it changes again.
    """

    def __init__(self, reloader: Reloader, interval: float = 2.0) -> None:
        self.reloader = reloader
        self.interval = interval
        self._seen = reloader.digest  # the content last applied or refused
        self._candidate: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> ReloadResult | None:
        """One poll; returns the reload result when it triggered one."""
        digest = _digest(self.reloader.path)
        if digest is None or digest in (self._seen, self.reloader.digest):
            self._candidate = None  # unchanged, or already applied by another trigger
            return None
        if digest != self._candidate:
            self._candidate = digest  # changed since the last poll: wait until it is stable
            return None
        self._seen, self._candidate = digest, None
        return self.reloader.reload(trigger="file change")

    def start(self) -> FileWatcher:
        self._thread = threading.Thread(target=self._run, name="queue-file-watcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:  # noqa: BLE001 (the watcher must outlive any one bad poll)
                log.exception("queue file watcher: poll failed")
