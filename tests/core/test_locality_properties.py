"""Delay scheduling against an oracle written here from the rule in docs/design.md ("Locality"):
on random clusters of racks, queues and requests naming hosts and racks, every decision keeps the
DRF order except for requests the rule lets wait, no request waits past its delays, none is placed
more loosely than its wait allows, and within a call none goes on a node less local than one the
call offers with room for it.

The oracle sees only what the core returns. It cannot see when the core started a request's
clock, so it bounds it: no earlier than the request's last container (or its start), no later
than the first time the oracle saw it passed over on a node it fitted. The first bound gives the
loosest level the core may have used (it may place no more loosely), the second the strictest
(it may pass over nothing that level takes).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config

NODE, RACK, ANY = 0, 1, 2
NAMES = ("vcores", "memory-mb")
EPS = 1e-9


# ---------------------------------------------------------------- the oracle's model of one request

@dataclass
class Req:
    app: str
    queue: str
    key: int
    shape: tuple[int, int]
    count: int
    nodes: dict[str, int]  # host -> count
    racks: dict[str, int]
    relax: bool
    delays: tuple[float, float]
    base: int = NODE  # the level its last container left (NODE at its start)
    reset: float = 0.0  # when it last got a container or started waiting
    first_skip: float | None = None  # when the oracle first saw it passed over since `reset`

    def locality(self, host: str, rack: str) -> int:
        if self.nodes.get(host, 0) > 0:
            return NODE
        return RACK if self.racks.get(rack, 0) > 0 else ANY

    def allows(self, host: str, rack: str) -> bool:
        """YARN's rule: only its own nodes and racks when it does not relax locality (racks relax here)."""
        if not self.nodes and not self.racks:
            return self.relax
        return self.locality(host, rack) != ANY or self.relax

    def start(self) -> int:
        best = NODE if any(c > 0 for c in self.nodes.values()) else RACK if any(
            c > 0 for c in self.racks.values()) else ANY
        return max(self.base, best)

    def level_after(self, waited: float) -> int:
        start = self.start()
        if start == ANY:
            return ANY
        node_s, rack_s = self.delays
        to_rack, to_any = (node_s, node_s + rack_s) if start == NODE else (0.0, rack_s)
        if start == NODE and waited < to_rack:
            return NODE
        return RACK if waited < to_any else ANY

    def loosest(self, now: float) -> int:
        return self.level_after(now - self.reset)

    def strictest(self, now: float) -> int:
        return self.level_after(0.0 if self.first_skip is None else now - self.first_skip)

    def must_take(self, host: str, rack: str, now: float) -> bool:
        """Whether the rule makes it take `host` at its turn, whatever its clock did."""
        return self.allows(host, rack) and self.locality(host, rack) <= self.strictest(now)

    def passed_over(self, host: str, rack: str, now: float) -> None:
        if self.allows(host, rack) and self.first_skip is None:
            self.first_skip = now

    def took(self, host: str, rack: str, now: float) -> None:
        """One container on `host`, counted off as YARN does."""
        where = self.locality(host, rack)
        if where == NODE:
            self.nodes[host] -= 1
        if where != ANY and self.racks.get(rack, 0) > 0:
            self.racks[rack] -= 1
        self.count -= 1
        self.base, self.reset, self.first_skip = where, now, None


@dataclass
class World:
    racks: dict[str, str]  # host -> rack
    capacity: dict[str, tuple[int, int]]
    weights: dict[str, int]
    free: dict[str, list[int]] = field(default_factory=dict)
    usage: dict[str, list[int]] = field(default_factory=dict)
    reqs: dict[tuple[str, int], Req] = field(default_factory=dict)

    def share(self, queue: str) -> float:
        total = [sum(c[i] for c in self.capacity.values()) for i in range(2)]
        return max(u / t for u, t in zip(self.usage[queue], total)) / self.weights[queue]

    def fits(self, req: Req, host: str) -> bool:
        return all(s <= f for s, f in zip(req.shape, self.free[host]))

    def place(self, req: Req, host: str, now: float) -> None:
        req.took(host, self.racks[host], now)
        self.free[host] = [f - s for f, s in zip(self.free[host], req.shape)]
        self.usage[req.queue] = [u + s for u, s in zip(self.usage[req.queue], req.shape)]
        assert min(self.free[host]) >= 0, f"{host} over-allocated"

    def waiting(self):
        return [r for r in self.reqs.values() if r.count > 0]


