"""Apps' requests: asks added, changed and dropped, by key or by the caller's ask ids."""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.echo import brief
from scheduler.model import ANY, Request
from scheduler.queue_tree import QueueTree
from scheduler.resources import AMOUNT_LIMIT, Vector


class Asks(QueueTree):
    """Apps' requests, by key and by the caller's ask ids."""

    def update_request(self, app_id: str, priority: int, resources: Mapping[str, int] | Vector, count: object, *,
                       allocation_id: int = 0, location: str = ANY, relax_locality: bool = True,
                       now: float | None = None, ask_id: int | None = None, am: bool | None = None,
                       label: str | None = None) -> None:
        """Sets one of YARN's asks: `count` containers of `resources` ({name: amount}, or a
        vector in the order of self.types) at `location` (ANY, a rack or a node) for the request
        key (priority, allocation_id). With `ask_id`, later count changes of this ask can go
        through update_counts. `am=True`: the request is the app's ApplicationMaster (YARN's
        AM ask, which the RM makes for the attempt): its containers are AM containers, held to
        the queue's max-am-share; None leaves what the request was. `label`: the ask's node label
        expression (None: its queue's default-node-label-expression; scheduler.partitions)."""
        parts = self.partitions
        if parts is not None:
            app = self._app(app_id, "update_request")
            where = None if app is None else parts.ask_label(app_id, (priority, allocation_id), label, location,
                                                             app.queue)
            pool = None if where is None else parts.in_pool(where, app_id)
            if pool is None:
                return
            if ask_id is not None:
                parts.register_ask(ask_id, pool)
            if pool is not self:
                pool.update_request(app_id, priority, resources, count, allocation_id=allocation_id,
                                    location=location, relax_locality=relax_locality, now=now, ask_id=ask_id, am=am)
                return
        elif label:
            self._ignore("update_request", f"app {app_id}: node label {label!r}: the cluster has no labels")
            return
        app = self._app(app_id, "update_request")
        if app is None:
            return
        if type(count) is not int or not 0 <= count < AMOUNT_LIMIT:
            self._ignore("update_request", f"app {app_id}: count must be an integer from 0 to 2^63-1, "
                         f"got {brief(count)}")
            return
        capability = self._vector(resources, "update_request", app_id)
        if capability is None:
            return
        key = (priority, allocation_id)
        req = app.requests.get(key)
        if req is None:
            req = app.requests[key] = Request(app, key, capability, self._now(now))
        if am is not None:
            req.am = am
        if req.capability != capability:
            was_pending = req.count > 0
            if was_pending:
                self._set_pending(app, req, False)
            req.capability = capability
            if was_pending:
                self._set_pending(app, req, True)
        if location == ANY:
            if count > 0 and req.count == 0:
                req.restart(self._now(now))
            req.relax = relax_locality
            req.count = count
            self._set_pending(app, req, count > 0)
        elif location.startswith("/"):
            req.set_rack(location, count, relax_locality)
        else:
            req.set_node(location, count)
        if req.count == 0 and req.reserved_node is not None:
            self.unreserve(req.reserved_node)
        if ask_id is not None:
            self._register_ask(ask_id, req, location)

    def drop_request(self, app_id: str, key: tuple[int, int]) -> None:
        """The app's request `key` wants nothing here any more: its label moved it to another pool."""
        app = self.apps.get(app_id)
        req = None if app is None else app.requests.get(key)
        if req is None or app is None:
            return
        self._set_pending(app, req, False)
        if req.reserved_node is not None:
            self.unreserve(req.reserved_node)
        req.count = 0

    def forget_ask(self, ask_id: int) -> None:
        """The ask id now names an ask of another pool."""
        known = self.asks.pop(ask_id, None)
        if known is None and ask_id in self.located_asks:
            known = self.located_asks.pop(ask_id)[0]
        if known is not None and ask_id in known.app.ask_ids:
            known.app.ask_ids.remove(ask_id)

    def _register_ask(self, ask_id: int, req: Request, location: str) -> None:
        known = self.asks.pop(ask_id, None)
        if known is None and ask_id in self.located_asks:
            known = self.located_asks.pop(ask_id)[0]
        if known is None or known.app is not req.app:
            if known is not None:  # a caller reusing ids across apps: the newest wins
                known.app.ask_ids.remove(ask_id)
            req.app.ask_ids.append(ask_id)
        if location == ANY:
            self.asks[ask_id] = req
        else:
            self.located_asks[ask_id] = (req, location)

    def update_counts(self, changes: Iterable[tuple[object, object]], now: float | None = None) -> int:
        """New counts for asks registered by update_request(ask_id=...), as (ask id, count) pairs,
        in order; shape and locality relaxation unchanged. This is most of what a heartbeat
        carries, so each is a couple of lookups. Returns how many were ignored (unknown id, bad
        count), each logged and counted as an ignored event."""
        any_asks, located, limit = self.asks, self.located_asks, AMOUNT_LIMIT
        ignored = 0
        if self.partitions is not None and self.partitions.ask_pool:
            changes, ignored = self.partitions.route_counts(changes, now)
        for ask_id, count in changes:
            if type(ask_id) is int and type(count) is int and 0 < count < limit:
                req = any_asks.get(ask_id)
                if req is not None and req.count:  # pending before and after: nothing else changes
                    req.count = count
                    continue
            if type(count) is not int or not 0 <= count < AMOUNT_LIMIT or type(ask_id) is not int:
                ignored += 1
                self._ignore("update_counts", f"ask {brief(ask_id)}: count must be an integer from 0 to "
                             f"2^63-1 and the id an integer, got {brief(count)}")
                continue
            req = any_asks.get(ask_id)
            if req is not None:  # starts or stops waiting (the first test took those that go on)
                req.count = count
                if count:
                    req.restart(self._now(now))
                self._set_pending(req.app, req, count > 0)
                if not count and req.reserved_node is not None:
                    self.unreserve(req.reserved_node)
                continue
            ref = located.get(ask_id)
            if ref is None:
                ignored += 1
                self._ignore("update_counts", f"unknown ask id {ask_id}")
                continue
            req, location = ref
            if location.startswith("/"):
                req.set_rack(location, count)
            else:
                req.set_node(location, count)
        return ignored
