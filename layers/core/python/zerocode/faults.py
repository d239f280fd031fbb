"""Fault points: where the fault-injection tests kill the server or fail a store.

``ZEROCODE_FAULT_KILL=<point>`` makes the process SIGKILL itself the first time it reaches
that point: no cleanup, no ``finally``, exactly as a host failure or an OOM kill would end
it (tests/e2e/test_crash_points.py). ``ZEROCODE_FAULT_FAIL=<store>:<n>`` makes the n-th
write of a local store raise ``OSError``, as a storage outage would
(tests/e2e/test_truth_under_failure.py); ``<store>:<n>:ENOSPC`` gives it that errno, as a
full disk would (tests/e2e/test_full_disk.py). Unset (always, outside those tests) each is one
dictionary lookup.
"""

from __future__ import annotations

import errno
import os
import signal
from collections import Counter

STORES = frozenset({"transcript", "site_pointer", "build_output"})
_writes: Counter[str] = Counter()

POINTS = frozenset(
    {
        "before_user_commit",  # the turn is accepted; nothing is written yet
        "after_user_commit",  # the user's message is in the transcript and the display
        "mid_stream",  # the model's answer is streaming
        "after_tool",  # a tool ran; its step is not committed
        "after_step_commit",  # a step and its results are committed
        "during_build",  # the preview build's process is running
        "mid_restore",  # a restore wrote a file back; its note is not in the transcript
        "after_restore_note",  # a restore's note is in the transcript; its version is not
        "before_edit_write",  # an edit is journaled; its file is not written
        "mid_edit",  # an edit wrote its file; its note is not in the transcript
        "after_edit_note",  # an edit's note is in the transcript; its version is not
    }
)


def point(name: str) -> None:
    if os.environ.get("ZEROCODE_FAULT_KILL") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def write(store: str) -> None:
    """Called before each write of ``store``: raises on the write the variable names."""
    spec = os.environ.get("ZEROCODE_FAULT_FAIL")
    if not spec:
        return
    name, _, rest = spec.partition(":")
    if name != store:
        return
    nth, _, code = rest.partition(":")
    _writes[store] += 1
    if _writes[store] == int(nth or 1):
        number = getattr(errno, code, 0) if code else 0  # e.g. ENOSPC: a full disk
        message = f"injected failure of the {store} store (ZEROCODE_FAULT_FAIL)"
        raise OSError(number, message) if number else OSError(message)
