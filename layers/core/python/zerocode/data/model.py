"""An app's data model: ``zerocode.data.json`` at the project root (issue 39, point 1).

The file is one of the app's files, so versions, diffs, restore, hand edits, the zip and the
model's window cover it as any other. It is data, never code: collections of typed fields,
optional seed records for previews, and one access rule per operation, which the platform
enforces on every request of the app's data API. Whoever writes it (a tool call, a code
block, a hand edit) gets the same validation, and a bad file is refused whole, saying where
and why (at most :data:`MAX_PROBLEMS` places at once, so one answer can fix them all)::

    {"collections": {"notes": {
        "fields": {"title": {"type": "text", "required": true, "max": 200},
                   "done": {"type": "bool"}},
        "rules": {"list": "owner", "read": "owner", "create": "signed-in",
                  "update": "owner", "delete": "owner"},
        "seed": [{"title": "Try the notes"}]}}}

docs/data.md describes the file, the rules and their bounds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

DATA_MODEL = "zerocode.data.json"
MAX_FILE_BYTES = 256 * 1024
MAX_COLLECTIONS = 20
MAX_FIELDS = 50  # per collection
MAX_RECORD_BYTES = 16 * 1024  # a record's fields as compact JSON, in UTF-8
MAX_SEED = 100  # seed records per collection
MAX_TEXT = MAX_RECORD_BYTES  # a text field's longest value when it sets no max
MAX_ENUM_VALUES = 100
MAX_VALUE_CHARS = 100  # an enum value
MAX_EMAIL = 254
MAX_URL = 2048
MAX_PROBLEMS = 10
# Collection names the platform keeps for itself: /api/apps/{id}/data/{space}/users lists
# the app's end users beside its collections.
PLATFORM_COLLECTIONS = frozenset({"users"})

FieldType = Literal["text", "number", "bool", "datetime", "email", "url", "enum"]
Rule = Literal["public", "signed-in", "owner", "nobody"]
Operation = Literal["list", "read", "create", "update", "delete"]
FIELD_TYPES: tuple[FieldType, ...] = ("text", "number", "bool", "datetime", "email", "url", "enum")
RULES: tuple[Rule, ...] = ("public", "signed-in", "owner", "nobody")
OPERATIONS: tuple[Operation, ...] = ("list", "read", "create", "update", "delete")
RESERVED = ("id", "createdAt", "updatedAt", "owner")  # every record's own, never a field
_NAME = re.compile(r"[a-z][A-Za-z0-9_]{0,39}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_BOUNDS = {"text", "number"}  # types that take min and max


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    required: bool = False
    min: float | None = None  # text: characters; number: the value
    max: float | None = None
    values: tuple[str, ...] = ()  # enum only


@dataclass(frozen=True)
class Collection:
    name: str
    fields: tuple[Field, ...]
    rules: Mapping[Operation, Rule]
    seed: tuple[Mapping[str, Any], ...] = ()

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class DataModel:
    collections: tuple[Collection, ...]

    def collection(self, name: str) -> Collection | None:
        return next((c for c in self.collections if c.name == name), None)


class DataModelInvalid(ValueError):
    """The file is refused: ``problems`` say where (a path into the file) and why."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(refusal_text(problems))


def refusal_text(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_PROBLEMS])
    more = len(problems) - MAX_PROBLEMS
    extra = f" (and {more} more)" if more > 0 else ""
    return f"{DATA_MODEL} is not a valid data model: {shown}{extra}"


def refusal(data: bytes) -> str | None:
    """Why ``data`` cannot be the app's data model (for a failed tool result, a refused hand
    edit), or None when it can."""
    try:
        parse(data)
    except DataModelInvalid as exc:
        return str(exc)
    return None


def parse(data: bytes) -> DataModel:
    """The data model in ``data``, or :class:`DataModelInvalid` naming every problem."""
    if len(data) > MAX_FILE_BYTES:
        raise DataModelInvalid([f"the file is {len(data)} bytes; at most {MAX_FILE_BYTES}"])
    try:
        raw = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataModelInvalid([f"not JSON: {_first_line(exc)}"]) from None
    problems: list[str] = []
    model = _model(raw, problems)
    if problems or model is None:
        raise DataModelInvalid(problems or ["not a data model"])
    return model


