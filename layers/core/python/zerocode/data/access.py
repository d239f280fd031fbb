"""The access rules of an app's data model, decided for one visitor (issue 39, point 5).

Every request of the data API is decided here before a store is asked, by the rule the data
model gives its operation on its collection (zerocode/data/model.py) and by who asks: an end
user of the app who signed in (their id), or an anonymous visitor (None). What each rule
lets through:

- ``public``: anyone;
- ``signed-in``: a visitor who signed in; anyone else 401;
- ``owner``: a visitor who signed in (else 401), and only their own records: a list shows
  only theirs, and another's record is answered as one that does not exist (404; its id is
  never confirmed to anyone but its owner);
- ``nobody``: no visitor at all (403), whoever they are.

A record created by an anonymous visitor has no owner, so under ``owner`` it is nobody's to
read, change or delete through the data API (the builder still sees it in the console).
"""

from __future__ import annotations

from dataclasses import dataclass

from zerocode.data.model import Collection, Operation
from zerocode.errors import NotFound, ZerocodeError


class SignInNeeded(ZerocodeError):
    status = 401
    code = "sign_in_needed"


class NotAllowed(ZerocodeError):
    status = 403
    code = "not_allowed"


@dataclass(frozen=True)
class Decision:
    """What a request may do: ``only_owner`` restricts a list to the visitor's records."""

    only_owner: str | None = None


def decide(collection: Collection, operation: Operation, visitor: str | None) -> Decision:
    """Whether ``visitor`` may do ``operation`` on ``collection`` at all (SignInNeeded,
    NotAllowed); a record's owner is checked after it is read (:func:`may_touch`)."""
    rule = collection.rules.get(operation, "nobody")
    if rule == "nobody":
        raise NotAllowed(
            f"{collection.name} does not allow {_doing[operation]} (its rule is nobody)"
        )
    if rule == "public":
        return Decision()
    if visitor is None:
        raise SignInNeeded(f"sign in to {_doing[operation]} {collection.name}")
    return Decision(only_owner=visitor if rule == "owner" else None)


def may_touch(
    collection: Collection, operation: Operation, visitor: str | None, owner: str | None
) -> None:
    """After :func:`decide`: NotFound when the rule is ``owner`` and the record is not the
    visitor's (or has no owner), as if it did not exist."""
    if collection.rules.get(operation) == "owner" and (owner is None or owner != visitor):
        raise NotFound(f"no such record in {collection.name}")


_doing: dict[Operation, str] = {
    "list": "listing",
    "read": "reading",
    "create": "creating",
    "update": "changing",
    "delete": "deleting",
}
