"""CloudFront's standard log lines read for page views of published sites (issue 44,
point 4, on AWS; publishing/visit_logs.py): by the Host with a sites domain, by the path
without one; previews, assets, HEADs, errors and the data API skipped; the User-Agent
decoded; lines of another layout found by their #Fields."""

from __future__ import annotations

import calendar

from zerocode.publishing.pointers import site_urls
from zerocode.publishing.visit_logs import FIELDS, parse, site_of
from zerocode.publishing.visits import Seen

DOMAIN = site_urls("https://d111.cloudfront.net", "sites.example.com")
SHARED = site_urls("https://d111.cloudfront.net", None)
CHROME = "Mozilla/5.0%20(X11;%20Linux%20x86_64)%20AppleWebKit/537.36%20Chrome/126.0"
HEADER = ["#Version: 1.0", "#Fields: " + " ".join(FIELDS)]


def line(
    path: str,
    *,
    host: str = "sitekey01.sites.example.com",
    status: int | str = 200,
    kind: str = "text/html",
    method: str = "GET",
    ip: str = "203.0.113.7",
    agent: str = CHROME,
    when: str = "2026-03-01\t12:30:05",
) -> str:
    values = dict.fromkeys(FIELDS, "-")
    values.update(
        {
            "date": when.split("\t")[0],
            "time": when.split("\t")[1],
            "x-edge-location": "FRA56-P1",
            "c-ip": ip,
            "cs-method": method,
            "cs(Host)": "d111.cloudfront.net",
            "cs-uri-stem": path,
            "sc-status": str(status),
            "cs(User-Agent)": agent,
            "x-host-header": host,
            "x-forwarded-for": "198.51.100.99",  # the client's word: never used
            "sc-content-type": kind,
        }
    )
    return "\t".join(values[f] for f in FIELDS)


AT = float(calendar.timegm((2026, 3, 1, 12, 30, 5)))


def test_page_views_of_sites_are_read_by_host_with_a_domain() -> None:
    lines = [
        *HEADER,
        line("/"),
        line("/about", kind="text/html;charset=utf-8"),  # the SPA route's index.html
        line("/", status=304, kind="-"),  # a returning browser
        line("/assets/index-abcdefgh.js", kind="application/javascript"),
        line("/assets/index-abcdefgh.js", status=304, kind="-"),
        line("/", method="HEAD"),
        line("/missing.html", status=404, kind="text/plain"),
        line("/_api/collections/notes", kind="application/json"),
        line("/", host="p-previewkey1.sites.example.com"),  # a preview: never counted
        line("/", host="d111.cloudfront.net"),  # the distribution's own name: no site
        line("/", host="a.b.sites.example.com"),
        line("/", agent="Mozilla/5.0%20(compatible;%20Googlebot/2.1)", ip="66.249.66.1"),
    ]
    seen = list(parse(lines, DOMAIN))
    human = Seen("sitekey01", "203.0.113.7", CHROME.replace("%20", " "), AT)
    assert seen == [
        human,
        human,
        human,
        Seen("sitekey01", "66.249.66.1", "Mozilla/5.0 (compatible; Googlebot/2.1)", AT),
    ]


def test_without_a_domain_the_path_names_the_site() -> None:
    lines = [
        *HEADER,
        line("/sites/sitekey01/", host="d111.cloudfront.net"),
        line("/sites/sitekey01/about", host="d111.cloudfront.net"),
        line("/sites/sitekey01", host="d111.cloudfront.net", status=301, kind="-"),
        line("/preview/previewkey1/", host="d111.cloudfront.net"),
        line("/sites/short/", host="d111.cloudfront.net"),
        line("/other/sitekey01/", host="d111.cloudfront.net"),
    ]
    assert [s.site for s in parse(lines, SHARED)] == ["sitekey01", "sitekey01"]
    assert site_of(SHARED, "", "/sites/sitekey01/a/b.html") == ("sitekey01", "/a/b.html")
    assert site_of(SHARED, "", "/sites/sitekey01") == ("sitekey01", "/")


def test_the_fields_line_decides_where_each_value_is() -> None:
    order = ["sc-status", "cs-uri-stem", "date", "time", "cs-method", "x-host-header"]
    order += ["cs(User-Agent)", "c-ip", "sc-content-type"]
    values = ["200", "/", "2026-03-01", "12:30:05", "GET", "sitekey01.sites.example.com"]
    values += ["Firefox/128.0", "2001:db8::1", "text/html"]
    lines = ["#Version: 1.0", "#Fields: " + " ".join(order), "\t".join(values)]
    assert list(parse(lines, DOMAIN)) == [Seen("sitekey01", "2001:db8::1", "Firefox/128.0", AT)]


def test_broken_lines_are_skipped() -> None:
    lines = [
        *HEADER,
        "",
        "not\ta\tlog\tline",
        line("/", status="2x0"),
        line("/", when="2026-13-01\t12:00:00"),
        line("/" + "a" * 70_000),
        line("/"),
    ]
    assert len(list(parse(lines, DOMAIN))) == 1
