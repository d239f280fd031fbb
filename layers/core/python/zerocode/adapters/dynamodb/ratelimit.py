"""DynamoDB RateLimiter: a sliding log in one item per key, written with optimistic locking.

The item holds the expiries (hit time + window) of the allowed hits still in the window and
a ``version``. A hit reads the item (strongly consistent), drops expired entries and, if
there is room, writes the new log back on condition that ``version`` is unchanged (or that
the item still does not exist). A lost race fails the condition and the hit is retried on a
fresh read, so every allowed hit was checked against all hits allowed before it: never more
than ``limit`` in any window, however many Lambda containers race.

Why not the cheaper two-bucket "sliding window counter"? Its estimate assumes hits in the
previous bucket were spread evenly; a burst at the end of one bucket then lets nearly
2 x limit through within one window. A refused hit writes nothing (it does not count, and
costs one read). The log is bounded by ``limit`` entries, so keep limits to a few thousand
per window (items are capped at 400 KB). TTL on ``expires_at`` only sweeps idle keys;
correctness never depends on it. Times come from the caller's clock, assumed NTP-synced.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.accounts.ratelimit import RateDecision, allowed, check_rule, refused
from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, ensure_table

# After this many lost races in a row the hit is refused: heavy contention on one key means
# the limit is being hammered, so refusing (briefly) is the safe answer.
MAX_ATTEMPTS = 10
CONTENDED_RETRY_AFTER = 1.0


def create_rate_table(client: Any, name: str) -> None:
    ensure_table(client, name, "key", {"key": "S"}, ttl_attribute="expires_at")


class DynamoRateLimiter:
    def __init__(
        self,
        client: Any,
        table: str,
        now: Callable[[], float] = time.time,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.client, self.table, self.now = client, table, now
        self.max_attempts = max_attempts

    def hit(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        for attempt in range(self.max_attempts):
            now = self.now()
            item, live = self._live(key, now)
            if len(live) >= limit:
                return refused(live, now, limit, window_seconds)
            live.append(now + window_seconds)
            live.sort()  # already sorted unless the clock stepped back
            if self._write(key, live, item):
                return allowed(limit - len(live))
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))  # spread the retries
        return RateDecision(
            allowed=False, retry_after=min(CONTENDED_RETRY_AFTER, window_seconds), remaining=0
        )

    def peek(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        now = self.now()
        _, live = self._live(key, now)
        if len(live) >= limit:
            return refused(live, now, limit, window_seconds)
        return allowed(limit - len(live))

    def _live(self, key: str, now: float) -> tuple[Item | None, list[float]]:
        """The stored item (strongly consistent) and its unexpired hits, sorted."""
        item = self.client.get_item(
            TableName=self.table, Key={"key": {"S": key}}, ConsistentRead=True
        ).get("Item")
        return item, sorted(e for e in _expiries(item) if e > now)

    def _write(self, key: str, live: list[float], old: Item | None) -> bool:
        """Put the new log unless someone wrote since we read it; False when we lost."""
        version = int(old["version"]["N"]) if old else 0
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "key": {"S": key},
                    "version": {"N": str(version + 1)},
                    # repr() round-trips a float exactly; DynamoDB keeps 38 digits.
                    "expiries": {"L": [{"N": repr(e)} for e in live]},
                    "expires_at": {"N": str(math.ceil(live[-1]))},
                },
                # Absent counts as version 0; an item TTL swept since our read held only
                # expired hits, so recreating it loses nothing.
                ConditionExpression="attribute_not_exists(#v) OR #v = :v",
                ExpressionAttributeNames={"#v": "version"},
                ExpressionAttributeValues={":v": {"N": str(version)}},
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True


def _expiries(item: Item | None) -> list[float]:
    return [float(e["N"]) for e in item["expiries"]["L"]] if item else []
