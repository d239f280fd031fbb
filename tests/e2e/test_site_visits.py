"""Visits counted, privately (issue 44, point 4), over the real local server: a scripted set
of visits of a published site — several visitors (told apart by their address, each a
loopback address of its own as the connection's source, and by their browser), visitors who
come back, a returning browser's 304, a client-side route, assets, HEADs, a missing file,
the preview, bots — and ``GET /api/apps/{id}/analytics`` says exactly how many page views,
visitors and bots' views there were, today, with every other day of the range at zero."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from tests.e2e.test_deploy import deploy

CHROME = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0.0.0 Safari/537.36"
)
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of this module's own, without covers: nothing but the test visits its sites
    (a deploy's cover is taken by a headless browser, which would be a bot's view)."""
    srv = Server(tmp_path_factory.mktemp("zerocode-visits"))
    srv.env["ZEROCODE_COVERS"] = "0"
    srv.start()
    yield srv
    srv.stop()


def visitor(address: str, agent: str) -> httpx.Client:
    """A browser at ``address`` (a loopback address: the connection's source, which is what
    the sites server counts; no X-Forwarded-For is believed)."""
    return httpx.Client(
        transport=httpx.HTTPTransport(local_address=address),
        headers={"User-Agent": agent},
        timeout=30,
    )


def published(owner: httpx.Client, prompt: str) -> dict[str, Any]:
    app = create(owner, prompt, "html")
    turn = chat(owner, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    assert deploy(owner, app["id"])["state"] == "succeeded"
    return dict(owner.get(f"/api/apps/{app['id']}").json())


def analytics(owner: httpx.Client, app_id: str, query: str = "") -> dict[str, Any]:
    answer = owner.get(f"/api/apps/{app_id}/analytics{query}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_scripted_set_of_visits_is_counted_exactly(server: Server) -> None:
    owner = signed_in(server)
    app = published(owner, "A page about otters")
    other = published(owner, "A page about newts")
    site, preview = app["deployUrl"], app["previewUrl"]
    before = analytics(owner, app["id"])
    assert before["total"] == {"views": 0, "visitors": 0, "botViews": 0}

    ann = visitor("127.0.0.2", CHROME)
    assert ann.get(site).status_code == 200
    assert ann.get(site).status_code == 200  # back again: a view, the same visitor
    route = ann.get(site + "otters/facts")  # a client-side route: the page answers
    assert route.status_code == 200 and route.headers["content-type"].startswith("text/html")
    etag = ann.get(site).headers["etag"]
    revalidated = ann.get(site, headers={"If-None-Match": etag})
    assert revalidated.status_code == 304  # a returning browser: a view too
    for asset in ("favicon.ico", "favicon.svg", "robots.txt", "sitemap.xml", "site.webmanifest"):
        assert ann.get(site + asset).status_code == 200, asset  # no page: no view
    assert ann.get(site + "missing.png").status_code == 404
    assert ann.head(site).status_code == 200  # HEAD: no view
    assert ann.get(preview).status_code == 200  # the preview: never counted
    assert ann.get(preview + "otters/facts").status_code == 200
    ann_views = 5

    # The same address in another browser is another visitor; so is another address.
    ann_firefox = visitor("127.0.0.2", FIREFOX)
    assert ann_firefox.get(site).status_code == 200
    bob = visitor("127.0.0.3", CHROME)
    assert bob.get(site).status_code == 200 and bob.get(site + "about").status_code == 200
    cat = visitor("127.0.0.4", CHROME)
    assert cat.get(site).status_code == 200
    assert cat.get(other["deployUrl"]).status_code == 200  # the other app's site: its own
    views, visitors = ann_views + 1 + 2 + 1, 4

    # Bots: counted apart, never visitors; a HEAD of theirs is nothing either.
    crawler = visitor("127.0.0.5", GOOGLEBOT)
    for _ in range(3):
        assert crawler.get(site).status_code == 200
    assert crawler.head(site).status_code == 200
    assert crawler.get(site + "robots.txt").status_code == 200
    with httpx.Client(timeout=30) as library:  # python-httpx: a library, a bot
        assert library.get(site).status_code == 200
    bot_views = 4

    found = analytics(owner, app["id"])
    assert found["total"] == {"views": views, "visitors": visitors, "botViews": bot_views}
    assert len(found["days"]) == 30 and found["days"][-1]["day"] == found["to"]
    assert found["days"][0]["day"] == found["from"]
    assert found["days"][-1] == {"day": found["to"], **found["total"]}
    assert all(d["views"] == d["visitors"] == d["botViews"] == 0 for d in found["days"][:-1])
    assert analytics(owner, other["id"])["total"] == {"views": 1, "visitors": 1, "botViews": 0}
    assert analytics(owner, app["id"], "?days=1")["days"] == [found["days"][-1]]
    assert len(analytics(owner, app["id"], "?days=365")["days"]) == 365

    # The same visitor the same day is still one; a new one is one more.
    assert ann.get(site).status_code == 200
    assert visitor("127.0.0.6", FIREFOX).get(site).status_code == 200
    again = analytics(owner, app["id"], "?days=7")
    assert again["total"] == {"views": views + 2, "visitors": visitors + 1, "botViews": bot_views}


def test_the_range_is_checked_and_only_the_owner_sees_it(server: Server) -> None:
    owner = signed_in(server)
    app = create(owner, "A page about owls", "html")
    never = analytics(owner, app["id"])  # never deployed: every day is zero
    assert never["total"] == {"views": 0, "visitors": 0, "botViews": 0}
    for bad in ("0", "366", "-1", "many", "1.5"):
        refused = owner.get(f"/api/apps/{app['id']}/analytics?days={bad}")
        assert refused.status_code == 422, (bad, refused.text)
        assert refused.json()["error"]["code"] == "validation_error"
        assert "days" in refused.json()["error"]["message"], refused.text
    stranger = signed_in(server)
    assert stranger.get(f"/api/apps/{app['id']}/analytics").status_code == 404
    anonymous = httpx.get(f"{server.api}/api/apps/{app['id']}/analytics")
    assert anonymous.status_code == 401
