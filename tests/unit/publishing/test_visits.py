"""Visits counted privately (issue 44, point 4; publishing/visits.py): the bot rule, what a
page view is, the visitor's daily salted hash, and the counter over a store in memory."""

from __future__ import annotations

import calendar
from collections.abc import Sequence

import pytest

from zerocode.publishing.visits import (
    BOT_MARKERS,
    LATE_SECONDS,
    DayVisits,
    Seen,
    Tally,
    VisitCounter,
    day_range,
    is_bot,
    is_page_view,
    report,
    salt_until,
    visitor_id,
)

CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0.0.0 Safari/537.36"
)
FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)
EDGE = CHROME + " Edg/126.0.2592.87"
BOTS = (
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2)",
    "Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/126.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Twitterbot/1.0",
    "WhatsApp/2.23.20.0",
    "curl/8.5.0",
    "Wget/1.21.4",
    "python-requests/2.32.3",
    "python-httpx/0.27.0",
    "Go-http-client/2.0",
    "Java/17.0.2",
    "okhttp/4.12.0",
    "Scrapy/2.11 (+https://scrapy.org)",
    "Mozilla/5.0 (compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
    "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
    "PostmanRuntime/7.39.0",
    "axios/1.7.2",
    "",
    "   ",
)


@pytest.mark.parametrize("agent", [CHROME, FIREFOX, SAFARI, EDGE])
def test_browsers_are_people(agent: str) -> None:
    assert not is_bot(agent)


@pytest.mark.parametrize("agent", BOTS)
def test_crawlers_tools_libraries_and_no_agent_are_bots(agent: str) -> None:
    assert is_bot(agent)


def test_the_bot_rule_ignores_case_and_is_one_list() -> None:
    assert is_bot("MY-SPIDER/1.0") and is_bot("Some CRAWLER")
    assert all(m == m.lower() for m in BOT_MARKERS)  # matched case-insensitively


@pytest.mark.parametrize(
    ("method", "status", "kind", "path", "view"),
    [
        ("GET", 200, "text/html; charset=utf-8", "/", True),
        ("GET", 200, "text/html", "/about", True),  # the SPA fallback's index.html
        ("GET", 200, "TEXT/HTML", "/blog/post.html", True),
        ("get", 200, "text/html", "/", True),
        ("HEAD", 200, "text/html", "/", False),
        ("POST", 200, "text/html", "/", False),
        ("GET", 404, "text/plain", "/missing", False),
        ("GET", 200, "text/javascript", "/assets/index-abcdefgh.js", False),
        ("GET", 200, "text/css", "/assets/index-abcdefgh.css", False),
        ("GET", 200, "image/png", "/icon-512.png", False),
        ("GET", 200, "application/json", "/_api/collections", False),
        ("GET", 206, "text/html", "/", False),
        ("GET", 301, None, "/sites/abc", False),
        # A 304 is a returning browser's visit: of a page, by its type or, without one, path.
        ("GET", 304, None, "/", True),
        ("GET", 304, None, "/about", True),
        ("GET", 304, "-", "/index.html", True),
        ("GET", 304, None, "/assets/index-abcdefgh.js", False),
        ("GET", 304, None, "/favicon.ico", False),
        ("GET", 304, "text/html", "/x.js", True),  # the type, where said, decides
        ("GET", 200, None, "/", False),  # a 200 names its type
    ],
)
def test_a_page_view_is_a_get_of_a_page(
    method: str, status: int, kind: str | None, path: str, *, view: bool
) -> None:
    assert is_page_view(method, status, kind, path) is view


def test_a_visitor_is_one_a_day_and_another_the_next() -> None:
    salt, other = b"s" * 32, b"t" * 32
    first = visitor_id(salt, "2026-03-01", "abcdefgh", "203.0.113.9", CHROME)
    assert first == visitor_id(salt, "2026-03-01", "ABCDEFGH", "203.0.113.9", CHROME)
    assert len(first) == 32 and int(first, 16) >= 0
    different = {
        visitor_id(salt, "2026-03-02", "abcdefgh", "203.0.113.9", CHROME),  # the next day
        visitor_id(other, "2026-03-01", "abcdefgh", "203.0.113.9", CHROME),  # another salt
        visitor_id(salt, "2026-03-01", "abcdefgz", "203.0.113.9", CHROME),  # another site
        visitor_id(salt, "2026-03-01", "abcdefgh", "203.0.113.8", CHROME),  # another address
        visitor_id(salt, "2026-03-01", "abcdefgh", "203.0.113.9", FIREFOX),  # another browser
    }
    assert first not in different and len(different) == 5
    assert "203.0.113.9" not in first


def test_a_days_salt_is_kept_until_its_end_and_the_late_hours() -> None:
    start = calendar.timegm((2026, 3, 1, 0, 0, 0))
    assert salt_until("2026-03-01") == start + 86400 + LATE_SECONDS


