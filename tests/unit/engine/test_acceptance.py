"""Acceptance checks as data (issue 25): a good check parses and round-trips; every bad one
is refused with a message saying where and why; no input makes the parser fail otherwise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerocode.engine.acceptance import (
    MAX_STEPS,
    MAX_WAIT_MS,
    Check,
    CheckInvalid,
    parse_check,
)

TODO: dict[str, Any] = {
    "description": "Adding a todo shows it in the list",
    "steps": [
        {"goto": "/"},
        {"fill": {"label": "New todo"}, "value": "Buy milk"},
        {"press": {"role": "textbox", "name": "New todo"}, "key": "Enter"},
        {"click": {"role": "button", "name": "Add"}},
        {"select": {"css": "select#filter"}, "option": "All"},
        {"wait": 300},
        {"reload": True},
        {"newVisitor": True},
    ],
    "expect": [
        {"visible": {"text": "Buy milk"}},
        {"hidden": {"css": ".empty"}},
        {"text": {"css": "h1"}, "contains": "Todo"},
        {"count": {"css": "ul li"}, "equals": 1},
        {"url": {"equals": "/"}},
        {"attribute": {"label": "New todo"}, "name": "aria-invalid", "equals": "false"},
        {"noConsoleErrors": True},
    ],
}


def test_a_good_check_parses_and_round_trips() -> None:
    check = parse_check(TODO)
    assert isinstance(check, Check) and len(check.steps) == 8 and len(check.expect) == 7
    assert [s.action for s in check.steps[-2:]] == ["reload", "newVisitor"]
    assert check.steps[2].target is not None and check.steps[2].target.name == "New todo"
    assert check.to_json() == TODO
    assert parse_check(json.loads(json.dumps(check.to_json()))) == check


def with_(path: str, value: Any) -> dict[str, Any]:
    """TODO with one part replaced (``path`` like ``steps.1`` or ``expect.0``)."""
    check: dict[str, Any] = json.loads(json.dumps(TODO))
    part, index = path.split(".")
    check[part][int(index)] = value
    return check


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("not a check", "the check: an object"),
        ({**TODO, "run": "rm -rf /"}, "unknown field run"),
        ({**TODO, "description": " "}, "description: a non-empty string"),
        ({**TODO, "description": "x" * 201}, "at most 200 characters"),
        ({**TODO, "steps": [{"wait": 1}] * (MAX_STEPS + 1)}, "steps: at most 20"),
        ({**TODO, "expect": []}, "at least one expectation"),
        (with_("steps.0", {"goto": "https://evil.example/"}), "own site"),
        (with_("steps.0", {"goto": "//evil.example/x"}), "own site"),
        (with_("steps.0", {"goto": "/", "click": {"css": "a"}}), "exactly one of goto"),
        (with_("steps.5", {"wait": MAX_WAIT_MS + 1}), "1 to 5000"),
        (with_("steps.5", {"wait": True}), "milliseconds"),
        (with_("steps.6", {"reload": False}), "steps[6].reload: true"),
        (with_("steps.7", {"newVisitor": 1}), "steps[7].newVisitor: true"),
        (with_("steps.7", {"newVisitor": True, "path": "/x"}), "unknown field path"),
        (with_("steps.3", {"click": {"role": "marquee"}}), "steps[3].click.role: one of"),
        (with_("steps.3", {"click": {"css": "a", "text": "b"}}), "exactly one of role"),
        (with_("steps.3", {"click": {"css": "a", "name": "b"}}), "unknown field name"),
        (with_("steps.2", {"press": {"css": "input"}, "key": "Ctrl+Alt+Del"}), "one character"),
        (with_("steps.1", {"fill": {"label": "x"}}), "steps[1].value: a string"),
        (with_("steps.1", {"fill": {"label": "x\x00"}, "value": ""}), "no control characters"),
        (with_("expect.3", {"count": {"css": "li"}, "equals": -1}), "0 to 1000"),
        (with_("expect.2", {"text": {"css": "h1"}}), "exactly one of contains and equals"),
        (
            with_("expect.2", {"text": {"css": "h1"}, "contains": "a", "equals": "b"}),
            "exactly one of contains and equals",
        ),
        (with_("expect.5", {"attribute": {"css": "a"}, "name": "on click", "equals": ""}), "name"),
        (with_("expect.6", {"noConsoleErrors": False}), "noConsoleErrors: true"),
        (with_("expect.0", {"visible": {"text": "x"}, "equals": "y"}), "unknown field equals"),
    ],
)
def test_a_bad_check_is_refused_saying_where_and_why(bad: Any, says: str) -> None:
    with pytest.raises(CheckInvalid) as refused:
        parse_check(bad)
    assert says in refused.value.message
    assert refused.value.status == 400


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "description",
                    "steps",
                    "expect",
                    "goto",
                    "click",
                    "fill",
                    "value",
                    "wait",
                    "role",
                    "name",
                    "css",
                    "text",
                    "count",
                    "equals",
                    "contains",
                    "url",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(JSON)
def test_any_json_is_a_check_or_a_refusal_never_a_crash(raw: Any) -> None:
    try:
        check = parse_check(raw)
    except CheckInvalid as refused:
        assert refused.message
    else:
        assert parse_check(check.to_json()) == check
