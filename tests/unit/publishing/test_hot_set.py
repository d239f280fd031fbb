"""HotSetPublisher: the truth written first, the hot copy only where one exists; promotion
into a bounded hot set (a ring of places, oldest promotion demoted first, recent ones kept)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zerocode.publishing.hot_set import (
    HotSetPublisher,
    Promotion,
    RingFull,
    Slot,
    backfill,
)
from zerocode.publishing.pointers import SiteTarget

B1, B2, B3 = SiteTarget("app1", "b1"), SiteTarget("app1", "b2"), SiteTarget("app1", "b3")
KEEP = 100.0


class Store:
    def __init__(
        self, name: str, log: list[str], *, fail: bool = False, fail_remove: bool = False
    ) -> None:
        self.name, self.log, self.fail, self.fail_remove = name, log, fail, fail_remove
        self.items: dict[str, SiteTarget] = {}

    def point(self, pointer: str, target: SiteTarget) -> None:
        if self.fail:
            raise RuntimeError(f"{self.name} is down")
        self.log.append(f"{self.name} point {pointer}")
        self.items[pointer] = target

    def target(self, pointer: str) -> SiteTarget | None:
        return self.items.get(pointer)

    def remove(self, pointer: str) -> None:
        if self.fail_remove:
            raise RuntimeError(f"{self.name} is down")
        self.log.append(f"{self.name} remove {pointer}")
        self.items.pop(pointer, None)


def make(*, hot_fails: bool = False) -> tuple[HotSetPublisher, Store, Store, list[str]]:
    log: list[str] = []
    truth, hot = Store("truth", log), Store("hot", log, fail=hot_fails)
    return HotSetPublisher(truth, hot), truth, hot, log


def test_a_new_key_goes_to_the_truth_only() -> None:
    pub, truth, hot, _ = make()
    pub.point("site:k", B1)
    assert truth.items == {"site:k": B1} and hot.items == {}
    assert pub.target("site:k") == B1


def test_a_key_of_the_hot_set_is_updated_after_the_truth() -> None:
    pub, truth, hot, log = make()
    hot.items["site:k"] = B1  # in the hot set from before
    pub.point("site:k", B2)
    assert log == ["truth point site:k", "hot point site:k"]
    assert truth.items["site:k"] == hot.items["site:k"] == B2
    pub.point("site:k", B1)  # rollback
    assert hot.items["site:k"] == B1


def test_remove_takes_the_hot_copy_first() -> None:
    pub, _, hot, log = make()
    hot.items["site:k"] = B1
    pub.point("site:k", B1)
    log.clear()
    pub.remove("site:k")
    assert log == ["hot remove site:k", "truth remove site:k"]
    assert pub.target("site:k") is None and hot.items == {}


def test_a_hot_copy_that_cannot_be_updated_is_removed_and_the_edge_reads_the_truth() -> None:
    pub, truth, hot, log = make(hot_fails=True)
    hot.items["site:k"] = B1
    pub.point("site:k", B2)  # not raised: the truth moved and no stale copy is left
    assert truth.items["site:k"] == B2 and "site:k" not in hot.items
    assert log == ["truth point site:k", "hot remove site:k"]


def test_a_hot_copy_that_can_be_neither_updated_nor_removed_is_raised() -> None:
    pub, truth, hot, _ = make(hot_fails=True)
    hot.fail_remove = True
    hot.items["site:k"] = B1
    with pytest.raises(RuntimeError):
        pub.point("site:k", B2)
    assert truth.items["site:k"] == B2  # the retry writes both again


def test_promote_copies_the_truth() -> None:
    pub, _, hot, _ = make()
    assert pub.promote("site:k") is Promotion.NO_POINTER
    pub.point("site:k", B1)
    assert pub.promote("site:k") is Promotion.PROMOTED and hot.items["site:k"] == B1
    pub.point("site:k", B2)  # from now on every write reaches the hot copy too
    assert hot.items["site:k"] == B2


# Promotion into a bounded hot set


class Ring:
    """The ledger's contract in memory (AWS: HotSetLedger, in the pointer table)."""

    def __init__(self, truth: Store, slots: int) -> None:
        self.truth, self.slots = truth, slots
        self.next = 0
        self.places: dict[int, tuple[str, int, float]] = {}
        self.latest: dict[str, int] = {}

    def take(self, pointer: str, now: float, keep_after: float) -> Slot:
        place = self.next % self.slots
        held = self.places.get(place)
        if held is not None and held[2] >= keep_after:
            raise RingFull(place)  # before counting: the oldest stays next in line
        self.next += 1
        self.places[place] = (pointer, self.next, now)
        return Slot(self.next, (held[0], held[1]) if held else None)

    def holds(self, pointer: str, seq: int) -> bool:
        return pointer in self.truth.items and self.latest.get(pointer) == seq

    def mark(self, pointer: str, seq: int) -> bool:
        if pointer not in self.truth.items:
            return False
        self.latest[pointer] = seq
        return True

    def unmark(self, pointer: str, seq: int) -> None:
        if self.latest.get(pointer) == seq:
            del self.latest[pointer]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Measured(Store):
    bytes = 0

    def size(self) -> Measured:
        return self


