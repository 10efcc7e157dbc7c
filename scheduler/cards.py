"""A node's GPU cards: the free memory of each, and which cards a container's `gpu-mem` goes on.

The rule (docs/library.md, "GPU cards"), for a node that declares its cards (MiB per card):
- a request of `gpu-mem` g at most the node's card size goes on ONE card: the one with the least
  free memory that still holds g (best fit; the lowest index among equals);
- a multi-card request is a whole multiple k·C (k >= 2) of the card size C of a node whose cards
  all have the same size: it takes k entirely free cards (the lowest indices), the whole of each;
- any other request larger than every card of a node never goes on that node.

So what one container can get on a node now is a single number, its `reach`: the free memory
of the freest card, or, on a node of equal cards with w entirely free ones, w·C when that is
more. A request the node can hold at all (`holds`: one card's size, or a whole multiple of
equal cards) fits now exactly when its gpu-mem is at most the reach, and less free memory never
has a larger reach: the core's vector fit tests stay exact when the node's free vector carries
the reach in place of the node's free total (`room`), with `holds` checked where a container is
picked. Nodes without cards keep the node total and never reach this module.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from scheduler.resources import AMOUNT_LIMIT, Vector

GPU_MEM = "gpu-mem"
MAX_CARDS = 64


class Cards:
    """The cards of one node. `index` is the position of gpu-mem in the core's vectors."""

    __slots__ = ("sizes", "free", "index", "equal", "most_one", "limit")

    def __init__(self, sizes: Sequence[int], index: int, capacity: Vector) -> None:
        self.sizes = tuple(sizes)
        self.free = list(self.sizes)
        self.index = index
        self.equal = self.sizes[0] if len(set(self.sizes)) == 1 else 0  # C, or 0 when sizes differ
        self.most_one = max(self.sizes)
        # the node's capacity as a fit test sees it: the most one container can ever get
        most = self.equal * len(self.sizes) if self.equal else max(self.sizes)
        self.limit: Vector = capacity[:index] + (most,) + capacity[index + 1:]

    def reach(self) -> int:
        """The most gpu-mem one container can get on these cards now."""
        best = max(self.free)
        size = self.equal
        if size and best == size:
            whole = self.free.count(size)
            if whole > 1:
                return whole * size
        return best

    def room(self, free: Vector) -> Vector:
        """The node's free vector with gpu-mem replaced by the reach: what fit tests compare."""
        i = self.index
        return free[:i] + (self.reach(),) + free[i + 1:]

    def holds(self, request: Vector) -> bool:
        """Whether these cards could ever hold the request's gpu-mem (with all of them free)."""
        amount = request[self.index]
        if amount <= self.most_one:
            return True
        size = self.equal
        return bool(size) and amount % size == 0 and amount <= size * len(self.sizes)

    def choose(self, amount: int) -> tuple[int, ...] | None:
        """The cards a request of `amount` MiB takes under the rule above, or None if it cannot."""
        best, best_free = -1, 0
        for i, f in enumerate(self.free):
            if f >= amount and (best < 0 or f < best_free):
                best, best_free = i, f
        if best >= 0:
            return (best,)
        size = self.equal
        if not size or amount % size:
            return None
        k = amount // size
        whole = tuple(i for i, f in enumerate(self.free) if f == size)
        return whole[:k] if len(whole) >= k else None

    def charge(self, cards: tuple[int, ...], amount: int, sign: int) -> None:
        """Takes (sign 1) or gives back (sign -1) `amount` on `cards`: each card but the last up
        to its size, in order, the rest on the last (a multi-card request fills each; a running
        container restored onto cards it overfills is counted in full)."""
        left = amount
        for n, i in enumerate(cards):
            part = left if n == len(cards) - 1 else min(self.sizes[i], left)
            self.free[i] -= sign * part
            left -= part

    def count_fitting(self, amount: int, released: Iterable[tuple[tuple[int, ...], int]] = ()) -> int:
        """How many containers of `amount` MiB these cards would take one after another, once the
        (cards, MiB) of `released` running containers are given back (preemption's room)."""
        if amount <= 0:
            return AMOUNT_LIMIT
        saved, self.free = self.free, list(self.free)
        try:
            for cards, mib in released:
                self.charge(cards, mib, -1)
            n = 0
            while (chosen := self.choose(amount)) is not None:
                self.charge(chosen, amount, 1)
                n += 1
            return n
        finally:
            self.free = saved

    def fallback(self) -> tuple[int, ...]:
        """Where a container that runs already goes when no cards can hold it: the freest card
        (it is running, so it is counted even if that card is then over its size)."""
        return (max(range(len(self.free)), key=lambda i: (self.free[i], -i)),)

    def valid(self, cards: Sequence[int]) -> bool:
        return (0 < len(cards) <= len(self.sizes) and all(type(i) is int and 0 <= i < len(self.sizes) for i in cards)
                and len(set(cards)) == len(cards))

    def problem(self, given: object, amount: int) -> str:
        """Why a running container of `amount` MiB cannot be counted on the cards `given` (as its
        allocation tag names them), or "": they must be distinct cards of this node in a shape the
        rule gives, one card of at least `amount` MiB, or k cards of the one size C with k·C = amount."""
        if not isinstance(given, (list, tuple)) or not self.valid(given):
            return f"are not distinct card indices of a node with {len(self.sizes)} cards"
        if len(given) == 1:
            size = self.sizes[given[0]]
            return "" if amount <= size else f"are card {given[0]} of {size} MiB, less than {amount} MiB"
        if self.equal and amount == self.equal * len(given):
            return ""
        return f"are {len(given)} cards, but {amount} MiB is not {len(given)} whole cards of one size"

    def to_list(self) -> list[dict[str, int]]:
        return [{"size": s, "free": f} for s, f in zip(self.sizes, self.free)]


def card_sizes_problem(sizes: object) -> str:
    """Why `sizes` is not a card list (non-empty list of positive MiB amounts), or ""."""
    if not isinstance(sizes, (list, tuple)) or not sizes:
        return "cards must be a non-empty list of MiB per card"
    if len(sizes) > MAX_CARDS:
        return f"at most {MAX_CARDS} cards per node, got {len(sizes)}"
    for i, size in enumerate(sizes):
        if type(size) is not int or not 0 < size < AMOUNT_LIMIT:
            return f"cards[{i}]: must be a positive integer of MiB, got {size!r}"
    return ""


def no_card_message(node_id: str, amount: int, cards: Cards) -> str:
    """The `why` text for a request whose gpu-mem no card of the node holds now."""
    return f"no single card on node {node_id} has {amount} MiB free (largest free: {max(cards.free)})"
