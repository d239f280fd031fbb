"""An app that keeps data, in real Chromium against `zerocode serve` (docs/data.md): a plain
HTML page imports the platform's `/_api/client.js`, signs a guestbook that a reload still
shows, signs its own users up, and keeps each one's notes apart: in the preview framed by
the console (its session a partitioned cookie of the preview's own origin) and on the page
opened by itself, in two separate browser contexts."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.e2e.conftest import Server
from tests.e2e.test_console import browser, register  # noqa: F401 (the fixture)
from tests.e2e.test_data_api import MODEL
from tests.e2e.test_user_edits import html_app

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Crumbs</title>
</head><body><main><h1>Crumbs guestbook</h1>
<form id="sign"><input id="message" aria-label="Message"><button>Sign</button></form>
<ul id="entries"></ul>
<form id="account"><input id="username" aria-label="Username">
<input id="password" type="password" aria-label="Password"><button>Sign up</button></form>
<p id="me"></p>
<form id="add-note"><input id="note" aria-label="Note"><button>Add note</button></form>
<ul id="notes"></ul><p id="error" role="alert"></p></main>
<script type="module">
import { data, auth } from "/_api/client.js";
const $ = (id) => document.getElementById(id);
const items = (list, key) => list.map((r) => {
  const li = document.createElement("li"); li.textContent = r[key]; return li; });
async function show() {
  const { records } = await data.list("entries");
  $("entries").replaceChildren(...items(records, "message"));
  const me = await auth.me();
  $("me").textContent = me ? "Signed in as " + me.username : "Not signed in";
  try {
    $("notes").replaceChildren(...items((await data.list("notes")).records, "title"));
  } catch (e) { $("notes").replaceChildren(); $("error").textContent = e.code; }
  document.body.dataset.shown = String(Number(document.body.dataset.shown || 0) + 1);
}
const on = (id, work) => { $(id).onsubmit = async (e) => {
  e.preventDefault(); $("error").textContent = "";
  try { await work(); } catch (err) { $("error").textContent = err.code; }
  await show(); }; };
on("sign", () => data.create("entries", { message: $("message").value }));
on("account", () => auth.signUp($("username").value, $("password").value));
on("add-note", () => data.create("notes", { title: $("note").value }));
show();
</script></body></html>"""


def data_page_app(client: httpx.Client) -> str:
    app_id, _, _ = html_app(client, "A guestbook for a bakery called Crumbs")
    for path, content in (("zerocode.data.json", json.dumps(MODEL)), ("index.html", PAGE)):
        saved = client.put(f"/api/apps/{app_id}/files/{path}", json={"content": content})
        assert saved.status_code == 200 and saved.json()["build"]["state"] == "succeeded"
    return app_id


def shown(page: Any, times: int = 1) -> None:
    page.wait_for_function(f"Number(document.body.dataset.shown || 0) >= {times}")


def submit(page: Any, form: str, **fields: str) -> None:
    before = int(page.evaluate("Number(document.body.dataset.shown || 0)"))
    for name, value in fields.items():
        page.fill(f"#{name}", value)
    page.click(f"#{form} button")
    shown(page, before + 1)


def texts(page: Any, list_id: str) -> list[str]:
    return [
        str(t)
        for t in page.eval_on_selector_all(f"#{list_id} li", "l => l.map(e => e.textContent)")
    ]


def console_owner(chromium: Any, server: Server) -> tuple[Any, httpx.Client]:
    """A builder signed in to the console, and the API as that builder."""
    console = register(chromium, server)
    token = console.evaluate("localStorage.getItem('zc_token')")
    owner = httpx.Client(
        base_url=server.api, timeout=300, headers={"Authorization": f"Bearer {token}"}
    )
    return console, owner


def test_a_data_app_in_the_console_frame_keeps_entries_and_sessions(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    console, owner = console_owner(browser, server)
    app_id = data_page_app(owner)
    console.goto(f"{server.api}/console/#/apps/{app_id}")
    frame = console.wait_for_selector("#preview:not([hidden])").content_frame()
    assert frame is not None
    shown(frame)
    assert texts(frame, "entries") == ["First!", "Lovely bread"]  # the preview's seeds
    assert frame.inner_text("#error") == "sign_in_needed"  # notes need a signed-in user
    submit(frame, "sign", message="Framed and kept")
    submit(frame, "account", username="ada", password="a long password")
    assert frame.inner_text("#me") == "Signed in as ada"
    submit(frame, "add-note", note="Ada's framed note")
    console.reload()
    frame = console.wait_for_selector("#preview:not([hidden])").content_frame()
    shown(frame)
    assert texts(frame, "entries")[-1] == "Framed and kept"
    assert frame.inner_text("#me") == "Signed in as ada"  # the session outlived the reload
    assert texts(frame, "notes") == ["Ada's framed note"]
    assert console.errors == []


def test_two_visitors_each_see_only_their_own_notes_after_a_reload(
    browser: Any,  # noqa: F811
    client: httpx.Client,
) -> None:
    app_id = data_page_app(client)
    url = client.get(f"/api/apps/{app_id}").json()["previewUrl"]
    visitors = []
    for name in ("ada", "bob"):
        page = browser.new_context().new_page()
        page.goto(url)
        shown(page)
        submit(page, "account", username=name, password="a long password")
        submit(page, "add-note", note=f"{name}'s secret note")
        visitors.append(page)
    for name, page in zip(("ada", "bob"), visitors, strict=True):
        page.reload()
        shown(page)
        assert page.inner_text("#me") == f"Signed in as {name}"
        assert texts(page, "notes") == [f"{name}'s secret note"]
    stranger = browser.new_context().new_page()
    stranger.goto(url)
    shown(stranger)
    assert stranger.inner_text("#me") == "Not signed in"
    assert texts(stranger, "notes") == [] and stranger.inner_text("#error") == "sign_in_needed"