def bounded(
    slots: int, *, high_water: int = 1_000_000
) -> tuple[HotSetPublisher, Store, Measured, Clock]:
    log: list[str] = []
    truth, hot, clock = Store("truth", log), Measured("hot", log), Clock()
    pub = HotSetPublisher(
        truth,
        hot,
        Ring(truth, slots),
        keep_seconds=KEEP,
        high_water_bytes=high_water,
        now=clock,
    )
    return pub, truth, hot, clock


def promote_at(pub: HotSetPublisher, clock: Clock, when: float, *keys: str) -> list[Promotion]:
    clock.now = when
    return [pub.promote(f"site:{k}") for k in keys]


def test_past_its_places_the_oldest_promotion_is_demoted_first() -> None:
    pub, truth, hot, clock = bounded(3)
    for k in "abcde":
        truth.items[f"site:{k}"] = B1
    assert promote_at(pub, clock, 0, "a") == [Promotion.PROMOTED]
    promote_at(pub, clock, 10, "b")
    promote_at(pub, clock, 20, "c")
    assert set(hot.items) == {"site:a", "site:b", "site:c"}
    assert promote_at(pub, clock, 200, "d", "e") == [Promotion.PROMOTED] * 2
    assert set(hot.items) == {"site:c", "site:d", "site:e"}  # a, then b: oldest first
    assert truth.items.keys() >= {"site:a", "site:b"}  # demoted: served from the table


def test_a_recent_promotion_is_never_demoted_and_the_new_key_waits() -> None:
    pub, truth, hot, clock = bounded(2)
    for k in "abc":
        truth.items[f"site:{k}"] = B1
    promote_at(pub, clock, 0, "a", "b")
    assert promote_at(pub, clock, KEEP - 1, "c") == [Promotion.FULL]
    assert set(hot.items) == {"site:a", "site:b"}  # both rollbacks stay instant
    assert truth.items["site:c"] == B1  # c is served from the table, within 90 s
    assert promote_at(pub, clock, KEEP + 50, "c") == [Promotion.PROMOTED]
    assert set(hot.items) == {"site:b", "site:c"}


def test_a_key_promoted_again_keeps_its_later_place() -> None:
    pub, truth, hot, clock = bounded(3)
    for k in "abcd":
        truth.items[f"site:{k}"] = B1
    promote_at(pub, clock, 0, "a")  # place 0
    promote_at(pub, clock, 200, "b")  # place 1
    promote_at(pub, clock, 400, "a")  # place 2: a again (a second rollback)
    promote_at(pub, clock, 600, "c")  # place 0, held by a's first promotion: a stays
    assert set(hot.items) == {"site:a", "site:b", "site:c"}
    promote_at(pub, clock, 800, "d")  # place 1: b, the oldest in force, goes
    assert set(hot.items) == {"site:a", "site:c", "site:d"}


