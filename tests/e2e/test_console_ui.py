"""The console's issue-15 behaviour in real headless Chromium (Playwright + Debian's
chromium), against one real server for the module: the offline-model notice and its
example prompts, English and Chinese, error messages by code, the owner's rename and
delete, admin tables on a phone, the closable context panel, replies drawn the same live
and after a reload, and the placeholder before the first preview. Screenshots go to
test-artifacts/console-ui/ (ZEROCODE_TEST_ARTIFACTS moves them)."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, chromium_browser, create
from tests.e2e.test_accounts import make_admin

ARTIFACTS = Path(os.environ.get("ZEROCODE_TEST_ARTIFACTS", "test-artifacts")) / "console-ui"
TURN_MS = 120_000
WEB = Path(__file__).resolve().parents[2] / "web"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_browser() as chromium:
        yield chromium


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def new_page(browser: Any, locale: str = "en-US", width: int = 1280) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def register(page: Any, server: Server, account: str | None = None) -> str:
    """A new account through the console's form (by field names: any language); home after."""
    account = account or f"ui-{secrets.token_hex(4)}"
    page.goto(f"{server.api}/console/#/register")
    page.fill("input[name=account]", account)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_selector("#prompt")
    return account


def api_for(page: Any, server: Server) -> httpx.Client:
    """An API client with the console's own token (to set up state quickly)."""
    token = page.evaluate("localStorage.getItem('zc_token')")
    return httpx.Client(
        base_url=server.api, timeout=300, headers={"Authorization": f"Bearer {token}"}
    )


def finished_turns(page: Any, count: int) -> list[str]:
    page.wait_for_function(
        "n => [...document.querySelectorAll('#messages [data-turn]')]"
        ".filter(e => e.dataset.turn !== 'running').length >= n",
        arg=count,
        timeout=TURN_MS,
    )
    return [
        str(s)
        for s in page.eval_on_selector_all(
            "#messages [data-turn]", "els => els.map(e => e.dataset.turn)"
        )
    ]


def toast_text(page: Any) -> str:
    return str(page.wait_for_selector("#toast.error").inner_text())


# -- the offline model: said plainly, with prompts it handles --------------------------------


