"""The platform's own access probe of an app's data (issue 39, point 5; docs/data.md).

The rules are enforced on every request (:mod:`.access`); this proves, in a browser, that
what the data model declares keeps each visitor's records their own. For every collection
a probe is derived from the data model in force (never stored, so never retired):

- a collection with an ``owner`` rule on any operation keeps records of their own. Visitor
  A signs up and creates a record; visitor B, signed up too, must not read, change or
  delete it, nor see it in a list. A rule of ``public`` or ``signed-in`` on one of those
  operations lets B do it, and the probe says so: that is the leak the rules declared;
- every operation whose rule is ``signed-in`` or ``owner`` refuses a visitor who is not
  signed in (401).

What each visitor saw comes back as HTTP statuses; :func:`problems` words what failed for
the model, which repairs it like any problem of the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zerocode.data.model import Collection, DataModel, Field

REFUSED = (401, 403, 404)
TOUCH = ("read", "update", "delete")


@dataclass(frozen=True)
class Probe:
    collection: str
    record: dict[str, Any]  # a record A creates (valid for the collection's fields)
    personal: bool  # a rule is owner: B must not touch A's record
    creatable: bool  # A can create one (create is public or signed-in)
    signed_in_only: tuple[str, ...]  # list / create: refused to a visitor not signed in


def probes(model: DataModel) -> list[Probe]:
    found = []
    for c in model.collections:
        personal = "owner" in c.rules.values()
        closed = tuple(op for op in ("list", "create") if c.rules.get(op) in ("signed-in", "owner"))
        if not personal and not closed:
            continue
        creatable = c.rules.get("create") in ("public", "signed-in")
        found.append(Probe(c.name, sample(c), personal, creatable, closed))
    return found


def sample(collection: Collection) -> dict[str, Any]:
    """A record of the collection's fields that its bounds accept: every required field,
    or the first field when none is."""
    chosen = [f for f in collection.fields if f.required] or list(collection.fields[:1])
    return {f.name: _value(f) for f in chosen}


def _value(field: Field) -> Any:
    if field.type == "number":
        low = field.min if field.min is not None else None
        high = field.max if field.max is not None else None
        return low if low is not None else (high if high is not None else 1)
    if field.type == "bool":
        return True
    if field.type == "datetime":
        return "2026-01-01T00:00:00Z"
    if field.type == "email":
        return "probe@example.com"
    if field.type == "url":
        return "https://example.com/"
    if field.type == "enum":
        return field.values[0]
    text = "zerocode access probe"
    least = int(field.min or 0)
    most = int(field.max) if field.max is not None else len(text)
    return (text * (least // len(text) + 1))[: max(least, min(len(text), most))]


def problems(probe: Probe, rules: Mapping[str, str], seen: Mapping[str, Any]) -> list[str]:
    """What the probe's visitors were let do that the data model says they must not, for
    the model to repair (``seen``: the statuses each visitor got, :data:`PROBE_JS`'s)."""
    c = probe.collection
    found = []
    for op in probe.signed_in_only:
        status = seen.get(f"anonymous_{op}")
        if status is not None and status not in REFUSED:
            found.append(
                f"access: a visitor who is not signed in could {op} {c} (HTTP {status}), "
                f"though its {op} rule is {rules.get(op)}"
            )
    if not (probe.personal and probe.creatable and seen.get("created")):
        return found
    for op in TOUCH:
        status = seen.get(f"other_{op}")
        if status is not None and status not in REFUSED:
            found.append(
                f"access: {c} keeps each user's records their own (a rule is owner), but "
                f"another signed-in user could {_verb[op]} a record someone else created "
                f"(HTTP {status}): its {op} rule is {rules.get(op)}; make it owner"
            )
    if seen.get("other_listed"):
        found.append(
            f"access: {c} keeps each user's records their own (a rule is owner), but another "
            f"signed-in user's list showed a record someone else created: its list rule is "
            f"{rules.get('list')}; make it owner"
        )
    return found


_verb = {"read": "read", "update": "change", "delete": "delete"}

# Run in a document of the app's origin that runs none of the app's scripts (the platform's
# client, loaded as the page): ``step`` is "owner" (sign up, create), "other" (sign up, try
# the owner's record) or "anonymous"; every answer is its HTTP status.
PROBE_JS = """async ({step, collection, record, id, user}) => {
  const send = (method, path, body) => fetch(path, {method, credentials: "same-origin",
    headers: body === undefined ? {} : {"Content-Type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body)});
  const data = `/_api/data/${encodeURIComponent(collection)}`;
  const seen = {};
  if (step !== "anonymous") {
    const up = await send("POST", "/_api/auth/signup", {username: user, password: user + "-pw-1"});
    seen.signup = up.status;
  }
  if (step === "owner") {
    const made = await send("POST", data, record);
    seen.created = made.status === 201 ? (await made.json()).id : null;
    seen.create = made.status;
    return seen;
  }
  if (step === "other") {
    const one = `${data}/${encodeURIComponent(id)}`;
    seen.other_read = (await send("GET", one)).status;
    const listed = await send("GET", `${data}?limit=100`);
    seen.other_listed = listed.ok && (await listed.json()).records.some((r) => r.id === id);
    seen.other_update = (await send("PATCH", one, {})).status;
    seen.other_delete = (await send("DELETE", one)).status;
    return seen;
  }
  seen.anonymous_list = (await send("GET", data)).status;
  seen.anonymous_create = (await send("POST", data, record)).status;
  return seen;
}"""