# ---------------------------------------------------------------- random clusters

DELAYS = st.sampled_from([0, 1, 2, 3, 5])


@st.composite
def clusters(draw):
    racks = draw(st.integers(1, 3))
    hosts = {f"h{i}": f"/r{draw(st.integers(0, racks - 1))}" for i in range(draw(st.integers(2, 7)))}
    capacity = {h: (draw(st.sampled_from([4, 8])), draw(st.sampled_from([4096, 8192]))) for h in hosts}
    queues = []
    for q in range(draw(st.integers(2, 4))):
        own = draw(st.one_of(st.none(), st.tuples(DELAYS, DELAYS)))
        requests = []
        for _ in range(draw(st.integers(1, 2))):
            shape = (draw(st.integers(1, 3)), draw(st.sampled_from([512, 1024, 2048])))
            count = draw(st.integers(1, 12))
            named = draw(st.lists(st.sampled_from(sorted(hosts)), max_size=3, unique=True))
            rack_only = draw(st.lists(st.sampled_from(sorted(set(hosts.values()))), max_size=1))
            relax = draw(st.booleans()) or not (named or rack_only)
            requests.append((shape, count, named, rack_only, relax))
        queues.append((draw(st.integers(1, 3)), own, requests))
    root_delays = draw(st.tuples(DELAYS, DELAYS))
    return hosts, capacity, queues, root_delays, draw(st.randoms(use_true_random=False))


def build(cluster) -> tuple[SchedulerCore, World, random.Random]:
    hosts, capacity, queues, root_delays, rnd = cluster
    lines = ["reservation: {starvation-timeout-s: null}", "queues:", "  root:",
             f"    node-locality-delay-s: {root_delays[0]}", f"    rack-locality-delay-s: {root_delays[1]}",
             "    children:"]
    for i, (weight, own, _) in enumerate(queues):
        delays = "" if own is None else f", node-locality-delay-s: {own[0]}, rack-locality-delay-s: {own[1]}"
        lines.append(f"      q{i}: {{weight: {weight}{delays}}}")
    core = SchedulerCore(parse_config("\n".join(lines) + "\n"), resource_types=list(NAMES))
    world = World(dict(hosts), dict(capacity), {f"root.q{i}": w for i, (w, _, _) in enumerate(queues)})
    for host, rack in hosts.items():
        core.add_node(f"{host}:8041", dict(zip(NAMES, capacity[host])), rack=rack)
        world.free[host] = list(capacity[host])
    for i, (_, own, requests) in enumerate(queues):
        queue, app = f"root.q{i}", f"app{i}"
        world.usage[queue] = [0, 0]
        assert core.submit_app(app, "u", f"q{i}").accepted
        for key, (shape, count, named, rack_only, relax) in enumerate(requests, start=1):
            amounts = dict(zip(NAMES, shape))
            racks = {hosts[h]: count for h in named} | {r: count for r in rack_only}
            for host in named:
                core.update_request(app, key, amounts, count, location=host, now=0)
            for rack in racks:
                core.update_request(app, key, amounts, count, location=rack, now=0)
            core.update_request(app, key, amounts, count, relax_locality=relax, now=0)
            world.reqs[(app, key)] = Req(app, queue, key, shape, count, {h: count for h in named}, racks, relax,
                                         own or root_delays)
    return core, world, rnd