def examples() -> dict[str, list[str]]:
    """The example prompts as web/i18n.js lists them, per language."""
    source = (WEB / "i18n.js").read_text(encoding="utf-8")
    block = source[source.index("export const EXAMPLES") :]
    block = block[: block.index("};")]
    found: dict[str, list[str]] = {}
    for quoted, bare, body in re.findall(r'(?:"([\w-]+)"|(\w+)): \[(.*?)\]', block, re.S):
        found[quoted or bare] = [json.loads(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', body)]
    return found


def test_every_example_prompt_is_one_the_offline_model_builds_as_said() -> None:
    """The notice says the examples are prompts the offline model handles: its own router
    sends each language's three to a page, a multi-file site and a Vue project."""
    from zerocode.adapters.model.offline.script import route

    lists = examples()
    assert set(lists) == {"en", "zh-CN"}
    for lang, prompts in lists.items():
        kinds = [route(p) for p in prompts]
        assert kinds[:3] == ["html", "multi_file", "vue_project"], (lang, kinds)
        assert any(re.search(r"[\u4e00-\u9fff]", p) for p in prompts), lang  # a Chinese one


def test_the_offline_model_is_said_plainly_and_examples_fill_the_prompt(
    browser: Any, server: Server
) -> None:
    page = new_page(browser)
    register(page, server)
    notice = page.wait_for_selector("#offline-notice")
    text = notice.inner_text()
    assert "offline scripted model answers" in text and "ZEROCODE_MODEL_BASE_URL" in text
    buttons = page.locator("#offline-notice button.example")
    assert buttons.count() == 4
    shot(page, "1-offline-notice")
    buttons.nth(2).click()
    assert page.input_value("#prompt") == "A Vue todo app with an about page"
    assert page.inner_text(".create .counter") == "33 / 8000"
    buttons.nth(0).click()  # a page: quick to build
    assert page.input_value("#prompt") == "A landing page for a bakery"
    page.click("#create")
    assert finished_turns(page, 1) == ["succeeded"]
    page.frame_locator("#preview").locator("h1", has_text="Bakery").wait_for()

    # The app page says it too, with a change it can make; the example fills the message.
    hint = page.wait_for_selector("#offline-chat")
    assert "double quotes" in hint.inner_text()
    page.click("#offline-chat button.example")
    assert page.input_value("#message") == 'Change the title to "My Shop"'
    page.click("#send")
    assert finished_turns(page, 2)[-1] == "succeeded"
    page.frame_locator("#preview").locator("h1", has_text="My Shop").wait_for()

    # With a model endpoint configured, health says so and the notice is gone.
    page.route(
        "**/api/health",
        lambda route: route.fulfill(
            json={
                "status": "ok",
                "version": "x",
                "mode": "local",
                "model": "gpt",
                "builds": "sandboxed",
                "offlineModel": False,
            }
        ),
    )
    page.reload()
    page.wait_for_selector("#messages .msg")
    page.wait_for_timeout(300)
    assert page.query_selector("#offline-chat") is None
    page.goto(f"{server.api}/console/#/")
    page.wait_for_selector("#mine-apps .tile")
    assert page.query_selector("#offline-notice") is None
    assert page.errors == []


# -- languages ------------------------------------------------------------------------------


def test_a_chinese_browser_gets_chinese_and_the_switch_persists(
    browser: Any, server: Server
) -> None:
    page = new_page(browser, locale="zh-CN")
    page.goto(f"{server.api}/console/#/register")
    page.wait_for_selector("input[name=account]")
    assert page.evaluate("navigator.languages[0]") == "zh-CN"
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.inner_text("button[type=submit]") == "创建账号"
    assert "登录" in page.inner_text("#nav")
    register(page, server)
    assert page.inner_text(".create h2") == "创建一个应用"
    assert "未配置模型端点" in page.inner_text("#offline-notice")
    assert page.inner_text("#logout") == "退出登录"
    first_example = page.locator("#offline-notice button.example").first
    assert first_example.inner_text() == "一个介绍大熊猫的网页"
    shot(page, "2-chinese-home")

    page.select_option("#lang", "en")
    page.wait_for_selector("text=Create an app")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert page.inner_text("#logout") == "Log out"
    assert page.evaluate("localStorage.getItem('zc_lang')") == "en"
    page.reload()
    page.wait_for_selector("text=Create an app")  # the choice outlives the browser's language
    assert page.evaluate("document.documentElement.lang") == "en"

    page.select_option("#lang", "zh-CN")
    page.wait_for_selector("text=创建一个应用")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.reload()
    page.wait_for_selector("text=创建一个应用")
    assert page.errors == []


def test_errors_are_named_by_code_in_both_languages_and_cleared_on_leaving(
    browser: Any, server: Server
) -> None:
    page = new_page(browser)
    name = register(page, server)
    page.evaluate("localStorage.removeItem('zc_token')")
    page.goto(f"{server.api}/console/#/register")
    page.reload()
    page.fill("input[name=account]", name)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    said = toast_text(page)  # a 409 with code account_taken: not a busy app
    assert said.startswith("That account name is taken") and "Busy" not in said, said
    page.click("#nav >> text=Log in")
    page.wait_for_function("() => document.getElementById('toast').hidden")  # a stale error goes
    page.fill("input[name=account]", name)
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    assert toast_text(page) == "Wrong account or password."

    page.select_option("#lang", "zh-CN")  # the switch re-renders the page: the toast goes
    page.wait_for_function("() => document.getElementById('toast').hidden")
    page.fill("input[name=account]", name)
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    assert toast_text(page) == "账号或密码错误。"
    page.click("#nav >> text=注册")
    page.wait_for_function("() => document.getElementById('toast').hidden")
    page.fill("input[name=account]", name)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    said = toast_text(page)
    assert said.startswith("该账号名已被占用") and "正忙" not in said, said
    shot(page, "3-chinese-error")


# The console's wording of the API's own answer to a request it would not send (issue 38):
# the sentence for the field, never the field's name.
WORDED = """async ([api, body]) => {
  const m = await import('./messages.js');
  const r = await fetch(api + '/api/apps', { method: 'POST', body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json',
               Authorization: 'Bearer ' + localStorage.getItem('zc_token') } });
  const e = (await r.json()).error;
  return m.explain(new m.ApiError(r.status, e.code, e.message, 0, e));
}"""


def test_forms_say_what_to_fix_and_a_lockout_says_when_it_ends(
    browser: Any, server: Server
) -> None:
    """Issue 38: an empty Create and a blank rename are sentences about the form (checked
    before sending; the API's answer worded alike), in both languages; the sixth sign-in
    after five wrong passwords says the account is locked and when it opens again."""
    page = new_page(browser)
    account = register(page, server)
    page.fill("#prompt", "   ")
    page.click("#create")
    assert toast_text(page) == "Describe the app you want before creating it."
    assert page.url.endswith("#/")  # nothing was sent
    said = page.evaluate(WORDED, [server.api, {"initPrompt": ""}])
    assert said == "Describe the app you want before creating it."
    long = page.evaluate(WORDED, [server.api, {"initPrompt": "x", "codeGenType": "php"}])
    assert long == "Choose one of the kinds of app in the list." and "codeGenType" not in long

    app = create(api_for(page, server), "A page about herons", "html")
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#rename")
    page.fill("#rename-input", "  ")
    page.click("#rename-save")
    assert toast_text(page) == "An app needs a name: type one before saving."
    toast, hint = page.locator("#toast").bounding_box(), page.locator("#send-hint").bounding_box()
    assert (
        toast
        and hint
        and (  # the toast leaves the send hint in sight
            toast["y"] + toast["height"] <= hint["y"] or hint["y"] + hint["height"] <= toast["y"]
        )
    ), (toast, hint)
    assert api_for(page, server).get(f"/api/apps/{app['id']}").json()["name"] == app["name"]

    page.goto(f"{server.api}/console/#/")
    page.select_option("#lang", "zh-CN")
    page.fill("#prompt", "")
    page.click("#create")
    assert toast_text(page) == "请先描述你想要的应用，再创建。"
    said = page.evaluate(WORDED, [server.api, {"initPrompt": ""}])
    assert said == "请先描述你想要的应用，再创建。"
    page.select_option("#lang", "en")

    page.evaluate("localStorage.removeItem('zc_token')")
    page.goto(f"{server.api}/console/#/login")
    page.reload()
    for _ in range(5):
        page.fill("input[name=account]", account)
        page.fill("input[name=password]", "not the password")
        page.click("button[type=submit]")
        assert toast_text(page) == "Wrong account or password."
        page.evaluate("document.getElementById('toast').className = ''")  # the next one's
    page.fill("input[name=account]", account)
    page.fill("input[name=password]", "correct horse")  # the right one: locked all the same
    page.click("button[type=submit]")
    said = toast_text(page)
    assert re.fullmatch(
        r"This account is locked after 5 wrong passwords; try again at \d\d:\d\d( [AP]M)? "
        r"\(in 15 minutes\)\.",
        said,
    ), said
    shot(page, "8-locked")
    assert page.errors == []


# -- the owner's rename and delete --------------------------------------------------------------


def test_owners_rename_and_delete_their_app(browser: Any, server: Server) -> None:
    page = new_page(browser)
    register(page, server)
    owner = api_for(page, server)
    app = create(owner, "A page about herons", "html")
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#rename")
    page.fill("#rename-input", "Heron Watch")
    page.click("#rename-save")
    page.wait_for_selector("#app-name >> text=Heron Watch")
    assert owner.get(f"/api/apps/{app['id']}").json()["name"] == "Heron Watch"

    page.once("dialog", lambda d: d.dismiss())  # changing one's mind deletes nothing
    page.click("#delete")
    page.wait_for_timeout(300)
    assert owner.get(f"/api/apps/{app['id']}").status_code == 200
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.click("#delete")
    page.wait_for_selector("#prompt")  # home
    assert page.url.endswith("#/")
    assert "Heron Watch" in dialogs[0] and "cannot be undone" in dialogs[0]
    assert page.wait_for_selector("#toast").inner_text() == "Deleted “Heron Watch”"
    assert owner.get(f"/api/apps/{app['id']}").status_code == 404
    page.wait_for_selector("#mine-apps >> text=No apps yet.")


# -- admin tables on a phone -------------------------------------------------------------------


def test_admin_tables_have_headers_and_account_names_on_a_phone(
    browser: Any, server: Server
) -> None:
    owner_page = new_page(browser)
    owner_name = register(owner_page, server)
    app = create(api_for(owner_page, server), "A page about puffins", "html")
    admin_name = f"ui-admin-{secrets.token_hex(3)}"
    make_admin(server, admin_name)
    page = new_page(browser, width=390)
    page.goto(f"{server.api}/console/#/login")
    page.fill("input[name=account]", admin_name)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.click("#nav >> text=Admin")
    row = page.wait_for_selector(f"#admin-apps tr[data-app='{app['id']}']")
    heads = page.eval_on_selector_all("#admin-apps thead th", "ths => ths.map(t => t.textContent)")
    assert heads == ["name", "owner", "created", "featured", "actions"]
    assert row.eval_on_selector("td.owner", "td => td.textContent") == owner_name
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # On a phone each row is a card whose cells name their column: every action is in reach.
    assert row.eval_on_selector("td.owner", "td => td.dataset.label") == "owner"
    for button in row.query_selector_all("button"):
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    shot(page, "4-admin-phone")

    # An owner whose account is gone shows as a dash.
    def no_owner(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        for item in body["apps"]:
            item["ownerAccount"] = None
        route.fulfill(response=response, json=body)

    apps_list = re.compile(r"/api/admin/apps\?")
    page.route(apps_list, no_owner)
    page.reload()
    row = page.wait_for_selector(f"#admin-apps tr[data-app='{app['id']}']")
    assert row.eval_on_selector("td.owner", "td => td.textContent") == "—"
    page.unroute(apps_list)

    page.click("text=Users")
    page.wait_for_selector(f"#admin-users >> text={admin_name}")
    heads = page.eval_on_selector_all("#admin-users thead th", "ths => ths.map(t => t.textContent)")
    assert heads == ["account", "name", "role", "created", "failed logins"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.errors == []


# -- the context panel beside the deploy panel -----------------------------------------------------


def test_the_context_panel_closes_and_leaves_the_deploy_panel(browser: Any, server: Server) -> None:
    page = new_page(browser)
    register(page, server)
    owner = api_for(page, server)
    app = create(owner, "A page about gannets", "html")
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#deploy")
    page.wait_for_selector("#deploy-url", timeout=TURN_MS)
    page.click("#context")
    page.wait_for_selector("#context-total")
    assert page.is_visible("#panel") and page.is_visible("#context-panel")
    assert page.is_visible("#deploy-url")
    assert page.get_attribute("#context", "aria-expanded") == "true"
    shot(page, "5-both-panels")
    page.click("#context-close")
    page.wait_for_selector("#context-panel", state="hidden")
    assert page.is_visible("#panel") and page.is_visible("#deploy-url")
    assert page.get_attribute("#context", "aria-expanded") == "false"
    page.click("#context")  # and it opens again
    page.wait_for_selector("#context-panel #context-total")
    page.click("#context")  # the button closes it too
    page.wait_for_selector("#context-panel", state="hidden")
    assert page.is_visible("#deploy-url")


# -- a reply looks the same after a reload ---------------------------------------------------

READ_REPLIES = """() => [...document.querySelectorAll('#messages > *')].map(m => ({
  cls: m.className,
  answer: m.querySelector('.answer') ? m.querySelector('.answer').innerHTML : null,
  steps: [...m.querySelectorAll('.steps li')].map(li => [li.className, li.textContent, li.title]),
  outcome: [...m.querySelectorAll('.outcome p')].map(p => [p.className, p.textContent]),
  badge: [...m.querySelectorAll(':scope > .status')].map(b => [b.className, b.textContent]),
  turn: m.dataset.turn || null,
  text: m.innerText,
}))"""


def test_a_reply_looks_the_same_after_a_reload(browser: Any, server: Server) -> None:
    page = new_page(browser)
    register(page, server)
    page.fill("#prompt", "A page about terns")
    page.select_option("#mode", "html")
    page.click("#create")
    assert finished_turns(page, 1) == ["succeeded"]
    page.fill("#message", "Make it nicer")  # no quoted text: nothing changes, and it says so
    page.click("#send")
    assert finished_turns(page, 2) == ["succeeded", "succeeded"]
    page.fill("#message", "[[stream-error]] Change the title")  # a failed turn
    page.click("#send")
    assert finished_turns(page, 3) == ["succeeded", "succeeded", "failed"]
    live = page.evaluate(READ_REPLIES)
    shot(page, "6-live")

    page.reload()
    page.wait_for_function("() => document.querySelectorAll('#messages > *').length >= 6")
    reloaded = page.evaluate(READ_REPLIES)
    shot(page, "7-reloaded")
    assert reloaded == live

    replies = [r for r in live if "ai" in r["cls"].split()]
    assert [r["badge"] for r in replies] == [
        [["status succeeded", "done"]],
        [["status succeeded", "done"]],
        [["status failed", "failed"]],
    ]
    first = replies[0]
    assert ["ok", "save_file index.html", "saved index.html"] in first["steps"]
    assert ["ok", "preview build succeeded"] in [s[:2] for s in first["steps"]]
    # An html answer's code is one line per file (what it did, the diff), not the file.
    assert 'class="file-change" data-path="index.html" data-status="added"' in first["answer"]
    assert "<pre>" not in first["answer"] and "<b>Terns</b>" in first["answer"]
    assert replies[1]["outcome"] == [["outcome-none", "No files were changed."]]
    assert replies[2]["outcome"][0][0] == "outcome-failed"
    assert replies[2]["outcome"][0][1].startswith("Failed: ")
    assert page.errors == []


# -- the first preview -----------------------------------------------------------------------


def test_a_placeholder_stands_in_for_the_preview_until_the_first_build(
    browser: Any, server: Server
) -> None:
    page = new_page(browser)
    register(page, server)
    previews: list[str] = []
    page.on("request", lambda r: previews.append(r.url) if "//p-" in r.url else None)
    page.fill("#prompt", "[[slow]] A page about kites")  # ~5 s of text before the page
    page.select_option("#mode", "html")
    page.click("#create")
    spinner = page.wait_for_selector("#preview-placeholder .spinner")
    assert spinner.is_visible()
    assert page.inner_text("#preview-placeholder") == "Building the first preview…"
    assert page.is_hidden("#preview") and page.get_attribute("#preview", "src") is None
    shot(page, "8-first-preview-spinner")
    page.wait_for_selector("#messages [data-turn=running] .answer:not(:empty)")
    assert previews == []  # no request for a preview that does not exist yet
    assert finished_turns(page, 1) == ["succeeded"]
    page.frame_locator("#preview").locator("h1", has_text="Kites").wait_for()
    assert page.is_hidden("#preview-placeholder") and previews

    # An app nothing was built for yet (no turn): a quiet placeholder, no spinner, no frame.
    app = create(api_for(page, server), "A page about larks", "html")
    previews.clear()
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.wait_for_selector("#preview-placeholder[data-state=none]")
    assert page.query_selector("#preview-placeholder .spinner") is None
    assert "No preview yet" in page.inner_text("#preview-placeholder")
    assert page.is_hidden("#preview")
    page.wait_for_timeout(300)
    assert previews == []
    assert page.errors == []
