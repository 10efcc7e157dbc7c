"""Apps entering and leaving the tree: placement rules and ACLs on submission, recovery into
the queue YARN runs an app in, max-running-apps (held apps admitted oldest first), priority,
moves between queues and blacklists."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from heapq import heapify, heappop, heappush

from scheduler.config import CREATED
from scheduler.containers import NodesAndContainers
from scheduler.model import App, Placement, Queue, User, queues_below
from scheduler.partitions import refusal
from scheduler.placement import QueueView, Target, place
from scheduler.queue_limits import app_limit, count_running
from scheduler.resources import fits, vadd, vsub

log = logging.getLogger("yarn_drf.core")


class Admission(NodesAndContainers):
    """Apps entering, waiting for, moving between and leaving queues."""

    def submit_app(self, app_id: str, user: str, queue: str | None = None, groups: Sequence[str] = (),
                   priority: int = 0, now: float | None = None, label: str | None = None) -> Placement:
        """Places a new app (placement rules, ACLs). `label`: its AM's node label expression, if
        it has one: refused when the queue may not use it (CapacityScheduler's check)."""
        if app_id in self.apps:
            return Placement(True, self.apps[app_id].queue.path, "already accepted")
        target = self._placement(user, queue, groups)
        if isinstance(target, str):
            return self._reject(app_id, user, queue, target)
        if label:
            problem = refusal(self._nearest_existing(target.path), label)
            if problem:
                return self._reject(app_id, user, queue, problem)
        leaf = self._create_leaf(target) if target.create else self.queues[target.path]
        return self._accept(App(app_id, user, leaf, self._capped(priority), self.types.zero, self._now(now)))

    def recover_app(self, app_id: str, user: str, queue: str, groups: Sequence[str] = (), priority: int = 0,
                    now: float | None = None) -> Placement:
        """Takes an app YARN already runs (a resync after a core restart, or an RM restart) into
        exactly the queue YARN has it in: placement and ACLs are not re-decided, because its
        containers run there. A queue the configuration no longer has is re-created draining, as
        a reload keeps it; one a placement rule with `create` could make is created dynamic, as
        placement would. An app placement would now put elsewhere, or the ACLs now refuse, is
        counted (apps_recovered_misplaced) and logged, never moved. Refused only when its queue
        cannot be a leaf of the tree (the configuration made it a parent queue)."""
        if app_id in self.apps:
            return Placement(True, self.apps[app_id].queue.path, "already accepted")
        path = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
        leaf = self.queues.get(path) or self._recreate(path)
        if isinstance(leaf, str) or not leaf.is_leaf:
            reason = leaf if isinstance(leaf, str) else f"queue {path!r} is now a parent queue"
            self.counters["apps_unrecoverable"] += 1
            log.error("cannot recover app %s of user %s into queue %s: %s; its containers are not counted",
                      app_id, user, path, reason)
            return Placement(False, None, reason)
        target = self._placement(user, path, groups)
        if isinstance(target, str) or target.path != path:
            self.counters["apps_recovered_misplaced"] += 1
            log.warning("recovered app %s of user %s in queue %s, where YARN runs it; placement would now %s",
                        app_id, user, path, target if isinstance(target, str) else f"put it in {target.path}")
        return self._accept(App(app_id, user, leaf, self._capped(priority), self.types.zero, self._now(now)))

    def update_app_priority(self, app_id: str, priority: int) -> int | None:
        """Sets the app's priority (`yarn application -updatePriority`), capped at max_app_priority:
        a fifo leaf orders its apps by it from the next decision on. Returns the priority set;
        None for an unknown app."""
        for pool in self.partitions.mirrors(app_id) if self.partitions is not None else ():
            pool.update_app_priority(app_id, priority)
        app = self._app(app_id, "update_app_priority")
        if app is None:
            return None
        app.priority = self._capped(priority)
        self._requeue(app)
        return app.priority

    def _capped(self, priority: int) -> int:
        top = self.max_app_priority
        return priority if top is None or priority <= top else top

    def _placement(self, user: str, queue: str | None, groups: Sequence[str]) -> Target | str:
        """Where the placement rules put a submission, ACLs checked; or why it is refused."""
        view = self._view
        if view is None:
            view = self._view = QueueView({p: q.is_leaf for p, q in self.queues.items() if not q.draining})
        target = place(self.config.placement, view, queue, user, groups)
        if isinstance(target, str):
            return target
        return self._acl_refusal(target.path, user, groups) or target

    def _recreate(self, path: str) -> Queue | str:
        """The leaf `path` that YARN runs an app in and the configuration lacks: dynamic under a
        parent queue where placement creates queues, else draining (with missing parents)."""
        if not all(path.split(".")):
            return f"{path!r} is not a queue path"
        above = self._nearest_existing(path)
        if above.apps:
            return f"{above.path} above it is a leaf queue holding apps"
        parent = self.queues.get(path.rsplit(".", 1)[0])
        if parent is not None and not parent.is_leaf and self._creates_under(path):
            leaf = self._build(CREATED, parent, dynamic=True, path=path)
            log.info("re-created dynamic queue %s for a recovered app", path)
            return leaf
        log.warning("re-created queue %s, which the configuration lacks, draining: its apps run on", path)
        return self._keep_draining(path)

    def _creates_under(self, path: str) -> bool:
        """Whether a placement rule with `create` can make the leaf `path`."""
        parent = path.rsplit(".", 1)[0]
        for rule in self.config.placement:
            if rule.create and (rule.rule == "specified" or (rule.rule == "default" and rule.queue == path)
                                or (rule.rule in ("user", "primary-group") and rule.parent == parent)):
                return True
        return False

    def _accept(self, app: App) -> Placement:
        """Adds an accepted app to its leaf: runnable now, or held back by max-running-apps."""
        leaf = app.queue
        self.apps[app.id] = app
        self.enter_leaf(app, leaf)
        self.counters["apps_accepted"] += 1
        blocked = app_limit(leaf)
        owner = app.owner
        if blocked is None and (owner is None or not owner.full):
            self._make_runnable(app)
            return Placement(True, leaf.path, "")
        self._hold(app)
        if blocked is None:
            assert owner is not None  # (the user's limit held it back)
            return Placement(True, leaf.path, f"waiting: user {app.user} runs its max-running-apps "
                                              f"({owner.max_apps}) in {leaf.path}")
        return Placement(True, leaf.path, f"waiting: max-running-apps reached in {blocked.path}")

    def enter_leaf(self, app: App, leaf: Queue) -> None:
        """Puts the app in `leaf` (not yet runnable nor waiting), under its user when the leaf
        has user-limits; its usage counts in its user's."""
        app.queue = leaf
        leaf.apps[app.id] = app
        owner = app.owner = self._user(leaf, app.user)
        if owner is not None:
            owner.apps += 1
            owner.usage = vadd(owner.usage, app.usage)

    def _user(self, leaf: Queue, name: str) -> User | None:
        """The leaf's record of user `name` (made on its first app), or None without user-limits."""
        users = leaf.users
        if users is None:
            return None
        user = users.get(name)
        if user is None:
            limits = leaf.spec.user_limits
            assert limits is not None  # (users is None without them)
            limit = limits.of(name)
            user = users[name] = User(name, leaf, limit.weight, limit.max_running_apps, self.types.zero)
            self._weigh_user(user, leaf)
        return user

    @staticmethod
    def _hold(app: App) -> None:
        """Makes the app wait for max-running-apps, in submission order in its leaf and user."""
        for waiting in (app.queue.waiting, app.owner.waiting if app.owner is not None else None):
            if waiting is None:
                continue
            if waiting and next(reversed(waiting)).seq > app.seq:  # (a move brings an older app)
                ordered = sorted([*waiting, app], key=_seq)
                waiting.clear()
                waiting.update(dict.fromkeys(ordered))
            else:
                waiting[app] = None

    def _reject(self, app_id: str, user: str, queue: str | None, reason: str) -> Placement:
        self.counters["apps_rejected"] += 1
        log.info("rejected app %s of user %s (asked for queue %r): %s", app_id, user, queue, reason)
        return Placement(False, None, reason)

    def _acl_refusal(self, path: str, user: str, groups: Sequence[str]) -> str:
        """YARN's rule: a user may submit to a queue if its or any ancestor's submit or admin ACL allows."""
        q = self._nearest_existing(path)
        for anc in q.ancestors_and_self():
            if anc.spec.submit_acl.allows(user, groups) or anc.spec.admin_acl.allows(user, groups):
                return ""
        return (f"user {user!r} (groups: {', '.join(groups) or 'none'}) may not submit to queue {path!r}: "
                f"denied by the submit-acl and admin-acl of {path} and its parents")

    def _nearest_existing(self, path: str) -> Queue:
        while path not in self.queues:
            path = path.rsplit(".", 1)[0]
        return self.queues[path]

    def _create_leaf(self, target: Target) -> Queue:
        leaf = self._build(CREATED, self.queues[target.path.rpartition(".")[0]], dynamic=True, path=target.path)
        log.debug("created queue %s (placement rule with create: true)", leaf.path)  # (the service logs each call's)
        return leaf

    def mirror_app(self, app: App) -> None:
        """Takes the home's app into this pool (scheduler.partitions): into the same queue,
        runnable, since the home decided whether it runs."""
        leaf = self.queues.get(app.queue.path) or self._recreate(app.queue.path)
        if isinstance(leaf, str) or not leaf.is_leaf:
            leaf = self._keep_draining(app.queue.path)
        mirror = self.apps[app.id] = App(app.id, app.user, leaf, app.priority, self.types.zero, app.submitted)
        mirror.blacklist = app.blacklist
        self.enter_leaf(mirror, leaf)
        self._make_runnable(mirror)

    def remove_app(self, app_id: str) -> None:
        if self.partitions is not None:
            self.partitions.forget_app(app_id)
        app = self._app(app_id, "remove_app")
        if app is None:
            return
        for cid in list(app.containers):
            self.container_finished(cid, "killed")
        self.reset_requests(app_id)
        del self.apps[app_id]
        freed = self._take_out(app)
        if freed is not None:
            self._admit_waiting(freed)

    def _admit_waiting(self, top: Queue) -> None:
        """Makes the apps waiting below `top` runnable, oldest first, as far as max-running-apps
        now allows. The apps of a leaf share their limits, so once its oldest must wait, all of
        them must: each leaf costs one look, however many apps wait in it; in a leaf with
        user-limits, the apps of one user do: one look per user with room."""
        heads: list[tuple[int, App, dict[App, None]]] = []
        for q in queues_below(top):
            if q.users is None:
                if q.waiting:
                    first = next(iter(q.waiting))
                    heads.append((first.seq, first, q.waiting))
            else:  # each user's oldest: a user at its own limit does not hold the others back
                for user in q.users.values():
                    if user.waiting and not user.full:
                        first = next(iter(user.waiting))
                        heads.append((first.seq, first, user.waiting))
        heapify(heads)
        while heads:
            _, app, waiting = heappop(heads)
            if app_limit(app.queue) is not None or (app.owner is not None and app.owner.full):
                continue
            del app.queue.waiting[app]
            if app.owner is not None:
                del app.owner.waiting[app]
            self._make_runnable(app)
            if waiting:
                first = next(iter(waiting))
                heappush(heads, (first.seq, first, waiting))

    @staticmethod
    def waiting_ahead(app: App, limit: Queue | User) -> int:
        """How many apps wait for `limit`'s max-running-apps ahead of the waiting `app`."""
        if isinstance(limit, User):
            return sum(other.seq < app.seq for other in limit.waiting)
        return sum(other.seq < app.seq for q in queues_below(limit) for other in q.waiting)

    def _make_runnable(self, app: App) -> None:
        app.runnable = True
        count_running(app, 1)
        for req in app.pending:
            self._add_shape(app, req.capability)
        self._requeue(app)

    def reset_requests(self, app_id: str) -> None:
        if self.partitions is not None:
            for pool in self.partitions.mirrors(app_id):
                for ask_id in pool.apps[app_id].ask_ids:
                    self.partitions.ask_pool.pop(ask_id, None)
                pool.reset_requests(app_id)
        app = self._app(app_id, "reset_requests")
        if app is None:
            return
        for req in list(app.pending):
            self._set_pending(app, req, False)
        for req in app.requests.values():
            if req.reserved_node is not None:
                self.unreserve(req.reserved_node)
            req.count = 0  # a node still held for it (preemption holds several) is let go at its heartbeat
        app.requests.clear()
        for ask_id in app.ask_ids:
            self.asks.pop(ask_id, None)
            self.located_asks.pop(ask_id, None)
        app.ask_ids.clear()

    def move_app(self, app_id: str, queue: str, user: str, groups: Sequence[str] = ()) -> Placement:
        """Moves the app to leaf `queue` (`yarn application -movetoqueue`), for `user` (in
        `groups`), or refuses with the reason. The target is checked as a submission is: it must
        be an existing leaf that is not draining and whose ACLs (its own or an ancestor's submit-
        or admin-acl) let the user in; and as FairScheduler checks a move: below the queue the
        source and target share, no queue may go over its `max` with the app's usage, nor (for an
        app that runs) over its `max-running-apps`. The app's usage, AM usage, pending requests
        and running-app count move with it at once; an app waiting for max-running-apps waits in
        the target, in submission order, unless the target lets it run."""
        app = self._app(app_id, "move_app")
        if app is None:
            return Placement(False, None, f"unknown app {app_id!r}")
        path = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
        target = self.queues.get(path)
        refusal = self._move_refusal(app, path, target, user, groups)
        if refusal or target is None:
            log.info("refused to move app %s to %s for user %s: %s", app_id, path, user, refusal)
            return Placement(False, None, refusal)
        source = app.queue
        if target is source:
            return Placement(True, path, "already in that queue")
        runs = app.runnable
        freed = self._take_out(app)
        self.enter_leaf(app, target)
        for q in target.ancestors_and_self():
            q.usage = vadd(q.usage, app.usage)
        target.am_usage = vadd(target.am_usage, app.am_usage)
        if runs or (app_limit(target) is None and (app.owner is None or not app.owner.full)):
            self._make_runnable(app)
        else:
            self._hold(app)
        if freed is not None:  # after the app is in: the queues above both count it again
            self._admit_waiting(freed)
        self._requeue_queues(source)
        for pool in self.partitions.mirrors(app_id) if self.partitions is not None else ():
            pool.move_app(app_id, path, user, groups)
        log.info("moved app %s of user %s from %s to %s", app_id, app.user, source.path, path)
        return Placement(True, path, "")

    def _move_refusal(self, app: App, path: str, target: Queue | None, user: str, groups: Sequence[str]) -> str:
        if target is None:
            return f"queue {path!r} does not exist"
        if not target.is_leaf:
            return f"queue {path!r} is a parent queue; apps run in leaf queues"
        if target.draining:
            return f"queue {path!r} is draining (removed from the configuration): it takes no apps"
        refusal = self._acl_refusal(path, user, groups)
        if refusal:
            return refusal.replace("may not submit to", "may not move apps to")
        shared = set(app.queue.ancestors_and_self())
        for q in target.ancestors_and_self():
            if q in shared:
                break
            if q.max is not None and not fits(vadd(q.usage, app.usage), q.max):
                over = [f"{n} {u} used + {a} of the app > max {m}" for n, u, a, m
                        in zip(self.types.names, q.usage, app.usage, q.max) if u + a > m]
                return f"queue {q.path} would go over its max: {'; '.join(over)}"
            if app.runnable and q.max_apps is not None and q.running_apps >= q.max_apps:
                return f"queue {q.path} runs its max-running-apps ({q.running_apps} of {q.max_apps})"
        limits = target.spec.user_limits
        if app.runnable and target.users is not None and limits is not None and target is not app.queue:
            owner = target.users.get(app.user)
            running = 0 if owner is None else owner.running_apps
            most = limits.of(app.user).max_running_apps if owner is None else owner.max_apps
            if most is not None and running >= most:
                return f"user {app.user} runs its max-running-apps in {target.path} ({running} of {most})"
        return ""

    def _take_out(self, app: App) -> Queue | None:
        """Takes the app's usage, AM usage, pending shapes and running count out of its queues
        (leaving it in none). Returns the highest queue whose max-running-apps it held others
        back by: the caller admits them (_admit_waiting)."""
        leaf = app.queue
        leaf.apps.pop(app.id, None)
        for q in leaf.ancestors_and_self():
            q.usage = vsub(q.usage, app.usage)
        leaf.am_usage = vsub(leaf.am_usage, app.am_usage)
        runs = app.runnable
        if runs:  # (with its user: its shapes count in the user's too)
            for req in app.pending:
                self._drop_shape(app, req.capability)
            app.runnable = False
        owner, app.owner = app.owner, None
        if owner is None:
            leaf.heap.remove(app)
        else:
            owner.heap.remove(app)
            owner.usage = vsub(owner.usage, app.usage)
            owner.apps -= 1
            if not owner.apps and leaf.users is not None:
                del leaf.users[owner.name]
            if self._rekey is not None:  # re-keyed with the batch: ties keep the eager order
                self._rekey.pop(owner, None)
                self._rekey[owner] = None
            else:  # its leaf's share comes from its users' sums
                self._push_queue(owner)
                self._requeue_queues(leaf)
        if not runs:
            leaf.waiting.pop(app, None)
            if owner is not None:
                owner.waiting.pop(app, None)
            return None
        freed = leaf if owner is not None and owner.full and owner.waiting else None
        for q in leaf.ancestors_and_self():
            q.running_apps -= 1
            if q.max_apps is not None and q.running_apps == q.max_apps - 1:
                freed = q
        if owner is not None:
            owner.running_apps -= 1
        return freed

    def set_blacklist(self, app_id: str, places: Sequence[str]) -> None:
        """The nodes (ids) and racks the app's AM has blacklisted: nothing of it is placed there,
        and a node reserved for one of its requests there is let go."""
        app = self._app(app_id, "set_blacklist")
        if app is not None:
            self._blacklist(app, frozenset(places))

    def update_blacklist(self, app_id: str, additions: Sequence[str] = (), removals: Sequence[str] = ()) -> None:
        """YARN's blacklist request of an allocate call: node ids and racks added to and removed
        from the app's blacklist (removals after additions, as YARN applies them)."""
        app = self._app(app_id, "update_blacklist")
        if app is not None:
            self._blacklist(app, app.blacklist.union(additions).difference(removals))

    def _blacklist(self, app: App, places: frozenset[str]) -> None:
        for pool in self.partitions.mirrors(app.id) if self.partitions is not None else ():
            pool._blacklist(pool.apps[app.id], places)
        app.blacklist = places
        for req in app.requests.values():
            node = req.reserved_node
            if node is not None and (node.id in places or node.rack in places):
                self.unreserve(node)


def _seq(app: App) -> int:
    return app.seq