def finish_some(core: SchedulerCore, world: World, rnd: random.Random, now: float) -> None:
    """A few containers end; their request asks for one more, as an AM asks again for a lost task."""
    for cid in rnd.sample(sorted(core.containers), min(len(core.containers), rnd.randint(0, 2))):
        c = core.containers[cid]
        host = c.node.id.split(":")[0]
        req = world.reqs[(c.app.id, c.key[0])]
        core.container_finished(cid)
        world.free[host] = [f + s for f, s in zip(world.free[host], req.shape)]
        world.usage[req.queue] = [u - s for u, s in zip(world.usage[req.queue], req.shape)]
        if req.count == 0:  # the core starts it anew: level and clock too
            req.base, req.reset, req.first_skip = NODE, now, None
        req.count += 1
        core.update_request(req.app, req.key, dict(zip(NAMES, req.shape)), req.count, relax_locality=req.relax,
                            now=now)


def check_placement(world: World, req: Req, host: str, now: float) -> None:
    rack = world.racks[host]
    assert req.allows(host, rack), f"{req.app}/{req.key} placed on {host}, which relax-locality forbids"
    assert world.fits(req, host), f"{req.app}/{req.key} does not fit {host}"
    where = req.locality(host, rack)
    assert where <= req.loosest(now), (f"{req.app}/{req.key} placed {('node', 'rack', 'off-switch')[where]} on "
                                       f"{host} at {now}, before its delays allow (last container at {req.reset})")


# ---------------------------------------------------------------- the properties

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(clusters())
def test_each_node_goes_to_the_lowest_share_that_may_take_it_and_no_request_waits_past_its_delays(cluster):
    """Node by node (a heartbeat at a time): each container goes to a queue no lower queue could
    have taken it from by the rule; a node left with room for a request is one the request may
    still pass over; and no container is placed more loosely than its request's wait allows."""
    core, world, rnd = build(cluster)
    for step in range(14):
        now = float(step)
        finish_some(core, world, rnd, now)
        hosts = sorted(world.racks)
        rnd.shuffle(hosts)
        for host in hosts:
            rack = world.racks[host]
            for a in core.on_heartbeat(f"{host}:8041", now=now):
                assert a.node_id == f"{host}:8041"  # one node decided alone: nowhere else to go
                req = world.reqs[(a.app_id, a.priority)]
                check_placement(world, req, host, now)
                chosen = world.share(req.queue)
                for other in world.waiting():
                    if other.queue != req.queue and world.share(other.queue) < chosen - EPS and world.fits(other, host):
                        assert not other.must_take(host, rack, now), (
                            f"{other.app}/{other.key} ({other.queue}, share {world.share(other.queue):.4f}) "
                            f"was passed over on {host} at {now} for {req.queue} ({chosen:.4f}), past its delays")
                        other.passed_over(host, rack, now)
                world.place(req, host, now)
            for other in world.waiting():  # the heartbeat ended: whatever fits was passed over
                if world.fits(other, host):
                    assert not other.must_take(host, rack, now), (
                        f"{other.app}/{other.key} fits {host} at {now} and its wait is over, but it was left waiting")
                    other.passed_over(host, rack, now)
            assert tuple(world.free[host]) == tuple(
                c - u for c, u in zip(core.nodes[f"{host}:8041"].capacity, core.nodes[f"{host}:8041"].allocated))


@SETTINGS
@given(clusters())
def test_within_a_call_no_container_goes_on_a_node_less_local_than_one_the_call_offers_with_room(cluster):
    """Many nodes a call (the shim's way): every container goes on a node of the call, on the most
    local one with room for it, and never more loosely than its request's wait allows."""
    core, world, rnd = build(cluster)
    for step in range(14):
        now = float(step)
        finish_some(core, world, rnd, now)
        offered = [h for h in sorted(world.racks) if rnd.random() < 0.8] or sorted(world.racks)[:1]
        for a in core.on_nodes([f"{h}:8041" for h in offered], now=now):
            host = a.node_id.split(":")[0]
            assert host in offered
            req = world.reqs[(a.app_id, a.priority)]
            check_placement(world, req, host, now)
            where = req.locality(host, world.racks[host])
            better = [h for h in offered if world.fits(req, h) and req.allows(h, world.racks[h])
                      and req.locality(h, world.racks[h]) < where]
            assert not better, f"{req.app}/{req.key} placed on {host} while {better} of the call were more local"
            world.place(req, host, now)
