"""What model requests cost, by day, in the console (issue 43), in real headless Chromium
against the local server with the offline model: an app's Usage tab and the account's view
on the home page show the totals GET …/usage answers (tokens as the per-turn line writes
them, the exact count as the title; a cost only where every request had a price) and a
chart with one bar per UTC day of the range, the day with requests the only bar drawn. The
tab reads again when a turn ends while it is shown, and when it is opened."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)
from tests.e2e.test_console_usage import compact

# US dollars per million tokens, for the model names the offline model answers under
# (ZEROCODE_MODEL_CODE / _ROUTING's defaults).
PRICES = '{"gpt-4o": {"input": 2.5, "output": 10}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}'


@pytest.fixture(scope="module")
def priced_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose operator priced the offline model: every request has a cost."""
    srv = Server(tmp_path_factory.mktemp("zerocode-usage-priced"))
    srv.env["ZEROCODE_MODEL_PRICES"] = PRICES
    srv.start()
    yield srv
    srv.stop()


def dollars(usd: float) -> str:
    """As the console writes a cost (web/render.js)."""
    return f"${usd:.4f}" if usd < 0.01 else f"${usd:.2f}"


def days_of(answer: dict[str, Any]) -> list[str]:
    first, last = dt.date.fromisoformat(answer["from"]), dt.date.fromisoformat(answer["to"])
    return [(first + dt.timedelta(days=i)).isoformat() for i in range((last - first).days + 1)]


def drawn(page: Any, view: str) -> int:
    """How many times the view has drawn an answer (0: not yet)."""
    return int(page.eval_on_selector(view, "v => Number(v.dataset.loaded || 0)"))


def wait_drawn(page: Any, view: str, after: int) -> None:
    page.wait_for_function(
        "([sel, n]) => { const v = document.querySelector(sel);"
        " return v && Number(v.dataset.loaded || 0) > n && !v.hasAttribute('aria-busy'); }",
        arg=[view, after],
        timeout=TURN_MS,
    )


def totals(page: Any, view: str) -> dict[str, tuple[str, str | None]]:
    """Each total the view shows: its text and its title (the exact figure)."""
    rows = page.eval_on_selector_all(
        f"{view} [data-total]",
        "ts => ts.map(t => { const dd = t.querySelector('dd');"
        " return [t.dataset.total, dd.textContent, dd.getAttribute('title')]; })",
    )
    return {key: (text, title) for key, text, title in rows}


def bars(page: Any, view: str) -> list[dict[str, Any]]:
    return list(
        page.eval_on_selector_all(
            f"{view} svg.usage-chart rect.usage-bar",
            "rs => rs.map(r => ({day: r.dataset.day, tokens: Number(r.dataset.tokens),"
            " height: Number(r.getAttribute('height')),"
            " title: r.parentNode.querySelector('title').textContent}))",
        )
    )


