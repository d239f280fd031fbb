"""The access rules decided for a visitor (zerocode/data/access.py): every rule against
every kind of visitor, and another's record answered as absent."""

from __future__ import annotations

import json

import pytest

from tests.unit.data.test_model import NOTES
from zerocode.data.access import NotAllowed, SignInNeeded, decide, may_touch
from zerocode.data.model import OPERATIONS, RULES, Collection, Operation, Rule, parse
from zerocode.errors import NotFound


def collection(rule: Rule, operation: Operation) -> Collection:
    raw = json.loads(json.dumps(NOTES))
    notes = raw["collections"]["notes"]
    notes["rules"] = {op: ("public" if op != operation else rule) for op in OPERATIONS}
    found = parse(json.dumps(raw).encode()).collection("notes")
    assert found is not None
    return found


# create is never owner: the data model refuses it (tests/unit/data/test_model.py)
PAIRS = [(r, o) for r in RULES for o in OPERATIONS if (r, o) != ("owner", "create")]


@pytest.mark.parametrize(("rule", "operation"), PAIRS)
def test_each_rule_for_each_visitor(rule: Rule, operation: Operation) -> None:
    notes = collection(rule, operation)
    for visitor in (None, "u1"):
        if rule == "nobody":
            with pytest.raises(NotAllowed) as refused:
                decide(notes, operation, visitor)
            assert refused.value.status == 403 and "its rule is nobody" in refused.value.message
        elif rule != "public" and visitor is None:
            with pytest.raises(SignInNeeded) as asked:
                decide(notes, operation, visitor)
            assert asked.value.status == 401 and "sign in to" in asked.value.message
        else:
            decision = decide(notes, operation, visitor)
            owned = rule == "owner"
            assert decision.only_owner == (visitor if owned else None)


@pytest.mark.parametrize("operation", ["read", "update", "delete"])
def test_under_owner_another_visitors_record_does_not_exist(operation: Operation) -> None:
    notes = collection("owner", operation)
    may_touch(notes, operation, "u1", "u1")
    for owner in ("u2", None):
        with pytest.raises(NotFound) as absent:
            may_touch(notes, operation, "u1", owner)
        assert absent.value.status == 404
    public = collection("public", operation)
    may_touch(public, operation, None, "u2")  # a public rule: anyone's record
