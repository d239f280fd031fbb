"""The admin's usage tab (issue 43), in real headless Chromium against a local server of its
own with the offline model: the tables per account and per model show what
GET /api/admin/usage answers, in its order, with the grand total (a cost only where every
request had a price); an account's budget form shows the platform's budgets, the account's
own and what it spent, says a refused value next to the form, sets a budget that refuses the
account's next chat (429 quota_exceeded), and "Use the platform's" clears it again."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from tests.e2e.test_admin import admin_client
from tests.e2e.test_console_a11y import axe, scan  # noqa: F401 (axe is a fixture)
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    new_page,
    shot,
)
from tests.e2e.test_console_usage import compact
from tests.e2e.test_console_usage_views import dollars, wait_drawn

# Only the code model has a price: the naming (routing) model's requests have none, so the
# tables show both a cost and "not known".
PRICES = '{"gpt-4o": {"input": 2.5, "output": 10}}'
VIEW = "#admin-usage"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of this module's own (the admin's totals are every account's), the code
    model priced."""
    srv = Server(tmp_path_factory.mktemp("zerocode-admin-usage"))
    srv.env["ZEROCODE_MODEL_PRICES"] = PRICES
    srv.start()
    yield srv
    srv.stop()


def cost_text(u: dict[str, Any]) -> str:
    """As the console writes a row's cost (web/admin.js)."""
    if u["costUsd"] is not None and not u["unpricedRequests"]:
        return dollars(u["costUsd"])
    return f"not known ({u['unpricedRequests']} unpriced)" if u["requests"] else "—"


def expected(name: str, u: dict[str, Any]) -> list[Any]:
    """A row as the table shows it: its name, then each figure's text and exact value."""
    return [
        name,
        [str(u["requests"]), str(u["requests"])],
        [compact(u["inputTokens"]), str(u["inputTokens"])],
        [compact(u["outputTokens"]), str(u["outputTokens"])],
        [compact(u["cachedTokens"]), str(u["cachedTokens"])],
        cost_text(u),
    ]


def table(page: Any, selector: str) -> list[list[Any]]:
    """Each row of a usage table (body, then footer): its header, then its cells."""
    return list(
        page.eval_on_selector_all(
            f"{selector} tbody tr:not(.budget-row), {selector} tfoot tr",
            """rs => rs.map(r => {
              const cells = [...r.querySelectorAll('td.num')];
              return [r.querySelector('th').textContent,
                      ...cells.slice(0, 4).map(c => [c.textContent, c.getAttribute('title')
                                                     || c.dataset.value]),
                      cells[4].textContent];
            })""",
        )
    )


def assert_tables(page: Any, answer: dict[str, Any]) -> None:
    accounts = [expected(a["account"], a) for a in answer["accounts"]]
    models = [expected(m["model"], m) for m in answer["models"]]
    total = expected("Total", answer["total"])
    assert table(page, "#admin-usage-accounts") == [*accounts, total]
    assert table(page, "#admin-usage-models") == [*models, total]
    users = page.eval_on_selector_all(
        "#admin-usage-accounts tbody tr:not(.budget-row)", "rs => rs.map(r => r.dataset.user)"
    )
    assert users == [a["userId"] for a in answer["accounts"]]


def facts(page: Any, user_id: str) -> dict[str, str]:
    rows = page.eval_on_selector_all(
        f"tr.budget-row[data-budget-of='{user_id}'] dd[data-budget]",
        "ds => ds.map(d => [d.dataset.budget, d.textContent])",
    )
    return dict(rows)