def assert_shows(page: Any, view: str, answer: dict[str, Any], *, priced: bool) -> None:
    """The view shows ``answer`` (a GET …/usage body): totals, cost, one bar per day."""
    total = answer["total"]
    shown = totals(page, view)
    assert shown["requests"] == (str(total["requests"]), str(total["requests"]))
    for key, field in (
        ("input", "inputTokens"),
        ("output", "outputTokens"),
        ("cached", "cachedTokens"),
    ):
        assert shown[key] == (compact(total[field]), str(total[field])), key
    if priced:
        assert total["costUsd"] is not None and total["unpricedRequests"] == 0
        assert shown["cost"][0] == dollars(total["costUsd"])
        assert float(shown["cost"][1] or "nan") == pytest.approx(total["costUsd"])
    else:  # no price for the model: no cost is claimed, and the view says why
        assert total["costUsd"] is None and total["unpricedRequests"] == total["requests"]
        assert shown["cost"] == (f"not known ({total['requests']} requests had no price)", None)
    drawn_bars = bars(page, view)
    assert [b["day"] for b in drawn_bars] == days_of(answer)  # one per day, zero days too
    by_day = {d["day"]: d for d in answer["days"]}
    for bar in drawn_bars:
        day = by_day.get(bar["day"])
        if day is None:
            assert bar["tokens"] == 0 and bar["height"] == 0, bar
            assert bar["title"] == f"{bar['day']}: no requests"
        else:
            assert bar["tokens"] == day["inputTokens"] + day["outputTokens"] and bar["height"] > 0
            tokens_in, tokens_out = compact(day["inputTokens"]), compact(day["outputTokens"])
            said = f"{day['requests']} requests · {tokens_in} tokens in · {tokens_out} out"
            assert bar["title"] == f"{day['day']}: {said}"
    chart = page.locator(f"{view} svg.usage-chart")
    assert chart.get_attribute("role") == "img"
    label = chart.get_attribute("aria-label") or ""
    assert answer["from"] in label and answer["to"] in label
    assert f"days with requests: {len(answer['days'])}" in label
    # The same numbers for a screen reader: a row per day with requests.
    rows = page.eval_on_selector_all(
        f"{view} table.visually-hidden tbody tr",
        "rs => rs.map(r => [...r.children].map(c => c.textContent))",
    )
    assert rows == [
        [
            d["day"],
            str(d["requests"]),
            str(d["inputTokens"]),
            str(d["outputTokens"]),
            str(d["cachedTokens"]),
        ]
        for d in answer["days"]
    ]


