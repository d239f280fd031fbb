"""A published site's visits in the console (issue 44, point 4), in real headless Chromium
against the local server: a deployed app's page shows, beside its deploys, the totals of
GET …/analytics (page views, visitors, bots' views) and a chart with a slot per UTC day of
the last 30, today's the only one drawn; Refresh reads what came since; an app never
deployed shows none of it."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_turns import open_app, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)
from tests.e2e.test_console_usage_views import wait_drawn
from tests.e2e.test_deploy import deploy
from tests.e2e.test_site_visits import (  # noqa: F401 (server: this module's, no covers)
    CHROME,
    FIREFOX,
    GOOGLEBOT,
    server,
    visitor,
)

VIEW = "#visits-view"


def shown(page: Any) -> dict[str, tuple[str, str | None]]:
    rows = page.eval_on_selector_all(
        f"{VIEW} [data-total]",
        "ts => ts.map(t => { const dd = t.querySelector('dd');"
        " return [t.dataset.total, dd.textContent, dd.getAttribute('title')]; })",
    )
    return {key: (text, title) for key, text, title in rows}


def days(page: Any) -> list[dict[str, Any]]:
    return list(
        page.eval_on_selector_all(
            f"{VIEW} svg.visits-chart g.usage-day",
            "gs => gs.map(g => { const v = g.querySelector('.visits-views'),"
            " u = g.querySelector('.visits-visitors'); return {day: v.dataset.day,"
            " views: Number(v.dataset.views), visitors: Number(u.dataset.visitors),"
            " tall: Number(v.getAttribute('height')), inner: Number(u.getAttribute('height')),"
            " title: g.querySelector('title').textContent}; })",
        )
    )


def test_a_deployed_apps_page_charts_its_sites_visits(
    browser: Any,  # noqa: F811
    server: Server,  # noqa: F811
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    turn = chat(owner, app["id"], "A page about otters")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    open_app(page, server.api, app["id"])
    assert page.locator(VIEW).count() == 0  # nothing published: no visits to show
    assert deploy(owner, app["id"])["state"] == "succeeded"
    site = owner.get(f"/api/apps/{app['id']}").json()["deployUrl"]
    for address, agent, pages in (
        ("127.0.0.2", CHROME, ("", "", "about")),
        ("127.0.0.3", FIREFOX, ("",)),
        ("127.0.0.4", GOOGLEBOT, ("", "")),
    ):
        with visitor(address, agent) as browsing:
            for path in pages:
                assert browsing.get(site + path).status_code == 200

    page.reload()  # a deployed app now: its deploys, then its visits
    page.wait_for_selector("#message")
    wait_drawn(page, VIEW, 0)
    answer = owner.get(f"/api/apps/{app['id']}/analytics").json()
    assert answer["total"] == {"views": 4, "visitors": 2, "botViews": 2}
    assert shown(page) == {"views": ("4", "4"), "visitors": ("2", "2"), "botViews": ("2", "2")}
    assert page.inner_text("#visits-title") == "Site visits, last 30 days"
    drawn = days(page)
    assert [d["day"] for d in drawn] == [d["day"] for d in answer["days"]] and len(drawn) == 30
    today = drawn[-1]
    assert (today["views"], today["visitors"]) == (4, 2)
    assert today["tall"] > today["inner"] > 0  # the visitors' bar in front of the views'
    assert today["title"] == f"{answer['to']}: 4 page views · 2 visitors · 2 by bots"
    assert all(d["tall"] == 0 and d["inner"] == 0 for d in drawn[:-1])
    label = page.get_attribute(f"{VIEW} svg.visits-chart", "aria-label") or ""
    assert "4 page views by 2 visitors" in label and answer["from"] in label
    rows = page.eval_on_selector_all(
        f"{VIEW} table.visually-hidden tbody tr",
        "rs => rs.map(r => [...r.children].map(c => c.textContent))",
    )
    assert rows == [[answer["to"], "4", "2", "2"]]
    assert page.locator(f"{VIEW} .usage-none").count() == 0
    page.locator(VIEW).scroll_into_view_if_needed()  # the deploy panel's last part
    assert page.is_visible(f"{VIEW} svg.visits-chart")
    shot(page, "site-visits")

    # A new visitor, then Refresh: the view reads again.
    with visitor("127.0.0.5", CHROME) as newcomer:
        assert newcomer.get(site).status_code == 200
    seen = int(page.eval_on_selector(VIEW, "v => Number(v.dataset.loaded || 0)"))
    page.click(f"{VIEW} .usage-refresh")
    wait_drawn(page, VIEW, seen)
    assert shown(page)["views"] == ("5", "5") and shown(page)["visitors"] == ("3", "3")

    # In Chinese: its words change, its figures do not.
    page.evaluate("localStorage.setItem('zc_lang', 'zh-CN')")
    page.reload()
    page.wait_for_selector("#message")
    wait_drawn(page, VIEW, 0)
    assert page.inner_text("#visits-title") == "网站访问（最近 30 天）"
    labels = page.eval_on_selector_all(
        f"{VIEW} [data-total] dt", "ds => ds.map(d => d.textContent)"
    )
    assert labels == ["页面浏览", "访客", "机器人浏览"]
    assert shown(page)["views"] == ("5", "5")
    page.locator(VIEW).scroll_into_view_if_needed()
    shot(page, "site-visits-zh")
    assert page.errors == []
