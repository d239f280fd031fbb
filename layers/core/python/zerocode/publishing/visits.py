"""Visits of published sites, counted privately (issue 44, point 4): page views and unique
visitors per app per UTC day, bots apart, without cookies and without keeping an address.

A visitor is a keyed hash (HMAC-SHA256) of the day, the site's key, the client's network
address and its User-Agent, under a random salt of that day (:data:`SALT_BYTES`). The salt is
kept only while its day can still be counted (the day, then :data:`LATE_SECONDS` for CloudFront's
late log lines) and then forgotten with the visitors seen that day: a visitor's hash cannot be
linked to the next day's (another day, another salt) nor, once the salt is gone, be tried
against addresses. Addresses and User-Agents are never stored; only the day's counters and,
while the day lasts, the hashes seen (to count each visitor once) are.

What counts as a page view (:func:`is_page_view`): a GET (not HEAD) answered 200 with an HTML
document (a route the single-page fallback or a prerendered page answers too), or answered
304 for a path a page has (a returning browser's revalidation is a visit). Assets, 404s and
previews are no views. A request whose User-Agent is a bot's (:data:`BOT_MARKERS`, the one
list) is a bot view: counted apart, never a visitor. The platform's own requests (its
publish report's checks: :data:`PLATFORM_MARKER` in their User-Agent) are not counted.

No I/O here: the sites server (``publishing/site_visits.py``) and the CloudFront log function
(``publishing/visit_logs.py``) feed :class:`VisitCounter`, which a :class:`VisitStore` keeps
(``adapters/sqlite/visits.py``, ``adapters/dynamodb/visits.py``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

MAX_DAYS = 365  # the most days one read may ask for
DEFAULT_DAYS = 30
SALT_BYTES = 32
# A day's salt outlives its day by this much, for CloudFront's log lines that arrive late
# (usually within the hour); past it a late line still counts as a view, and its visitor is
# told apart only within its own batch (:meth:`VisitCounter.count`).
LATE_SECONDS = 3 * 3600
VISITOR_CHARS = 32  # a visitor's hash as kept: 128 bits, hex
DAY_SECONDS = 86400

# What a bot's User-Agent contains (case-insensitive), in one place: crawlers and search
# engines (…bot, crawler, spider, Slurp), link previews (facebookexternalhit, WhatsApp,
# embedly), measuring and testing tools (Lighthouse, PageSpeed, GTmetrix, headless or driven
# browsers: the platform's own screenshots are headless Chromium), uptime monitors, and HTTP
# libraries and command-line clients. An empty User-Agent is a bot's too. A browser's
# does not contain one of these (a phone named "…bot", such as CUBOT's, is taken for one).
BOT_MARKERS = (
    "bot",
    "crawl",
    "spider",
    "slurp",
    "mediapartners",
    "facebookexternalhit",
    "whatsapp",
    "embedly",
    "headless",
    "lighthouse",
    "pagespeed",
    "gtmetrix",
    "phantomjs",
    "selenium",
    "webdriver",
    "puppeteer",
    "playwright",
    "uptime",
    "pingdom",
    "monitor",
    "curl",
    "wget",
    "httpie",
    "python-",
    "httpx",
    "aiohttp",
    "go-http-client",
    "java/",
    "okhttp",
    "libwww",
    "scrapy",
    "node-fetch",
    "axios",
    "postman",
)
_BOT = re.compile("|".join(re.escape(m) for m in BOT_MARKERS), re.IGNORECASE)
# The platform's own requests of a site (the publish report's checks) say so in their
# User-Agent: they are no visit at all, not even a bot's.
PLATFORM_MARKER = "zerocode-"


def is_bot(agent: str) -> bool:
    """Whether a User-Agent is a bot's (:data:`BOT_MARKERS`; an empty one is)."""
    return not agent.strip() or _BOT.search(agent) is not None


def is_platform(agent: str) -> bool:
    """Whether a request is the platform's own (:data:`PLATFORM_MARKER`): never counted."""
    return PLATFORM_MARKER in agent.lower()


def looks_like_page(path: str) -> bool:
    """Whether a URL path names a page: a directory (``/``, ``/blog/``), an ``.html`` file,
    or a client-side route (a last segment without an extension)."""
    last = path.split("?", 1)[0].rsplit("/", 1)[-1]
    return last == "" or last.lower().endswith((".html", ".htm")) or "." not in last


def is_page_view(method: str, status: int, content_type: str | None, path: str) -> bool:
    """A GET of a page: 200 with an HTML document, or 304 (a browser's revalidation) of an
    HTML document or, where the answer names no type, of a path a page has."""
    if method.upper() != "GET" or status not in (200, 304):
        return False
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind and kind != "-":
        return kind == "text/html"
    return status == 304 and looks_like_page(path)


