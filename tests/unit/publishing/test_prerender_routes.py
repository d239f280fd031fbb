"""Which links of a rendered page are routes to prerender (publishing/prerender.py): only
the site's own plain paths, never a file, another origin, the data API or a climb."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerocode.publishing.prerender import MAX_DEPTH, file_of, route_of

ORIGIN = "http://prerender.localhost"


@pytest.mark.parametrize(
    ("href", "route"),
    [
        (f"{ORIGIN}/", "/"),
        (f"{ORIGIN}", "/"),
        (f"{ORIGIN}/about", "/about"),
        (f"{ORIGIN}/about/", "/about"),
        (f"{ORIGIN}/about?tab=2#top", "/about"),
        (f"{ORIGIN}/notes/42", "/notes/42"),
        (f"{ORIGIN}/%E5%85%B3%E4%BA%8E", "/关于"),
        (f"{ORIGIN}/notes.txt", None),
        (f"{ORIGIN}/assets/index.js", None),
        (f"{ORIGIN}/assets/logo", None),
        (f"{ORIGIN}/_api/items", None),
        (f"{ORIGIN}/a/../b", None),
        (f"{ORIGIN}/a//b", None),
        (f"{ORIGIN}/%2e%2e/etc", None),
        (f"{ORIGIN}/a%2Fb", None),
        (f"{ORIGIN}/a b", None),
        ("https://elsewhere.example/about", None),
        ("http://prerender.localhost:8080/about", None),
        ("mailto:someone@example.com", None),
        ("javascript:alert(1)", None),
        (f"{ORIGIN}/" + "/".join(["d"] * (MAX_DEPTH + 1)), None),
        (f"{ORIGIN}/" + "x" * 300, None),
    ],
)
def test_a_link_is_a_route_only_when_it_is_the_sites_own_plain_path(
    href: str, route: str | None
) -> None:
    assert route_of(href, ORIGIN) == route


@given(st.text(max_size=80))
def test_a_route_is_always_a_file_inside_the_output(path: str) -> None:
    route = route_of(f"{ORIGIN}/{path}", ORIGIN)
    if route is None:
        return
    file = file_of(route)
    parts = file.split("/")
    assert parts[-1] == "index.html" and ".." not in parts and "" not in parts
    assert all("." not in p and "\\" not in p and "\0" not in p for p in parts[:-1])