def _model(raw: Any, problems: list[str]) -> DataModel | None:
    if not isinstance(raw, dict):
        problems.append('the file must be a JSON object: {"collections": {...}}')
        return None
    _unknown(raw, {"collections"}, "", problems)
    found = raw.get("collections")
    if not isinstance(found, dict) or not found:
        problems.append("collections: an object of at least one collection, by name")
        return None
    collections = []
    for name, body in _bounded(found, MAX_COLLECTIONS, "collections", "collections", problems):
        collection = _collection(name, body, f"collections.{name}", problems)
        if collection is not None:
            collections.append(collection)
    return DataModel(tuple(collections))


def _collection(name: str, raw: Any, where: str, problems: list[str]) -> Collection | None:
    if not _NAME.fullmatch(name):
        problems.append(f"{where}: a collection's name is {_NAMING}")
    elif name in PLATFORM_COLLECTIONS:
        problems.append(
            f"{where}: {name} is the platform's (the app's own users, who sign in with "
            "auth.signUp / auth.signIn); name the collection otherwise, e.g. profiles"
        )
    if not isinstance(raw, dict):
        problems.append(f"{where}: an object with fields and rules")
        return None
    _unknown(raw, {"fields", "rules", "seed"}, where, problems)
    fields = _fields(raw.get("fields"), f"{where}.fields", problems)
    rules = _rules(raw.get("rules"), f"{where}.rules", problems)
    collection = Collection(name, tuple(fields), rules)
    seed = _seed(collection, raw.get("seed", []), f"{where}.seed", problems)
    return replace(collection, seed=tuple(seed))


def _fields(raw: Any, where: str, problems: list[str]) -> list[Field]:
    if not isinstance(raw, dict) or not raw:
        problems.append(f"{where}: an object of at least one field, by name")
        return []
    out = []
    for name, body in _bounded(raw, MAX_FIELDS, "fields", where, problems):
        found = _field(name, body, f"{where}.{name}", problems)
        if found is not None:
            out.append(found)
    return out


def _bounded(
    raw: dict[str, Any], most: int, what: str, where: str, problems: list[str]
) -> list[tuple[str, Any]]:
    """The first ``most`` entries of ``raw`` by name; one problem if it holds more."""
    if len(raw) > most:
        problems.append(f"{where}: {len(raw)} {what}; at most {most}")
    return [(str(name), body) for name, body in list(raw.items())[:most]]


def _field(name: str, raw: Any, where: str, problems: list[str]) -> Field | None:
    if name in RESERVED:
        problems.append(f"{where}: {name} is every record's own ({', '.join(RESERVED)})")
    elif not _NAME.fullmatch(name):
        problems.append(f"{where}: a field's name is {_NAMING}")
    if not isinstance(raw, dict):
        problems.append(f'{where}: an object such as {{"type": "text"}}')
        return None
    _unknown(raw, {"type", "required", "min", "max", "values"}, where, problems)
    kind = raw.get("type")
    if kind not in FIELD_TYPES:
        problems.append(f"{where}.type: {_shown(kind)} is not one of {', '.join(FIELD_TYPES)}")
        return None
    required = raw.get("required", False)
    if not isinstance(required, bool):
        problems.append(f"{where}.required: true or false")
        required = False
    low, high = (_bound(raw, key, kind, where, problems) for key in ("min", "max"))
    if low is not None and high is not None and low > high:
        problems.append(f"{where}: min {low:g} is above max {high:g}")
    values = _values(raw, kind, where, problems)
    return Field(name, kind, required, low, high, values)