def day_of(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


def salt_until(day: str) -> float:
    """When ``day``'s salt is forgotten: the day's end, and :data:`LATE_SECONDS`."""
    start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()
    return start + DAY_SECONDS + LATE_SECONDS


def visitor_id(salt: bytes, day: str, site: str, address: str, agent: str) -> str:
    """One visitor of one site on one day: HMAC-SHA256 under the day's salt, truncated."""
    message = "\n".join((day, site.lower(), address, agent)).encode("utf-8", "surrogateescape")
    return hmac.new(salt, message, hashlib.sha256).hexdigest()[:VISITOR_CHARS]


@dataclass(frozen=True)
class Seen:
    """A page view of a published site as served: the site's key (its deployKey), the
    client's address and User-Agent (hashed, never kept) and when (epoch seconds)."""

    site: str
    address: str
    agent: str
    at: float


@dataclass(frozen=True)
class DayVisits:
    """One app's site on one UTC day."""

    day: str  # YYYY-MM-DD ("" for a total)
    views: int = 0  # page views by people (bots' apart)
    visitors: int = 0  # distinct visitors that day
    bot_views: int = 0

    def to_json(self) -> dict[str, int | str]:
        return {
            "day": self.day,
            "views": self.views,
            "visitors": self.visitors,
            "botViews": self.bot_views,
        }


@dataclass(frozen=True)
class Tally:
    """What one batch adds to one app's day: its views, its bots' views, and the hashes of
    its visitors (each counted once a day, whichever batch sees it first)."""

    app_id: str
    day: str
    views: int = 0
    bot_views: int = 0
    visitors: frozenset[str] = field(default_factory=frozenset)


class VisitStore(Protocol):
    """Where visits are kept: per app and day, the counters; per day, the salt; per app and
    day, the visitors already counted (until the day's salt is forgotten)."""

    def salt(self, day: str, now: float) -> bytes | None:
        """``day``'s salt, made (random) at its first use; None once the day is past
        :func:`salt_until` (the salt is forgotten then, and so are the visitors seen that
        day). Every salt past its time goes here, whichever day is asked for."""
        ...

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        """Each tally's views and bot views added to its app's day, and its visitors not
        yet seen that day counted and remembered (until :func:`salt_until` of the day)."""
        ...

    def days(self, app_id: str, first: str, last: str) -> list[DayVisits]:
        """The app's days from ``first`` to ``last`` (inclusive) with any view, oldest
        first."""
        ...

    def delete_app(self, app_id: str) -> None:
        """The app's counters and visitors (M8)."""
        ...


class VisitCounter:
    """Page views in, the days' counters out: each view's site resolved to its app
    (``app_of``: a deployKey to the app it publishes, None for none), hashed under its day's
    salt, grouped per app and day and added to the store at once."""

    def __init__(
        self,
        store: VisitStore,
        app_of: Callable[[str], str | None],
        now: Callable[[], float] = time.time,
        random: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self.store, self.app_of, self.now, self.random = store, app_of, now, random

    def count(self, seen: Iterable[Seen]) -> int:
        """Count a batch; how many views (bots' included) it added. A site that publishes no
        app is skipped. A day whose salt is forgotten (a log line past :data:`LATE_SECONDS`)
        gets a salt of this batch alone, kept nowhere."""
        now = self.now()
        apps: dict[str, str | None] = {}
        salts: dict[str, bytes] = {}
        groups: dict[tuple[str, str], tuple[list[int], set[str]]] = {}
        for view in seen:
            if is_platform(view.agent):
                continue
            site = view.site  # a Host's label comes lowercase; a path's key as it is
            if site not in apps:
                apps[site] = self.app_of(site)
            app_id = apps[site]
            if app_id is None:
                continue
            day = day_of(view.at)
            counts, visitors = groups.setdefault((app_id, day), ([0, 0], set()))
            if is_bot(view.agent):
                counts[1] += 1
                continue
            counts[0] += 1
            if day not in salts:
                salts[day] = self.store.salt(day, now) or self.random(SALT_BYTES)
            visitors.add(visitor_id(salts[day], day, site, view.address, view.agent))
        tallies = [
            Tally(app_id, day, counts[0], counts[1], frozenset(visitors))
            for (app_id, day), (counts, visitors) in groups.items()
        ]
        if tallies:
            self.store.add(tallies, now)
        return sum(t.views + t.bot_views for t in tallies)


@dataclass(frozen=True)
class VisitReport:
    """Every day from ``first`` to ``last`` (zeros included), oldest first, and their sum
    (a visitor on two days is two: no visitor is recognised from one day to the next)."""

    first: str
    last: str
    days: list[DayVisits]
    total: DayVisits


def day_range(days: int, today: str) -> tuple[str, str]:
    """The last ``days`` days up to ``today`` (included)."""
    last = dt.date.fromisoformat(today)
    return (last - dt.timedelta(days=days - 1)).isoformat(), today


def report(found: Iterable[DayVisits], first: str, last: str) -> VisitReport:
    """The store's days over the range, every day of it present."""
    by_day = {d.day: d for d in found}
    start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
    days = [
        by_day.get(day) or DayVisits(day)
        for day in (
            (start + dt.timedelta(days=i)).isoformat() for i in range((end - start).days + 1)
        )
    ]
    total = DayVisits(
        "",
        views=sum(d.views for d in days),
        visitors=sum(d.visitors for d in days),
        bot_views=sum(d.bot_views for d in days),
    )
    return VisitReport(first, last, days, total)