def test_a_removed_pointer_leaves_its_place_without_a_demotion() -> None:
    pub, truth, hot, clock = bounded(1)
    truth.items["site:a"] = truth.items["site:b"] = B1
    promote_at(pub, clock, 0, "a")
    pub.remove("site:a")  # the app was deleted: both copies go
    hot.log.clear()
    assert promote_at(pub, clock, 500, "b") == [Promotion.PROMOTED]
    assert hot.log == ["hot point site:b"] and set(hot.items) == {"site:b"}


def test_a_store_past_its_high_water_takes_no_promotion() -> None:
    pub, truth, hot, clock = bounded(10, high_water=4_000)
    truth.items["site:a"] = B1
    hot.bytes = 4_000
    assert promote_at(pub, clock, 0, "a") == [Promotion.FULL]
    assert hot.items == {}
    hot.bytes = 3_999
    assert promote_at(pub, clock, 0, "a") == [Promotion.PROMOTED]


def test_a_pointer_the_truth_lacks_takes_no_place() -> None:
    pub, _, hot, clock = bounded(1)
    assert promote_at(pub, clock, 0, "a") == [Promotion.NO_POINTER]
    assert isinstance(pub.ledger, Ring) and pub.ledger.next == 0 and hot.items == {}


class Racing(Store):
    """A truth that a publish moves right after the promotion read it."""

    def __init__(self, log: list[str], moves: list[SiteTarget | None]) -> None:
        super().__init__("truth", log)
        self.moves = moves
        self.reads = 0

    def target(self, pointer: str) -> SiteTarget | None:
        self.reads += 1
        if self.reads > 1 and self.moves:
            moved = self.moves.pop(0)
            if moved is None:
                self.items.pop(pointer, None)
            else:
                self.items[pointer] = moved
        return self.items.get(pointer)


@pytest.mark.parametrize(
    ("moves", "outcome", "hot_after"),
    [
        ([B2], Promotion.PROMOTED, B2),  # a deploy landed between: its build is copied
        ([None], Promotion.NO_POINTER, None),  # the app was deleted meanwhile
        ([B2, B3, B1, B2], Promotion.MOVING, None),  # still moving: the table serves it
    ],
)
def test_promotion_copies_what_the_truth_names_after_the_copy(
    moves: list[SiteTarget | None], outcome: Promotion, hot_after: SiteTarget | None
) -> None:
    log: list[str] = []
    truth, hot = Racing(log, moves), Store("hot", log)
    truth.items["site:k"] = B1
    assert HotSetPublisher(truth, hot).promote("site:k") is outcome
    assert hot.items.get("site:k") == hot_after


def test_a_failed_copy_is_raised_and_leaves_no_hot_copy() -> None:
    log: list[str] = []
    truth, hot = Store("truth", log), Store("hot", log, fail=True)
    truth.items["site:k"] = B1
    with pytest.raises(RuntimeError):
        HotSetPublisher(truth, hot).promote("site:k")
    assert hot.items == {} and log == ["hot remove site:k"]


class Walkable(Store):
    def pointers(self, prefix: str) -> Iterator[tuple[str, SiteTarget | None]]:
        return iter([(k, v) for k, v in self.items.items() if k.startswith(prefix)])

    def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
        return self.items.pop(pointer, None) == expected

    def point_if(self, pointer: str, target: SiteTarget, expected: SiteTarget | None) -> bool:
        if self.items.get(pointer) != expected:
            return False
        self.point(pointer, target)
        return True


def test_backfill_copies_what_the_truth_lacks_and_never_overwrites() -> None:
    log: list[str] = []
    hot, truth = Walkable("hot", log), Walkable("truth", log)
    hot.items = {"site:a": B1, "preview:b": B1, "site:c": B1}
    truth.items = {"site:c": B2}  # written since: the truth's is newer
    assert backfill(hot, truth) == 2
    assert truth.items == {"site:a": B1, "preview:b": B1, "site:c": B2}
    assert backfill(hot, truth) == 0  # repeated: nothing more