def test_an_apps_usage_tab_shows_its_days_and_reads_again_after_a_turn(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    open_app(page, server.api, app["id"])
    view = "#usage-view"
    page.click("#tab-usage")
    wait_drawn(page, view, 0)
    before = owner.get(f"/api/apps/{app['id']}/usage").json()  # naming the app may ask once
    assert_shows(page, view, before, priced=False)
    assert len(bars(page, view)) == 30  # the last 30 days, by default

    # A turn while the tab is shown: when it ends the tab reads the usage again by itself.
    seen = drawn(page, view)
    send(page, "A page about otters")
    page.wait_for_selector(
        '#messages .msg.ai:not([data-turn="running"])[data-turn]', timeout=TURN_MS
    )
    wait_drawn(page, view, seen)
    after = owner.get(f"/api/apps/{app['id']}/usage").json()
    assert after["total"]["requests"] > before["total"]["requests"] and len(after["days"]) == 1
    assert after["days"][0]["day"] == after["to"]  # today, UTC: the range's last day
    assert_shows(page, view, after, priced=False)
    assert page.locator(f"{view} .usage-none").count() == 0
    assert page.locator(f"{view} .usage-estimated").count() == 0  # the offline model reports
    shot(page, "usage-app-tab")

    # A turn while another tab is shown (run elsewhere): opening Usage reads it.
    page.click("#tab-code")
    turn = chat(owner, app["id"], "Make the heading green")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    seen = drawn(page, view)
    page.click("#tab-usage")
    wait_drawn(page, view, seen)
    again = owner.get(f"/api/apps/{app['id']}/usage").json()
    assert again["total"]["requests"] > after["total"]["requests"]
    assert_shows(page, view, again, priced=False)
    assert page.errors == []


def test_the_home_page_shows_the_accounts_usage_over_its_apps(
    browser: Any,  # noqa: F811
    priced_server: Server,
) -> None:
    page, owner = signed_up(browser, priced_server)
    view = "#account-usage"
    wait_drawn(page, view, 0)
    assert totals(page, view)["requests"] == ("0", "0")  # a new account: nothing spent yet
    assert totals(page, view)["cost"] == ("—", None)
    assert page.inner_text(f"{view} .usage-none") == "No model requests in these days."
    assert [b["tokens"] for b in bars(page, view)] == [0] * 30
    apps = [
        create(owner, "A page about otters", "html"),
        create(owner, "A page about newts", "html"),
    ]
    for app in apps:
        turn = chat(owner, app["id"], app["initPrompt"])
        assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    page.reload()
    page.wait_for_selector("#prompt")
    wait_drawn(page, view, 0)
    mine = owner.get("/api/users/me/usage").json()
    per_app = [owner.get(f"/api/apps/{a['id']}/usage").json()["total"] for a in apps]
    # The account's view is both apps' usage, priced.
    for field in ("requests", "inputTokens", "outputTokens", "cachedTokens"):
        assert (
            mine["total"][field]
            == sum(t[field] for t in per_app)
            > (0 if field != "cachedTokens" else -1)
        )
    assert_shows(page, view, mine, priced=True)
    assert page.inner_text("#account-usage-title") == "Your model usage, last 30 days"
    shot(page, "usage-account")

    # The same view in Chinese: its words change, its figures do not.
    page.evaluate("localStorage.setItem('zc_lang', 'zh-CN')")
    page.reload()
    page.wait_for_selector("#prompt")
    wait_drawn(page, view, 0)
    assert page.inner_text("#account-usage-title") == "我的模型用量（最近 30 天）"
    labels = page.eval_on_selector_all(
        f"{view} [data-total] dt", "ds => ds.map(d => d.textContent)"
    )
    assert labels == ["请求", "输入词元", "输出词元", "缓存", "费用"]
    assert totals(page, view)["cost"][0] == dollars(mine["total"]["costUsd"])
    label = page.get_attribute(f"{view} svg.usage-chart", "aria-label") or ""
    assert "有请求的天数：1" in label and mine["to"] in label
    shot(page, "usage-account-zh")
    assert page.errors == []


def test_estimated_and_partly_priced_usage_is_said_so_and_no_ledger_is_said_plainly(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """Answers the offline model never gives, served in place of the API's: requests the
    platform counted itself, a cost known for only some requests, and a platform keeping no
    usage (404)."""
    page, _ = signed_up(browser, server)
    view = "#account-usage"
    day = {
        "day": "2026-03-02",
        "requests": 5,
        "inputTokens": 18120,
        "outputTokens": 2210,
        "cachedTokens": 1000,
        "estimatedRequests": 2,
        "costUsd": 0.0674,
        "unpricedRequests": 1,
    }
    answer = {
        "from": "2026-02-26",
        "to": "2026-03-03",  # across the end of February: 6 days
        "days": [day],
        "total": {k: v for k, v in day.items() if k != "day"},
    }
    page.route(
        "**/api/users/me/usage",
        lambda route: route.fulfill(status=200, content_type="application/json", json=answer),
    )
    page.reload()
    wait_drawn(page, view, 0)
    shown = totals(page, view)
    assert shown["input"] == ("18k", "18120") and shown["cached"] == ("1.0k", "1000")
    assert shown["cost"] == ("not known (1 requests had no price)", None)  # not $0.07
    estimated = page.inner_text(f"{view} .usage-estimated")
    assert estimated.startswith("(estimated) 2 of the 5 requests were counted by the platform")
    assert [b["day"] for b in bars(page, view)] == [
        "2026-02-26",
        "2026-02-27",
        "2026-02-28",
        "2026-03-01",
        "2026-03-02",
        "2026-03-03",
    ]
    assert [b["tokens"] for b in bars(page, view)] == [0, 0, 0, 0, 20330, 0]

    page.unroute("**/api/users/me/usage")
    page.route(
        "**/api/users/me/usage",
        lambda route: route.fulfill(
            status=404,
            content_type="application/json",
            json={"error": {"code": "not_found", "message": "model usage is not kept"}},
        ),
    )
    page.reload()
    page.wait_for_selector(f"{view} .usage-body p")
    assert page.inner_text(f"{view} .usage-body") == "This platform keeps no record of model usage."
    assert page.is_hidden("#toast")  # said in place, not as an error
    assert page.errors == []