def _bound(
    raw: dict[str, Any], key: str, kind: str, where: str, problems: list[str]
) -> float | None:
    if key not in raw:
        return None
    value = raw[key]
    if kind not in _BOUNDS:
        problems.append(f"{where}.{key}: only text and number fields take {key}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"{where}.{key}: a number")
        return None
    if kind == "text" and (value < 0 or value != int(value) or value > MAX_TEXT):
        problems.append(f"{where}.{key}: a whole number of characters, 0 to {MAX_TEXT}")
        return None
    return float(value)


def _values(raw: dict[str, Any], kind: str, where: str, problems: list[str]) -> tuple[str, ...]:
    if kind != "enum":
        if "values" in raw:
            problems.append(f"{where}.values: only enum fields take values")
        return ()
    values = raw.get("values")
    if (
        not isinstance(values, list)
        or not 0 < len(values) <= MAX_ENUM_VALUES
        or not all(isinstance(v, str) and 0 < len(v) <= MAX_VALUE_CHARS for v in values)
    ):
        problems.append(
            f"{where}.values: a list of 1 to {MAX_ENUM_VALUES} texts of 1 to "
            f"{MAX_VALUE_CHARS} characters"
        )
        return ()
    if len(set(values)) != len(values):
        problems.append(f"{where}.values: each value once")
    return tuple(values)


def _rules(raw: Any, where: str, problems: list[str]) -> dict[Operation, Rule]:
    rules: dict[Operation, Rule] = {}
    if not isinstance(raw, dict):
        problems.append(
            f"{where}: an object with a rule for each of {', '.join(OPERATIONS)} "
            f"(each one of {', '.join(RULES)})"
        )
        return rules
    _unknown(raw, set(OPERATIONS), where, problems)
    for operation in OPERATIONS:
        rule = raw.get(operation)
        if rule is None:
            problems.append(f"{where}.{operation}: missing (one of {', '.join(RULES)})")
        elif rule not in RULES:
            problems.append(f"{where}.{operation}: {_shown(rule)} is not one of {', '.join(RULES)}")
        elif operation == "create" and rule == "owner":
            problems.append(
                f"{where}.create: a record has no owner before it is created; "
                "signed-in makes the one who creates it its owner"
            )
        else:
            rules[operation] = rule
    return rules


def _seed(
    collection: Collection, raw: Any, where: str, problems: list[str]
) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        problems.append(f"{where}: a list of records")
        return []
    if len(raw) > MAX_SEED:
        problems.append(f"{where}: {len(raw)} records; at most {MAX_SEED}")
    out = []
    for i, record in enumerate(raw[:MAX_SEED]):
        found = record_problems(collection, record)
        problems.extend(f"{where}[{i}]{p}" for p in found)
        if not found:
            out.append(dict(record))
    return out


def record_problems(collection: Collection, record: Any, *, partial: bool = False) -> list[str]:
    """What is wrong with ``record`` as ``collection``'s fields (each problem starts with
    ``.field:`` or ``:``), empty when nothing is. ``partial``: a change of some fields (an
    update), so a required field may be absent."""
    if not isinstance(record, dict):
        return [": a record is a JSON object of its fields"]
    problems = [f".{name}: no such field" for name in record if collection.field(name) is None]
    for field in collection.fields:
        if field.name not in record or record[field.name] is None:
            if field.required and not partial:
                problems.append(f".{field.name}: required")
            continue
        why = value_problem(field, record[field.name])
        if why is not None:
            problems.append(f".{field.name}: {why}")
    size = record_bytes(record)
    if size > MAX_RECORD_BYTES:
        problems.append(f": the record is {size} bytes; at most {MAX_RECORD_BYTES}")
    return problems


def record_bytes(record: Mapping[str, Any]) -> int:
    """A record's size as bounded: its fields as compact JSON, in UTF-8."""
    return len(json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode())


def value_problem(field: Field, value: Any) -> str | None:
    """Why ``value`` cannot be ``field``'s, or None."""
    kind = field.type
    if kind == "bool":
        return None if isinstance(value, bool) else "true or false"
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "a number"
        if not math.isfinite(value):
            return "a finite number"
        return _within(field, value, "")
    if not isinstance(value, str):
        return {"enum": f"one of {', '.join(field.values)}"}.get(kind, "a text")
    if kind == "text":
        return _within(field, len(value), " characters") or (
            None
            if field.max is not None or len(value) <= MAX_TEXT
            else f"at most {MAX_TEXT} characters"
        )
    if kind == "enum":
        return None if value in field.values else f"one of {', '.join(field.values)}"
    if kind == "email":
        ok = len(value) <= MAX_EMAIL and _EMAIL.fullmatch(value) is not None
        return None if ok else "an email address"
    if kind == "url":
        parts = urlsplit(value) if len(value) <= MAX_URL else None
        ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.netloc)
        return None if ok else "an http or https address"
    return None if _datetime(value) else "a date and time (ISO 8601, e.g. 2026-12-05T10:00:00Z)"


def _within(field: Field, value: float, unit: str) -> str | None:
    if field.min is not None and value < field.min:
        return f"at least {field.min:g}{unit}"
    if field.max is not None and value > field.max:
        return f"at most {field.max:g}{unit}"
    return None


def _datetime(value: str) -> bool:
    if not 10 <= len(value) <= 40:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _unknown(raw: dict[str, Any], known: set[str], where: str, problems: list[str]) -> None:
    for key in raw:
        if key not in known:
            at = f"{where}.{key}" if where else str(key)
            problems.append(
                f"{at}: not part of a data model (known here: {', '.join(sorted(known))})"
            )


_NAMING = "a lower-case letter, then up to 39 letters, digits or _"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if value is not None else "nothing"
    return text if len(text) <= 40 else text[:39] + "…"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