def test_the_admin_sees_every_accounts_usage_and_sets_and_clears_a_budget(
    browser: Any,  # noqa: F811
    server: Server,
    axe: str,  # noqa: F811
) -> None:
    ann, bob = signed_in(server), signed_in(server)
    apps = {}
    for who, prompt in ((ann, "A page about owls"), (bob, "A page about bats")):
        app = create(who, prompt, "html")
        turn = chat(who, app["id"], prompt)
        assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
        apps[id(who)] = app
    # bob spends more: a second turn, so the accounts' order is known
    more = chat(bob, apps[id(bob)]["id"], "Make the heading green")
    assert more.done is not None and more.done["status"] == "succeeded", more.done
    admin_name = f"usage-admin-{secrets.token_hex(3)}"
    admin = admin_client(server, admin_name)
    ann_me, bob_me = ann.get("/api/users/me").json(), bob.get("/api/users/me").json()

    page = new_page(browser)
    page.goto(f"{server.api}/console/#/login")
    page.fill("input[name=account]", admin_name)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.click("#nav >> text=Admin")
    page.wait_for_selector("#admin-apps")
    page.click(".tabs >> text=Usage")
    wait_drawn(page, VIEW, 0)
    assert page.url.endswith("#/admin/usage")
    answer = admin.get("/api/admin/usage", params={"limit": 200}).json()
    listed = [a["userId"] for a in answer["accounts"]]
    assert listed[:2] == [bob_me["id"], ann_me["id"]]  # most tokens first; the admin spent none
    assert answer["accountCount"] == 2 and len(answer["models"]) == 2
    # Each account paid for its naming (no price) and its turns (priced): no whole cost.
    assert all(a["unpricedRequests"] == 1 and a["costUsd"] for a in answer["accounts"])
    assert {m["model"]: m["unpricedRequests"] == 0 for m in answer["models"]} == {
        "gpt-4o": True,
        "gpt-4o-mini": False,
    }
    assert_tables(page, answer)
    assert page.inner_text("#admin-usage-title") == "Model usage of every account, last 30 days"
    assert page.inner_text(f"{VIEW} .usage-range") == (
        f"From {answer['from']} to {answer['to']}, by UTC day"
    )
    # The grand total above the tables too (usage_chart.js's figures).
    requests = page.eval_on_selector(f"{VIEW} [data-total='requests'] dd", "d => d.textContent")
    assert requests == str(answer["total"]["requests"])
    captions = page.eval_on_selector_all(f"{VIEW} caption", "cs => cs.map(c => c.textContent)")
    assert captions == ["Per account, most tokens first", "Per model, most tokens first"]
    shot(page, "admin-usage")

    # ann's budget: the form shows the platform's (none here), hers (none) and her spending.
    ann_row = f"#admin-usage-accounts tr[data-user='{ann_me['id']}']"
    button = page.locator(f"{ann_row} button.budget-open")
    assert button.get_attribute("aria-label") == f"Token budget of {ann_me['account']}"
    button.click()
    assert button.get_attribute("aria-expanded") == "true"
    form = f"tr.budget-row[data-budget-of='{ann_me['id']}']"
    page.wait_for_selector(f"{form} form:not([aria-busy]) dd[data-budget='spent']")
    url = f"/api/admin/users/{ann_me['id']}/budget"
    before = admin.get(url).json()
    assert before["override"] is None and before["spent"]["today"] > 0
    spent = before["spent"]
    assert facts(page, ann_me["id"]) == {
        "platform": "no limit a day · no limit a month",
        "override": "none: the platform's hold",
        "effective": "no limit a day · no limit a month",
        "spent": f"{spent['today']:,} today · {spent['thisMonth']:,} this month"
        " (tokens in and out, UTC)",
    }
    assert page.input_value(f"{form} input[name=tokensPerDay]") == ""
    assert page.is_disabled(f"{form} button.budget-clear")  # nothing of her own to clear

    # A value the API refuses is said next to the form, and nothing changes.
    page.fill(f"{form} input[name=tokensPerDay]", "-5")
    page.click(f"{form} button[type=submit]")
    error = page.wait_for_selector(f"{form} .budget-error:not(:empty)")
    assert error.text_content() == (
        "Tokens per day: a whole number from 0 to 1,000,000,000,000, or empty for no limit."
    )
    assert error.get_attribute("role") == "alert"
    assert admin.get(url).json()["override"] is None
    assert page.is_hidden("#toast")  # said in the form, not as a toast
    # axe-core finds nothing serious in the tab, its form open, in either theme.
    found = scan(page, axe, "admin: usage, light")
    page.emulate_media(color_scheme="dark")
    found += scan(page, axe, "admin: usage, dark")
    page.emulate_media(color_scheme="light")
    assert not found, "axe-core, serious and critical:\n" + "\n".join(found)

    # One token a day: saved, shown as in force, and her next chat is refused.
    page.fill(f"{form} input[name=tokensPerDay]", "1")
    page.fill(f"{form} input[name=tokensPerMonth]", "")
    page.click(f"{form} button[type=submit]")
    said = page.wait_for_selector(f"{form} .budget-said:not(:empty)")
    assert said.text_content() == (
        f"Saved. In force for {ann_me['account']} now: 1 a day · no limit a month."
    )
    assert page.inner_text(f"{form} .budget-error") == ""
    assert facts(page, ann_me["id"])["effective"] == "1 a day · no limit a month"
    assert facts(page, ann_me["id"])["override"] == "1 a day · no limit a month"
    got = admin.get(url).json()
    assert got["override"] == got["effective"] == {"tokensPerDay": 1, "tokensPerMonth": None}
    assert page.is_enabled(f"{form} button.budget-clear")
    refused = ann.post(f"/api/apps/{apps[id(ann)]['id']}/chat", json={"message": "Add a footer"})
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "quota_exceeded"
    shot(page, "admin-usage-budget")

    # "Use the platform's": cleared, shown, and her chat works again.
    page.click(f"{form} button.budget-clear")
    page.wait_for_function(
        "sel => (document.querySelector(sel)?.textContent || '').startsWith('The platform')",
        arg=f"{form} .budget-said",
    )
    assert page.inner_text(f"{form} .budget-said") == (
        f"The platform's budgets hold for {ann_me['account']} again:"
        " no limit a day · no limit a month."
    )
    assert facts(page, ann_me["id"])["override"] == "none: the platform's hold"
    assert facts(page, ann_me["id"])["effective"] == "no limit a day · no limit a month"
    assert admin.get(url).json()["override"] is None
    assert page.is_disabled(f"{form} button.budget-clear")
    again = chat(ann, apps[id(ann)]["id"], "Add a footer")
    assert again.done is not None and again.done["status"] == "succeeded", again.done

    # Refresh reads the totals again: her new turn is in her row and the model's.
    seen = int(page.eval_on_selector(VIEW, "v => Number(v.dataset.loaded)"))
    page.click(f"{VIEW} .usage-head button")
    wait_drawn(page, VIEW, seen)
    after = admin.get("/api/admin/usage", params={"limit": 200}).json()
    assert after["total"]["requests"] > answer["total"]["requests"]
    assert_tables(page, after)
    # On a phone each row is a card and the budget form fits the screen.
    phone = new_page(browser, width=390)
    phone.goto(f"{server.api}/console/#/login")
    phone.fill("input[name=account]", admin_name)
    phone.fill("input[name=password]", "correct horse")
    phone.click("button[type=submit]")
    phone.wait_for_selector("#nav >> text=Admin")
    phone.goto(f"{server.api}/console/#/admin/usage")
    wait_drawn(phone, VIEW, 0)
    phone.click(f"{ann_row} button.budget-open")
    phone.wait_for_selector(f"{form} form:not([aria-busy]) dd[data-budget='spent']")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    label = phone.eval_on_selector(
        f"{ann_row} td.num", "td => getComputedStyle(td, '::before').content"
    )
    assert label == '"requests"'
    for control in phone.query_selector_all(f"{form} input, {form} button"):
        box = control.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    shot(phone, "admin-usage-phone")
    assert phone.errors == []
    # Only an admin reads these.
    assert ann.get("/api/admin/usage").status_code == 403
    assert httpx.get(f"{server.api}/api/admin/usage").status_code == 401
    assert page.errors == []
