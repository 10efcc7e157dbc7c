"""The configured queue tree as the core holds it: building it from a config, each queue's
weights, max and max-am-share at the current capacity (recomputed once after nodes change), and
queues re-created draining for apps a config no longer places."""
from __future__ import annotations


from scheduler.config import CREATED, DEFAULT_MAX_AM_SHARE, ConfigError, QueueConfig, QueueSpec
from scheduler.hdrf import QUANTUM
from scheduler.locality import delays_of
from scheduler.model import Queue, User
from scheduler.partitions import labels_of
from scheduler.queue_limits import UNLIMITED
from scheduler.reservations import Reservations
from scheduler.resources import LinearForm, QuantisedRatio, Vector, vmin


class QueueTree(Reservations):
    """The queue tree built from the config, and its limits at the current capacity."""

    def _install(self, config: QueueConfig) -> None:
        config.check_resources(self.types.names)
        divided = config.resources or self.types.names
        missing = [r for r in divided if r not in self.types.index]
        if missing:
            raise ConfigError([f"resources: {r}: not a resource type of the cluster "
                               f"({', '.join(self.types.names)})" for r in missing], config.source)
        self.config = config
        self.divided = frozenset(divided)
        self._forms.clear()  # (scales depend on the divided types)
        self._ratios.clear()
        self._created_limits.clear()
        self.timeout = config.starvation_timeout_s
        self.queues = {}
        self._built = []
        self._view = None  # (rebuilt at the next placement, once for the whole tree)
        self.root = self._build(config.root, None)

    def _build(self, spec: QueueSpec, parent: Queue | None, dynamic: bool = False, path: str | None = None) -> Queue:
        """The queue of `spec` (at `path`: a leaf of the shared spec config.CREATED), and its children's."""
        q = Queue(spec, parent, self.types.zero, dynamic=dynamic, path=path)
        q.locality_delays = delays_of(spec, None if parent is None else parent.locality_delays)
        q.labels = labels_of(spec, None if parent is None else parent.labels)
        self.queues[q.path] = q
        self._built.append(q.path)
        if self._view is not None:
            self._view.add(q.path, q.is_leaf)
        if parent is not None:
            parent.children[q.path.rpartition(".")[2]] = q
            parent.nested = True  # (a parent re-created draining has a leaf's spec: _keep_draining)
        if spec is CREATED and parent is not None:
            self._sibling_limits(q, parent)
        else:
            self._limits(q)  # before the children's: theirs depend on their parent's scale
        for child in spec.children:
            self._build(child, q)
        return q

    def take_built(self) -> list[str]:
        """The paths of the queues built since the last call, parents first: those placement
        created, those re-created for recovered apps (a draining queue re-created at its own path
        among them), or the whole tree after a reload."""
        built, self._built = self._built, []
        return built

    def _limits(self, q: Queue) -> None:
        """Per-queue multipliers for its share and its effective max, from the current capacity."""
        spec, names, cap = q.spec, self.types.names, self.capacity
        q.scale, q.weigh = self._weighed(spec.weight)
        if spec.min:
            inv = tuple(1.0 / spec.min[n] if spec.min.get(n) else 0.0 for n in names)
            q.min_inv = inv if any(inv) else None
        else:
            q.min_inv = None
        q.app_weigh = self._weighed(1.0)[1]
        for user in (q.users or {}).values():
            self._weigh_user(user, q)
        if q.parent is not None and q.parent.parent is not None:  # (the root keeps no sums)
            # a leaf measures in resource units, a parent (or a leaf with users) in its own share units
            q.up_raw = self._ratio(q.parent.scale)
            q.up = (q.up_raw if spec.is_leaf and q.users is None
                    else self._ratio(tuple([p / s if s else 0.0 for p, s in zip(q.parent.scale, q.scale)])))
        else:
            q.up = q.up_raw = None
        if not spec.max and spec.max_fraction is None:
            q.max = None
        else:
            limit = []
            for name, total in zip(names, cap):
                value = spec.max.get(name, spec.max_fraction)
                limit.append(UNLIMITED if value is None else int(total * value) if isinstance(value, float) else value)
            q.max = tuple(limit)
        if q.is_leaf:
            self._am_limit(q)

    def _sibling_limits(self, leaf: Queue, parent: Queue) -> None:
        """A created leaf's limits: those of the leaves created under the same parent before it
        (one spec, one parent, one capacity: _limits gives them all the same numbers), worked out
        once per parent until the capacity or the tree changes, instead of once per leaf."""
        shared = self._created_limits.get(parent)
        if shared is None:
            self._limits(leaf)
            self._created_limits[parent] = (leaf.scale, leaf.weigh, leaf.min_inv, leaf.app_weigh, leaf.up_raw,
                                            leaf.up, leaf.max, leaf.am_share, leaf.am_limit)
        else:
            (leaf.scale, leaf.weigh, leaf.min_inv, leaf.app_weigh, leaf.up_raw,
             leaf.up, leaf.max, leaf.am_share, leaf.am_limit) = shared

    def _weigh_user(self, user: User, leaf: Queue) -> None:
        """A user's share function, weighted by its weight as a queue's is by its own, and its
        direction in its leaf's units, as _limits gives a leaf queue's in its parent's."""
        user.weigh = self._weighed(user.weight)[1]
        user.up = user.up_raw = self._ratio(leaf.scale)

    def _weighed(self, weight: float | dict[str, float]) -> tuple[tuple[float, ...], LinearForm]:
        """The scale (per-resource multipliers) and share function of `weight` at the current
        capacity; one pair per distinct weight, not per queue."""
        if self._forms_capacity != self.capacity:
            self._forms.clear()
            self._ratios.clear()
            self._forms_capacity = self.capacity
        key: object = tuple(sorted(weight.items())) if isinstance(weight, dict) else weight
        forms = self._forms.get(key)
        if forms is None:
            scale = self.policy.scale(self.types.names, self.divided, self.capacity, weight)
            forms = self._forms[key] = (scale, LinearForm(scale, self.policy.aggregate))
        return forms

    def _ratio(self, direction: tuple[float, ...]) -> QuantisedRatio:
        """The quantised direction function of `direction` (in its parent's units); shared alike."""
        ratio = self._ratios.get(direction)
        if ratio is None:
            ratio = self._ratios[direction] = QuantisedRatio(tuple([x * QUANTUM for x in direction]))
        return ratio

    def _am_limit(self, leaf: Queue) -> None:
        """What max-am-share lets the leaf's AMs hold: its share (the leaf's own, else its nearest
        ancestor's, else DEFAULT_MAX_AM_SHARE) of the most the leaf may hold, per resource: the
        smallest max of the leaf and its ancestors, else the cluster's capacity. Ancestors' limits
        are computed first (_build, _refresh), so theirs are current."""
        share: float | None = None
        room = self.capacity
        q: Queue | None = leaf
        while q is not None:
            if share is None:
                share = q.spec.max_am_share
            if q.max is not None:
                room = vmin(room, q.max)
            q = q.parent
        leaf.am_share = DEFAULT_MAX_AM_SHARE if share is None else share
        leaf.am_limit = tuple(int(v * leaf.am_share) for v in room)

    def _keep_draining(self, path: str, old: Queue | None = None) -> Queue:
        """Re-creates a queue the config lacks but that holds apps YARN runs (a reload dropped it,
        or the core restarted with a file without it), and any missing parents: draining (its apps
        run on, no new ones come) unless it is a dynamic queue. `old`: the queue it was, whose
        weight and order it keeps."""
        parent_path = path.rsplit(".", 1)[0]
        parent = self.queues.get(parent_path) or self._keep_draining(parent_path, old and old.parent)
        spec = QueueSpec(path=path, weight=old.spec.weight, order=old.spec.order, user_limits=old.spec.user_limits,
                         node_locality_delay_s=old.spec.node_locality_delay_s,
                         rack_locality_delay_s=old.spec.rack_locality_delay_s) if old else QueueSpec(path=path)
        dynamic = old is not None and old.dynamic
        q = self._build(spec, parent, dynamic=dynamic)
        q.draining = not dynamic
        if q.draining and self._view is not None:
            self._view.remove(path)
        return q

    def _set_capacity(self, capacity: Vector) -> None:
        self.capacity = capacity
        self._created_limits.clear()
        self._placeable.clear()
        self._placeable_bits = None
        self._stale = True  # shares are recomputed once, at the next decision, not per node added

    def _refresh(self) -> None:
        self._created_limits.clear()  # (a leaf created since the capacity changed took its parent's old scale)
        for q in self.queues.values():
            self._limits(q)
        self._reset_keys()
        for app in self.apps.values():
            self._requeue(app)
        self._stale = False
