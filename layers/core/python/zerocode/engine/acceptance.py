"""Acceptance checks as data (issue 25, first part): what the model states a request must do,
in a form the platform can validate before anything runs and a browser can replay.

A check is a short description, declarative steps and expectations, all JSON:

    {"description": "Adding a todo shows it in the list",
     "steps": [{"goto": "/"},
               {"fill": {"label": "New todo"}, "value": "Buy milk"},
               {"click": {"role": "button", "name": "Add"}},
               {"wait": 300}],
     "expect": [{"visible": {"text": "Buy milk"}},
                {"count": {"css": "ul li"}, "equals": 1},
                {"noConsoleErrors": true}]}

A target names one element the way a user would find it — ``{"role", "name"}``,
``{"label"}``, ``{"text"}`` — or, last, ``{"css"}``. Everything is bounded (steps, waits,
string sizes) and confined to the app (``goto`` takes a path of its own origin), so a check
is data a hostile model cannot turn into work or reach. :func:`parse_check` refuses a bad
check with :class:`CheckInvalid`, whose message says where and why, for the model's failed
tool result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zerocode.errors import InvalidInput

MAX_STEPS = 20
MAX_EXPECT = 10
MAX_WAIT_MS = 5_000
MAX_TEXT = 300
MAX_DESCRIPTION = 200
ACTIONS = ("goto", "click", "fill", "press", "select", "wait", "reload", "newVisitor")
# Steps a data app's checks need (issue 39): ``{"reload": true}`` loads the page again, its
# session kept; ``{"newVisitor": true}`` forgets the visitor (cookies and storage) and loads
# the page again, as someone arriving for the first time would.
_BARE = ("reload", "newVisitor")
EXPECTATIONS = ("visible", "hidden", "text", "count", "url", "attribute", "noConsoleErrors")
TARGET_KINDS = ("role", "label", "text", "css")
# The ARIA roles a check may name (Playwright's get_by_role takes these).
ROLES = frozenset(
    [
        "alert",
        "button",
        "checkbox",
        "combobox",
        "dialog",
        "heading",
        "img",
        "link",
        "list",
        "listitem",
        "main",
        "navigation",
        "option",
        "progressbar",
        "radio",
        "row",
        "searchbox",
        "slider",
        "spinbutton",
        "status",
        "switch",
        "tab",
        "table",
        "tablist",
        "tabpanel",
        "textbox",
    ]
)
KEYS = frozenset(
    [
        "Enter",
        "Tab",
        "Escape",
        "Backspace",
        "Delete",
        "Space",
        "ArrowUp",
        "ArrowDown",
        "ArrowLeft",
        "ArrowRight",
        "Home",
        "End",
    ]
)
_PATH = re.compile(r"^/(?!/)[^\s\\]*$")
_ATTRIBUTE = re.compile(r"^[a-zA-Z_:][-a-zA-Z0-9_:.]{0,63}$")


class CheckInvalid(InvalidInput):
    """A check the platform will not run; the message says where and why."""


@dataclass(frozen=True)
class Target:
    kind: str  # one of TARGET_KINDS
    value: str  # the role, label, text or CSS selector
    name: str | None = None  # with a role: the accessible name

    def to_json(self) -> dict[str, str]:
        found = {self.kind: self.value}
        if self.name is not None:
            found["name"] = self.name
        return found


@dataclass(frozen=True)
class Step:
    action: str  # one of ACTIONS
    target: Target | None = None  # click, fill, press, select
    path: str | None = None  # goto
    value: str | None = None  # fill: the text; press: the key; select: the option
    ms: int | None = None  # wait

    def to_json(self) -> dict[str, Any]:
        if self.action in _BARE:
            return {self.action: True}
        if self.action == "goto":
            return {"goto": self.path}
        if self.action == "wait":
            return {"wait": self.ms}
        assert self.target is not None
        found: dict[str, Any] = {self.action: self.target.to_json()}
        if self.value is not None:
            found[_VALUE_OF[self.action]] = self.value
        return found


@dataclass(frozen=True)
class Expectation:
    kind: str  # one of EXPECTATIONS
    target: Target | None = None
    contains: str | None = None  # text, url
    equals: str | int | None = None  # text, count, url, attribute
    attribute: str | None = None  # attribute: its name

    def to_json(self) -> dict[str, Any]:
        if self.kind == "noConsoleErrors":
            return {"noConsoleErrors": True}
        if self.kind == "url":
            found: dict[str, Any] = {"url": {}}
            for key in ("contains", "equals"):
                if getattr(self, key) is not None:
                    found["url"][key] = getattr(self, key)
            return found
        assert self.target is not None
        found = {self.kind: self.target.to_json()}
        if self.attribute is not None:
            found["name"] = self.attribute
        for key in ("contains", "equals"):
            if getattr(self, key) is not None:
                found[key] = getattr(self, key)
        return found


@dataclass(frozen=True)
class Check:
    description: str
    steps: tuple[Step, ...]
    expect: tuple[Expectation, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "steps": [s.to_json() for s in self.steps],
            "expect": [e.to_json() for e in self.expect],
        }


_VALUE_OF = {"fill": "value", "press": "key", "select": "option"}


def parse_check(raw: object) -> Check:
    """``raw`` (decoded JSON) as a :class:`Check`, or CheckInvalid saying what is wrong."""
    body = _object(raw, "the check", {"description", "steps", "expect"})
    description = _text(body.get("description"), "description", MAX_DESCRIPTION)
    steps = _list(body.get("steps", []), "steps", MAX_STEPS)
    expect = _list(body.get("expect"), "expect", MAX_EXPECT)
    if not expect:
        raise CheckInvalid("expect: a check needs at least one expectation")
    return Check(
        description=description,
        steps=tuple(_step(s, f"steps[{i}]") for i, s in enumerate(steps)),
        expect=tuple(_expectation(e, f"expect[{i}]") for i, e in enumerate(expect)),
    )


def _step(raw: object, where: str) -> Step:
    action = _one_of(raw, where, ACTIONS)
    body = _object(raw, where, {action, _VALUE_OF.get(action, action)})
    if action == "goto":
        path = _text(body[action], f"{where}.goto", MAX_TEXT)
        if not _PATH.match(path):
            raise CheckInvalid(f"{where}.goto: a path of the app's own site, like /about")
        return Step("goto", path=path)
    if action in _BARE:
        if body[action] is not True:
            raise CheckInvalid(f"{where}.{action}: true")
        return Step(action)
    if action == "wait":
        ms = body[action]
        if isinstance(ms, bool) or not isinstance(ms, int) or not 0 < ms <= MAX_WAIT_MS:
            raise CheckInvalid(f"{where}.wait: milliseconds, 1 to {MAX_WAIT_MS}")
        return Step("wait", ms=ms)
    target = _target(body[action], f"{where}.{action}")
    if action == "click":
        return Step("click", target=target)
    key = _VALUE_OF[action]
    value = _text(body.get(key), f"{where}.{key}", MAX_TEXT, empty=action == "fill")
    if action == "press" and value not in KEYS and len(value) != 1:
        raise CheckInvalid(f"{where}.key: one character or one of {', '.join(sorted(KEYS))}")
    return Step(action, target=target, value=value)


def _expectation(raw: object, where: str) -> Expectation:
    kind = _one_of(raw, where, EXPECTATIONS)
    if kind == "noConsoleErrors":
        body = _object(raw, where, {kind})
        if body[kind] is not True:
            raise CheckInvalid(f"{where}.noConsoleErrors: true")
        return Expectation(kind)
    if kind == "url":
        url = _object(_object(raw, where, {kind})[kind], f"{where}.url", {"contains", "equals"})
        contains, equals = _either(url, f"{where}.url")
        return Expectation(kind, contains=contains, equals=equals)
    allowed = {
        "visible": {kind},
        "hidden": {kind},
        "count": {kind, "equals"},
        "text": {kind, "contains", "equals"},
        "attribute": {kind, "name", "contains", "equals"},
    }[kind]
    body = _object(raw, where, allowed)
    target = _target(body[kind], f"{where}.{kind}")
    if kind in ("visible", "hidden"):
        return Expectation(kind, target=target)
    if kind == "count":
        n = body.get("equals")
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 1000:
            raise CheckInvalid(f"{where}.equals: a count, 0 to 1000")
        return Expectation(kind, target=target, equals=n)
    attribute = None
    if kind == "attribute":
        attribute = _text(body.get("name"), f"{where}.name", 64)
        if not _ATTRIBUTE.match(attribute):
            raise CheckInvalid(f"{where}.name: an attribute name, like aria-invalid")
    contains, equals = _either(body, where)
    return Expectation(kind, target=target, contains=contains, equals=equals, attribute=attribute)


def _target(raw: object, where: str) -> Target:
    kind = _one_of(raw, where, TARGET_KINDS)
    body = _object(raw, where, {kind, "name"} if kind == "role" else {kind})
    value = _text(body[kind], f"{where}.{kind}", MAX_TEXT)
    if kind == "role":
        if value not in ROLES:
            raise CheckInvalid(f"{where}.role: one of {', '.join(sorted(ROLES))}")
        name = body.get("name")
        return Target(kind, value, None if name is None else _text(name, f"{where}.name", MAX_TEXT))
    return Target(kind, value)


def _either(body: dict[str, Any], where: str) -> tuple[str | None, str | None]:
    """Exactly one of ``contains`` and ``equals``, a string."""
    present = [k for k in ("contains", "equals") if k in body]
    if len(present) != 1:
        raise CheckInvalid(f"{where}: exactly one of contains and equals")
    value = _text(body[present[0]], f"{where}.{present[0]}", MAX_TEXT, empty=True)
    return (value, None) if present[0] == "contains" else (None, value)


def _one_of(raw: object, where: str, names: tuple[str, ...]) -> str:
    if not isinstance(raw, dict):
        raise CheckInvalid(f"{where}: an object")
    found = [n for n in names if n in raw]
    if len(found) != 1:
        raise CheckInvalid(f"{where}: exactly one of {', '.join(names)}")
    return found[0]


def _object(raw: object, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise CheckInvalid(f"{where}: an object")
    unknown = sorted(str(k) for k in raw if k not in allowed)
    if unknown:
        raise CheckInvalid(f"{where}: unknown field {unknown[0][:40]}")
    return raw


def _list(raw: object, where: str, most: int) -> list[Any]:
    if not isinstance(raw, list):
        raise CheckInvalid(f"{where}: a list")
    if len(raw) > most:
        raise CheckInvalid(f"{where}: at most {most}")
    return raw


def _text(raw: object, where: str, most: int, *, empty: bool = False) -> str:
    if not isinstance(raw, str) or (not empty and not raw.strip()):
        raise CheckInvalid(f"{where}: a non-empty string" if not empty else f"{where}: a string")
    if len(raw) > most:
        raise CheckInvalid(f"{where}: at most {most} characters")
    if any(ord(c) < 32 and c not in "\t\n" for c in raw):
        raise CheckInvalid(f"{where}: no control characters")
    return raw


def text_field(raw: object, where: str, most: int) -> str:
    """A bounded string of a check's record (a retirement's reason), checked as the schema's."""
    return _text(raw, where, most)
