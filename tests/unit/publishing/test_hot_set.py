"""HotSetPublisher: the truth written first, the hot copy only where one exists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zerocode.publishing.hot_set import HotSetPublisher, backfill
from zerocode.publishing.pointers import SiteTarget

B1, B2 = SiteTarget("app1", "b1"), SiteTarget("app1", "b2")


class Store:
    def __init__(self, name: str, log: list[str], *, fail: bool = False) -> None:
        self.name, self.log, self.fail = name, log, fail
        self.items: dict[str, SiteTarget] = {}

    def point(self, pointer: str, target: SiteTarget) -> None:
        if self.fail:
            raise RuntimeError(f"{self.name} is down")
        self.log.append(f"{self.name} point {pointer}")
        self.items[pointer] = target

    def target(self, pointer: str) -> SiteTarget | None:
        return self.items.get(pointer)

    def remove(self, pointer: str) -> None:
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


def test_a_failed_hot_write_is_raised_after_the_truth_moved() -> None:
    pub, truth, hot, _ = make(hot_fails=True)
    hot.items["site:k"] = B1
    with pytest.raises(RuntimeError):
        pub.point("site:k", B2)
    assert truth.items["site:k"] == B2  # the retry writes both again


def test_promote_copies_the_truth() -> None:
    pub, _, hot, _ = make()
    assert not pub.promote("site:k")
    pub.point("site:k", B1)
    assert pub.promote("site:k") and hot.items["site:k"] == B1


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
