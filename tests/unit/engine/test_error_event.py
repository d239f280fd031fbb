"""The error event's wire form (docs/api.md): phase and kind when the platform failed,
left out when they say nothing."""

from __future__ import annotations

import json

from zerocode.engine.events import ErrorEvent, event_data


def test_a_platform_failure_names_its_phase_and_kind() -> None:
    event = ErrorEvent("storage_unavailable", "full", phase="saving the step", kind="disk_full")
    assert json.loads(event_data(event)) == {
        "code": "storage_unavailable",
        "message": "full",
        "phase": "saving the step",
        "kind": "disk_full",
    }


def test_other_errors_keep_their_two_fields() -> None:
    assert json.loads(event_data(ErrorEvent("stopped", "stopped by the user"))) == {
        "code": "stopped",
        "message": "stopped by the user",
    }