class MemoryStore:
    """The VisitStore port in memory, as the adapters behave (their contract is tested in
    tests/integration/adapters/test_visit_stores.py)."""

    def __init__(self) -> None:
        self.salts: dict[str, bytes] = {}
        self.seen: set[tuple[str, str, str]] = set()
        self.counts: dict[tuple[str, str], list[int]] = {}
        self.made = 0

    def salt(self, day: str, now: float) -> bytes | None:
        for old in [d for d in self.salts if salt_until(d) <= now]:
            del self.salts[old]
        if salt_until(day) <= now:
            return None
        if day not in self.salts:
            self.made += 1
            self.salts[day] = bytes([self.made]) * 32
        return self.salts[day]

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        for t in tallies:
            new = {v for v in t.visitors if (t.app_id, t.day, v) not in self.seen}
            self.seen |= {(t.app_id, t.day, v) for v in new}
            c = self.counts.setdefault((t.app_id, t.day), [0, 0, 0])
            c[0] += t.views
            c[1] += len(new)
            c[2] += t.bot_views

    def days(self, app_id: str, first: str, last: str) -> list[DayVisits]:
        return [
            DayVisits(day, *c)
            for (app, day), c in sorted(self.counts.items())
            if app == app_id and first <= day <= last
        ]

    def delete_app(self, app_id: str) -> None:
        self.counts = {k: v for k, v in self.counts.items() if k[0] != app_id}


NOON = calendar.timegm((2026, 3, 1, 12, 0, 0))
APPS = {"sitekey01": "app-1", "sitekey02": "app-2"}


def test_the_counter_counts_views_visitors_and_bots_per_app_and_day() -> None:
    store = MemoryStore()
    counter = VisitCounter(store, APPS.get, now=lambda: NOON)
    batch = [
        Seen("sitekey01", "198.51.100.1", CHROME, NOON),
        Seen("sitekey01", "198.51.100.1", CHROME, NOON + 60),  # the same visitor again
        Seen("sitekey01", "198.51.100.1", CHROME, NOON + 90),
        Seen("sitekey01", "198.51.100.1", FIREFOX, NOON),  # same address, another browser
        Seen("sitekey01", "198.51.100.2", CHROME, NOON),
        Seen("sitekey01", "198.51.100.3", BOTS[0], NOON),
        Seen("sitekey01", "198.51.100.3", BOTS[0], NOON),
        Seen("sitekey02", "198.51.100.1", CHROME, NOON),
        Seen("nosuchsite", "198.51.100.1", CHROME, NOON),  # publishes no app: skipped
        # The platform's own check of the site (the publish report): no visit at all.
        Seen("sitekey01", "127.0.0.1", "zerocode-publish-report/1 (bot; a check)", NOON),
    ]
    assert counter.count(batch) == 8
    assert store.days("app-1", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 5, 3, 2)]
    assert store.days("app-2", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 1, 1, 0)]
    # A later batch of the same day: a visitor already counted is not counted again.
    counter.count([Seen("sitekey01", "198.51.100.2", CHROME, NOON + 3600)])
    counter.count([Seen("sitekey01", "198.51.100.9", CHROME, NOON + 3600)])
    assert store.days("app-1", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 7, 4, 2)]
    # What is kept holds no address and no User-Agent: only hashes and counts.
    kept = repr((store.seen, store.counts))
    for secret in ("198.51.100", "Mozilla", "Chrome"):
        assert secret not in kept


def test_the_next_day_the_same_visitor_is_a_new_one_under_a_new_salt() -> None:
    store = MemoryStore()
    clock = [NOON]
    counter = VisitCounter(store, APPS.get, now=lambda: clock[0])
    counter.count([Seen("sitekey01", "198.51.100.1", CHROME, NOON)])
    (first,) = {v for (_, _, v) in store.seen}
    clock[0] = NOON + 86400
    counter.count([Seen("sitekey01", "198.51.100.1", CHROME, NOON + 86400)])
    assert store.days("app-1", "2026-03-01", "2026-03-02") == [
        DayVisits("2026-03-01", 1, 1, 0),
        DayVisits("2026-03-02", 1, 1, 0),
    ]
    assert len({v for (_, _, v) in store.seen}) == 2 and first in {v for (*_, v) in store.seen}
    assert set(store.salts) == {"2026-03-02"}  # the first day's salt is gone (past 03:00)


def test_a_line_past_its_days_salt_counts_its_visitors_within_its_batch_only() -> None:
    store = MemoryStore()
    late = NOON + 2 * 86400
    counter = VisitCounter(store, APPS.get, now=lambda: late)
    batch = [Seen("sitekey01", "198.51.100.1", CHROME, NOON)] * 3
    counter.count(batch)
    counter.count(batch)
    assert store.salts == {}  # no salt is made for a day past its time
    assert store.days("app-1", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 6, 2, 0)]


def test_a_report_has_every_day_and_their_sums() -> None:
    first, last = day_range(3, "2026-03-01")
    assert (first, last) == ("2026-02-27", "2026-03-01")
    found = report([DayVisits("2026-02-28", 4, 2, 1)], first, last)
    assert [d.day for d in found.days] == ["2026-02-27", "2026-02-28", "2026-03-01"]
    assert found.days[0] == DayVisits("2026-02-27") and found.total == DayVisits("", 4, 2, 1)
    assert report([], *day_range(1, "2024-02-29")).days == [DayVisits("2024-02-29")]
