"""The apps' own backend, as one part of the platform (issue 39): their records, their end
users and each build's data model, with the operations over them. One object, so wiring
gives a mode all of it or none, and an app's deletion empties every store of it at once."""

from __future__ import annotations

from dataclasses import dataclass, field

from zerocode.accounts.ratelimit import RateLimiter
from zerocode.data.check_spaces import CheckSpaces
from zerocode.data.end_users import EndUserLimits, EndUsers, EndUserStore
from zerocode.data.in_force import BuildModels, ModelsInForce
from zerocode.data.records import DEFAULT_MOST, RecordStore, Space
from zerocode.data.service import DataService


@dataclass(frozen=True)
class DataLimits:
    """The data API's rate limits: requests per visitor address and per site (a preview's
    or a site's host) per window (ZEROCODE_DATA_RATE_VISITOR, _SITE, _WINDOW_SECONDS)."""

    rate_visitor: int = 300
    rate_site: int = 3000
    window_seconds: float = 60.0


@dataclass
class Backend:
    records: RecordStore
    users: EndUserStore
    build_models: BuildModels
    limiter: RateLimiter
    most_records: int = DEFAULT_MOST
    user_limits: EndUserLimits = field(default_factory=EndUserLimits)

    def __post_init__(self) -> None:
        self.data = DataService(self.records, self.most_records)
        self.end_users = EndUsers(self.users, self.limiter, self.user_limits)
        self.models = ModelsInForce(self.build_models)
        self.check_spaces = CheckSpaces()

    def clear_space(self, app_id: str, space: Space) -> None:
        """Delete one space's records and users (a check's scratch space, once it is done)."""
        self.records.clear(app_id, space)
        self.users.clear(app_id, space)
        self.data.forget(app_id, space)

    def delete_app(self, app_id: str) -> int:
        """Every record, end user, session and kept data model of a deleted app, in both
        spaces (M8: one step of its deletion, retried until it is done)."""
        deleted = self.records.delete_app(app_id)
        deleted += self.users.delete_app(app_id)
        return deleted + self.build_models.delete_app(app_id)
