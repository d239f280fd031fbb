"""CloudFront's standard logs of the sites distribution, read for the page views of published
sites (issue 44, point 4, on AWS; ``publishing/visits.py`` counts them).

A log file is W3C text, gzip'd by CloudFront: ``#Version`` and ``#Fields`` lines, then one
tab-separated line per request (``-`` for no value; the User-Agent URL-encoded). The fields
are found by the ``#Fields`` line's names (CloudFront's documented order where a file has
none): ``date``, ``time``, ``c-ip`` (the viewer's address, as the connection had it; never
``x-forwarded-for``, which the client writes), ``cs-method``, ``cs-uri-stem``, ``sc-status``,
``cs(User-Agent)``, ``x-host-header`` (the Host the viewer asked for) and ``sc-content-type``.

Which site a line is for: with a sites domain, the Host's label (``{deployKey}.{domain}``; a
preview's ``p-…`` is no site); without one, the path (``/sites/{deployKey}/…``; ``/preview/…``
is no site). A line of the sites distribution that names no site (the data API's
``/_api/…``, a bad Host) is skipped, and so is one no page view (:func:`is_page_view`).
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote

from zerocode.errors import InvalidInput
from zerocode.publishing.pointers import SITE_PREFIX, SiteUrls, check_public_key
from zerocode.publishing.visits import Seen, VisitCounter, is_page_view

# CloudFront's standard log fields, in its order (used where a file has no #Fields line).
FIELDS = (
    "date",
    "time",
    "x-edge-location",
    "sc-bytes",
    "c-ip",
    "cs-method",
    "cs(Host)",
    "cs-uri-stem",
    "sc-status",
    "cs(Referer)",
    "cs(User-Agent)",
    "cs-uri-query",
    "cs(Cookie)",
    "x-edge-result-type",
    "x-edge-request-id",
    "x-host-header",
    "cs-protocol",
    "cs-bytes",
    "time-taken",
    "x-forwarded-for",
    "ssl-protocol",
    "ssl-cipher",
    "x-edge-response-result-type",
    "cs-protocol-version",
    "fle-status",
    "fle-encrypted-fields",
    "c-port",
    "time-to-first-byte",
    "x-edge-detailed-result-type",
    "sc-content-type",
    "sc-content-len",
    "sc-range-start",
    "sc-range-end",
)
_NEEDED = ("date", "time", "c-ip", "cs-method", "cs-uri-stem", "sc-status", "cs(User-Agent)")
MAX_LINE_CHARS = 64 * 1024  # a longer line is no request CloudFront logs whole: skipped


class LogObjects(Protocol):
    """Where CloudFront puts its log files (an S3 bucket): read, then deleted."""

    def lines(self, bucket: str, key: str) -> Iterator[str]:
        """The log file's lines, decompressed, as text."""
        ...

    def delete(self, bucket: str, key: str) -> None: ...


def site_of(urls: SiteUrls, host: str, path: str) -> tuple[str, str] | None:
    """The deployKey a request was for and its path within the site; None for a preview,
    the data API or anything that names no site."""
    if urls.per_app_origins:
        pointer = urls.pointer_of_host(host)
        if pointer is None or not pointer.startswith(SITE_PREFIX):
            return None
        return pointer[len(SITE_PREFIX) :], path
    parts = path.split("/", 3)  # "", "sites", key, rest
    if len(parts) < 3 or parts[0] or parts[1] != "sites":
        return None
    try:
        key = check_public_key(parts[2])
    except InvalidInput:
        return None
    return key, "/" + (parts[3] if len(parts) > 3 else "")


def parse(lines: Iterable[str], urls: SiteUrls) -> Iterator[Seen]:
    """The page views of published sites among a log file's lines."""
    index = {name: i for i, name in enumerate(FIELDS)}
    for line in lines:
        line = line.rstrip("\r\n")
        if line.startswith("#Fields:"):
            index = {name: i for i, name in enumerate(line[len("#Fields:") :].split())}
            continue
        if not line or line.startswith("#") or len(line) > MAX_LINE_CHARS:
            continue
        seen = _view(line.split("\t"), index, urls)
        if seen is not None:
            yield seen


def _view(values: list[str], index: dict[str, int], urls: SiteUrls) -> Seen | None:
    def field(name: str) -> str:
        at = index.get(name)
        value = values[at] if at is not None and at < len(values) else "-"
        return "" if value == "-" else value

    if any(name not in index or index[name] >= len(values) for name in _NEEDED):
        return None
    try:
        status = int(field("sc-status"))
        at = calendar.timegm(time.strptime(f"{field('date')} {field('time')}", "%Y-%m-%d %H:%M:%S"))
    except ValueError:
        return None
    path = unquote(field("cs-uri-stem"))
    found = site_of(urls, field("x-host-header"), path)
    if found is None:
        return None
    site, inner = found
    if not is_page_view(field("cs-method"), status, field("sc-content-type") or None, inner):
        return None
    agent = unquote(field("cs(User-Agent)"))
    return Seen(site, field("c-ip"), agent, float(at))


@dataclass(frozen=True)
class VisitLogs:
    """CloudFront's log files counted: each read, its page views counted, then deleted (the
    files hold viewers' addresses: nothing of them stays once counted)."""

    objects: LogObjects
    counter: VisitCounter
    urls: SiteUrls

    def count_file(self, bucket: str, key: str) -> int:
        """Count one log file's page views and delete it; how many views it added."""
        views = self.counter.count(parse(self.objects.lines(bucket, key), self.urls))
        self.objects.delete(bucket, key)
        return views
