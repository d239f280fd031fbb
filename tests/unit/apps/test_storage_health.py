"""CachedProbe: health asks storage at most once per period, whoever asks how often."""

from __future__ import annotations

import threading
import time

from zerocode.apps.storage_health import CachedProbe, StorageHealth


class Counting:
    """A probe that answers from a list and counts its calls (it may block on ``gate``)."""

    def __init__(self, *answers: StorageHealth) -> None:
        self.answers, self.calls = list(answers), 0
        self.gate = threading.Event()
        self.gate.set()

    def check(self) -> StorageHealth:
        self.calls += 1
        self.gate.wait(5)
        return self.answers[min(self.calls, len(self.answers)) - 1]


FULL = StorageHealth(("the data directory /d has 1.0 MB free, below the minimum of 64 MB",))


def test_the_answer_is_kept_for_the_period_then_asked_again() -> None:
    now = [100.0]
    probe = Counting(StorageHealth(), FULL, StorageHealth())
    cached = CachedProbe(probe, 5, clock=lambda: now[0])
    assert cached.check().ok and cached.check().ok and probe.calls == 1
    now[0] += 5
    found = cached.check()
    assert not found.ok and found.reason == FULL.problems[0] and probe.calls == 2
    now[0] += 4.9
    assert not cached.check().ok and probe.calls == 2
    now[0] += 0.1
    assert cached.check().ok and probe.calls == 3


def test_while_one_request_probes_the_others_get_the_last_answer_at_once() -> None:
    now = [0.0]
    probe = Counting(StorageHealth(), FULL)
    cached = CachedProbe(probe, 5, clock=lambda: now[0])
    cached.check()
    now[0] = 10.0
    probe.gate.clear()  # the next probe hangs, as a slow disk would
    slow = threading.Thread(target=cached.check)
    slow.start()
    while probe.calls < 2:
        time.sleep(0.001)
    assert cached.check().ok  # the previous answer, not a wait
    probe.gate.set()
    slow.join(5)
    assert not cached.check().ok and probe.calls == 2


def test_a_probe_that_raises_is_degraded_not_ok() -> None:
    class Broken:
        def check(self) -> StorageHealth:
            raise PermissionError("denied")

    found = CachedProbe(Broken(), 5).check()
    assert not found.ok and found.reason == "the storage probe failed: PermissionError"
