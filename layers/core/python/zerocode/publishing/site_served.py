"""The publish report's checks of what visitors get (issue 44, point 5): the site's answers
for its files (their cache headers, their encoding) and what the browser saw of its home
page (its console, axe-core's serious accessibility violations). Lighthouse's
best-practices, performance and accessibility audits, as far as one load of the home page
tells them.
"""

from __future__ import annotations

import re

from zerocode.publishing.encodings import MIN_BYTES, compressible, is_immutable
from zerocode.publishing.publish_report import (
    Answer,
    PageLook,
    ReportCheck,
    Violation,
    failed,
    not_run,
    passed,
)
from zerocode.publishing.site_files import SiteFiles

YEAR = 31_536_000
LONG_ENOUGH = 30 * 86_400  # a hashed file cached less than this is re-fetched needlessly
SHORT_ENOUGH = 86_400  # a file whose name does not change, cached past this, goes stale
SERIOUS = ("serious", "critical")
AXE_RULES = "https://dequeuniversity.com/rules/axe/4.14/"

CACHING_FIX = (
    "Scripts and styles whose names carry a hash of their content (Vite's assets/name-"
    "XXXXXXXX.js) may be kept a year (Cache-Control: public, max-age=31536000, immutable); "
    "everything else should be revalidated (no-cache with an ETag). The platform sends "
    "these headers itself (docs/builds.md): anything else is its configuration's to fix, "
    "so tell its operator."
)
CONSOLE_FIX = (
    "Fix each error named (open the site with the browser's developer tools, Console tab, "
    "to see it happen). A file that failed to load is named under 'Links within the site' "
    "too. Ask in the chat: the model can fix them."
)
A11Y_FIXES = {
    "image-alt": 'give each <img> an alt text saying what it shows (alt="" for decoration)',
    "button-name": "give each button a name: text inside it, or aria-label",
    "link-name": "give each link text (or aria-label) saying where it goes",
    "input-button-name": "give each input button a value or aria-label",
    "label": 'give each form field a label (<label for="…">, or aria-label)',
    "select-name": 'give each <select> a label (<label for="…">, or aria-label)',
    "html-has-lang": 'set the page\'s language: <html lang="en">',
    "html-lang-valid": 'set a valid language code: <html lang="en">',
    "document-title": "give the page a <title>",
    "color-contrast": "make the text contrast with its background at least 4.5:1 (3:1 for "
    "large text): a darker text colour or a lighter background",
    "frame-title": "give each <iframe> a title",
    "meta-viewport": "let visitors zoom: no user-scalable=no or maximum-scale below 2",
    "aria-required-attr": "give each ARIA role the attributes it needs",
    "aria-valid-attr-value": "give each aria-* attribute a valid value",
    "list": "keep only <li> (and script or template) directly in <ul> and <ol>",
    "listitem": "put each <li> in a <ul> or <ol>",
}


def check_console(look: PageLook) -> ReportCheck:
    if look.why is not None:
        return not_run("console", look.why)
    if look.problems:
        return failed("console", list(look.problems), CONSOLE_FIX)
    if not look.loaded:
        return not_run("console", "not run: the page did not load")
    return passed("console", "the home page loaded with no error in the console")


def check_a11y(look: PageLook) -> ReportCheck:
    if look.why is not None:
        return not_run("a11y", look.why)
    if look.violations is None:
        return not_run("a11y", look.a11y_why or "not run: axe-core did not run on the page")
    serious = [v for v in look.violations if v.impact in SERIOUS]
    if not serious:
        return passed("a11y", "axe-core found no serious or critical violation on the home page")
    wrong = [
        f"{v.rule} ({v.impact}): {v.help} — {', '.join(v.where) or 'the page'}" for v in serious
    ]
    rules = list(dict.fromkeys(v.rule for v in serious))
    fixes = [f"{rule}: {A11Y_FIXES.get(rule, _help(serious, rule))}" for rule in rules]
    more = f" Each rule explained: {AXE_RULES}{{rule}}."
    return failed("a11y", wrong, "; ".join(fixes) + "." + more)


def _help(found: list[Violation], rule: str) -> str:
    return next((v.help for v in found if v.rule == rule), "")


def _max_age(cache: str) -> int | None:
    match = re.search(r"(?:^|[,\s])max-age\s*=\s*\"?(\d{1,12})", cache)
    return int(match.group(1)) if match else None


def _span(seconds: int) -> str:
    if seconds >= 86_400:
        return f"{seconds // 86_400} day(s)"
    return f"{seconds} s"


def check_caching(served: list[tuple[str, Answer]] | str) -> ReportCheck:
    """Each file's ``Cache-Control``: hashed assets long, the rest revalidated (a validator
    to do it with), nothing ``no-store``."""
    if isinstance(served, str):
        return not_run("caching", served)
    wrong, seen = [], []
    for path, answer in served:
        cache = answer.headers.get("cache-control", "").lower()
        age = _max_age(cache)
        if answer.status != 200:
            wrong.append(f"{path} answered HTTP {answer.status}")
        elif not cache:
            wrong.append(f"{path}: no Cache-Control: browsers guess how long to keep it")
        elif "no-store" in cache:
            wrong.append(f"{path}: Cache-Control: no-store: downloaded again on every visit")
        elif is_immutable(path) and (age is None or age < LONG_ENOUGH):
            wrong.append(
                f"{path} never changes (its name has its hash) but is cached "
                f"{_span(age or 0)}: a year is safe"
            )
        elif not is_immutable(path) and age is not None and age > SHORT_ENOUGH:
            wrong.append(
                f"{path} is cached {_span(age)} though its name stays when it "
                "changes: visitors may keep an old copy after a deploy"
            )
        elif (
            ("no-cache" in cache or age == 0)
            and "etag" not in answer.headers
            and "last-modified" not in answer.headers
        ):
            wrong.append(
                f"{path} is revalidated on every visit but has no ETag or "
                "Last-Modified: it is downloaded whole each time"
            )
        else:
            seen.append(f"{path}: {answer.headers.get('cache-control')}")
    return failed("caching", wrong, CACHING_FIX) if wrong else passed("caching", *seen)


def served_plain(served: list[tuple[str, Answer]] | str, site: SiteFiles) -> list[str]:
    """The text files the site sent uncompressed although it has a copy to send."""
    if isinstance(served, str):
        return []
    plain = []
    for path, answer in served:
        copy = f"{path}.br" in site.encoded or f"{path}.gz" in site.encoded
        if (
            answer.status == 200
            and compressible(path)
            and site.files.get(path, 0) >= MIN_BYTES
            and copy
            and answer.headers.get("content-encoding") not in ("br", "gzip")
        ):
            plain.append(f"{path} was sent uncompressed to a browser accepting brotli and gzip")
    return plain
