"""The data API on each app's own origin, through the real server (docs/data.md): a
preview's records seeded from its data model, an app's own end users, the rules kept per
visitor, the preview and live spaces apart, and every request that could be forged or
misdirected refused with a clear error."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.e2e.conftest import Server, signed_in, wait_for_build
from tests.e2e.test_deploy import deploy
from tests.e2e.test_user_edits import html_app
from tests.e2e.test_versions import last_message
from tests.unit.data.test_model import NOTES
from zerocode.engine.data_edit import note_of

PASSWORD = "a long password"
GUESTBOOK, NOTES_ = NOTES["collections"]["guestbook"], NOTES["collections"]["notes"]
MODEL: dict[str, Any] = {
    "collections": {
        "entries": {  # a guestbook: anyone reads and signs it, no one changes an entry
            "fields": {"message": {"type": "text", "required": True, "max": 500}},
            "rules": GUESTBOOK["rules"],
            "seed": [{"message": "First!"}, {"message": "Lovely bread"}],
        },
        "notes": {  # personal notes: each end user's own
            "fields": {name: NOTES_["fields"][name] for name in ("title", "done")},
            "rules": NOTES_["rules"],
        },
    }
}


def data_app(client: httpx.Client, prompt: str, model: dict[str, Any] = MODEL) -> str:
    """An html app with ``model`` as its data model, built into its preview."""
    app_id, _, _ = html_app(client, prompt)
    saved = client.put(
        f"/api/apps/{app_id}/files/zerocode.data.json", json={"content": json.dumps(model)}
    )
    assert saved.status_code == 200 and saved.json()["build"]["state"] == "succeeded", saved.text
    return app_id


class Visitor:
    """A browser on one app's origin: its session cookie, and the Origin its pages send.
    (A browser sends a Secure cookie to ``*.localhost`` over http; httpx's jar does not, so
    the visitor keeps it as a browser would.)"""

    def __init__(self, origin: str) -> None:
        self.origin = origin.rstrip("/")
        self.session = ""
        self.http = httpx.Client(
            base_url=self.origin,
            headers={"Origin": self.origin},
            event_hooks={"request": [self._send], "response": [self._keep]},
        )

    def _send(self, request: httpx.Request) -> None:
        if self.session:
            request.headers["Cookie"] = f"zc_session={self.session}"

    def _keep(self, response: httpx.Response) -> None:
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            if name == "zc_session":
                self.session = rest.split(";")[0]

    def list(self, collection: str, **params: str) -> httpx.Response:
        return self.http.get(f"/_api/data/{collection}", params=params)

    def create(self, collection: str, fields: Any) -> httpx.Response:
        return self.http.post(f"/_api/data/{collection}", json=fields)

    def sign_up(self, username: str) -> httpx.Response:
        answer = self.http.post(
            "/_api/auth/signup", json={"username": username, "password": PASSWORD}
        )
        assert answer.status_code == 201, answer.text
        return answer


def preview_of(client: httpx.Client, app_id: str) -> Visitor:
    return Visitor(client.get(f"/api/apps/{app_id}").json()["previewUrl"])


def messages(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [r["message"] for r in answer.json()["records"]]


def test_a_guestbook_preview_is_seeded_and_takes_entries(client: httpx.Client) -> None:
    app_id = data_app(client, "A guestbook for a bakery called Crumbs")
    visitor = preview_of(client, app_id)
    assert messages(visitor.list("entries")) == ["First!", "Lovely bread"]
    made = visitor.create("entries", {"message": "Back tomorrow"})
    assert made.status_code == 201, made.text
    record = made.json()
    assert record["message"] == "Back tomorrow" and record["owner"] is None
    assert set(record) == {"message", "id", "createdAt", "updatedAt", "owner"}
    assert made.headers["cache-control"] == "no-store"
    assert "access-control-allow-origin" not in made.headers
    got = visitor.http.get(f"/_api/data/entries/{record['id']}")
    assert got.status_code == 200 and got.json() == record
    newest = visitor.list("entries", sort="-createdAt", limit="1")
    assert messages(newest) == ["Back tomorrow"] and newest.json()["cursor"]
    rest = visitor.list("entries", sort="-createdAt", cursor=newest.json()["cursor"])
    assert messages(rest) == ["Lovely bread", "First!"] and rest.json()["cursor"] is None
    # The rules: no one changes or deletes an entry.
    changed = visitor.http.patch(f"/_api/data/entries/{record['id']}", json={"message": "x"})
    assert changed.status_code == 403 and changed.json()["error"]["code"] == "not_allowed"
    # Bad records, each named.
    bad = visitor.create("entries", {"message": "x" * 501, "stars": 5})
    assert bad.status_code == 400, bad.text
    assert bad.json()["error"]["message"].startswith("entries: ")
    assert "message" in bad.json()["error"]["message"] and "stars" in bad.json()["error"]["message"]
    assert visitor.create("entries", {"message": "x" * 70_000}).status_code == 413
    assert visitor.create("nope", {"message": "x"}).status_code == 404
    assert len(messages(visitor.list("entries", limit="100"))) == 3  # nothing else was kept


def test_notes_are_each_users_own_and_the_session_is_the_apps_alone(
    client: httpx.Client,
) -> None:
    app_id = data_app(client, "Notes for a bakery called Crumbs")
    ada, bob, anonymous = (preview_of(client, app_id) for _ in range(3))
    signed_up = ada.sign_up("Ada")
    cookie = signed_up.headers["set-cookie"]
    for part in ("HttpOnly", "SameSite=None", "Secure", "Partitioned", "Path=/"):
        assert part in cookie, cookie
    assert "domain=" not in cookie.lower()
    assert ada.http.get("/_api/auth/me").json()["user"]["username"] == "ada"
    bob.sign_up("bob")
    taken = bob.http.post("/_api/auth/signup", json={"username": "ADA", "password": PASSWORD})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "username_taken"

    note = ada.create("notes", {"title": "Buy flour"})
    assert note.status_code == 201, note.text
    assert note.json()["owner"] == signed_up.json()["user"]["id"]
    note_id = note.json()["id"]
    assert [n["title"] for n in ada.list("notes").json()["records"]] == ["Buy flour"]
    assert bob.list("notes").json()["records"] == []
    for method in ("GET", "PATCH", "DELETE"):
        tried = bob.http.request(method, f"/_api/data/notes/{note_id}", json={"done": True})
        assert tried.status_code == 404, (method, tried.text)
    refused = anonymous.list("notes")
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "sign_in_needed"
    assert anonymous.create("notes", {"title": "x"}).status_code == 401

    # Ada's session at another app's preview is nobody's.
    other = preview_of(client, data_app(client, "Notes for a bakery called Loaf"))
    other.session = ada.session
    assert other.http.get("/_api/auth/me").json() == {"user": None}
    assert other.list("notes").status_code == 401

    wrong = anonymous.http.post(
        "/_api/auth/login", json={"username": "ada", "password": "not her password"}
    )
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "wrong_credentials"
    assert ada.http.post("/_api/auth/logout", json={}).status_code == 200
    assert ada.http.get("/_api/auth/me").json() == {"user": None}
    back = ada.http.post("/_api/auth/login", json={"username": "ada", "password": PASSWORD})
    assert back.status_code == 200, back.text
    done = ada.http.patch(f"/_api/data/notes/{note_id}", json={"done": True})
    assert done.status_code == 200 and done.json()["done"] is True
    assert ada.http.delete(f"/_api/data/notes/{note_id}").status_code == 204


def test_a_forged_cross_site_request_changes_nothing(client: httpx.Client) -> None:
    app_id = data_app(client, "A guestbook for a bakery called Rye")
    visitor = preview_of(client, app_id)
    url = f"{visitor.origin}/_api/data/entries"
    for headers in ({}, {"Origin": "http://evil.localhost:1"}, {"Origin": "null"}):
        forged = httpx.post(url, json={"message": "forged"}, headers=headers)
        assert forged.status_code == 403, forged.text
        assert forged.json()["error"]["code"] == "cross_site"
    form = httpx.post(url, data={"message": "forged"}, headers={"Origin": visitor.origin})
    assert form.status_code == 415
    preflight = httpx.options(url, headers={"Origin": "http://evil.localhost:1"})
    assert "access-control-allow-origin" not in preflight.headers
    assert messages(visitor.list("entries")) == ["First!", "Lovely bread"]


def test_the_live_site_has_its_own_data_and_users(client: httpx.Client, server: Server) -> None:
    app_id = data_app(client, "A guestbook for a bakery called Crust")
    preview = preview_of(client, app_id)
    preview.sign_up("ada")
    assert preview.create("entries", {"message": "Seen in the preview"}).status_code == 201
    deploy(client, app_id)
    live = Visitor(client.get(f"/api/apps/{app_id}").json()["deployUrl"])
    assert messages(live.list("entries")) == []  # seeds fill previews only
    live.session = preview.session  # the preview's session is not the site's
    assert live.http.get("/_api/auth/me").json() == {"user": None}
    assert live.create("entries", {"message": "Hello, world"}).status_code == 201
    assert messages(live.list("entries")) == ["Hello, world"]
    assert len(messages(preview.list("entries"))) == 3
    answer = live.http.post(
        "/_api/auth/signup", json={"username": "ada", "password": PASSWORD}
    )  # a live user of the same name is another person
    assert answer.status_code == 201, answer.text
    cookie = answer.headers["set-cookie"]
    assert "SameSite=Lax" in cookie and "Partitioned" not in cookie


def test_the_client_and_no_file_of_the_app_under_api(client: httpx.Client) -> None:
    app_id, _, _ = html_app(client, "A page for a bakery called Bap")
    written = client.put(
        f"/api/apps/{app_id}/files/_api/data/entries", json={"content": "<p>not data</p>"}
    )
    visitor = preview_of(client, app_id)
    script = visitor.http.get("/_api/client.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert "export const data" in script.text and "export const auth" in script.text
    no_model = visitor.list("entries")
    assert no_model.status_code == 404 and no_model.json()["error"]["code"] == "no_backend"
    if written.status_code == 200:  # whether or not a hand edit may write there,
        for path in ("/_api/data/entries", "/./_api/data/entries", "/_api/../_api/data/entries"):
            assert "not data" not in visitor.http.get(path).text  # it is never served


def test_the_builder_sees_every_record_and_user_and_resets_the_preview(
    client: httpx.Client, server: Server
) -> None:
    app_id = data_app(client, "Notes for a bakery called Brioche")
    ada, bob = preview_of(client, app_id), preview_of(client, app_id)
    ada.sign_up("ada")
    bob.sign_up("bob")
    for visitor, title in ((ada, "Buy flour"), (bob, "Call the miller"), (ada, "=SUM(1) loaves")):
        assert visitor.create("notes", {"title": title}).status_code == 201
    base = f"/api/apps/{app_id}/data"
    overview = client.get(f"{base}/preview").json()
    counts = {c["name"]: c["count"] for c in overview["collections"]}
    assert counts == {"entries": 2, "notes": 3} and overview["buildId"]
    notes = client.get(f"{base}/preview/notes", params={"sort": "-createdAt"}).json()
    assert [n["title"] for n in notes["records"]] == [
        "=SUM(1) loaves",
        "Call the miller",
        "Buy flour",
    ]
    found = client.get(f"{base}/preview/notes", params={"q": "miller"}).json()["records"]
    assert [n["title"] for n in found] == ["Call the miller"]
    assert client.get(f"{base}/preview/notes", params={"q": "%"}).json()["records"] == []
    csv = client.get(f"{base}/preview/notes/export", params={"format": "csv"})
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    assert "notes-preview.csv" in csv.headers["content-disposition"]
    assert csv.text.splitlines()[0] == "id,createdAt,updatedAt,owner,title,done"
    assert "'=SUM(1) loaves" in csv.text  # never a formula in a spreadsheet
    exported = client.get(f"{base}/preview/notes/export").json()["records"]
    assert [n["title"] for n in exported] == ["Buy flour", "Call the miller", "=SUM(1) loaves"]

    users = client.get(f"{base}/preview/users").json()["users"]
    assert [u["username"] for u in users] == ["ada", "bob"]
    assert client.delete(f"{base}/preview/users/{users[1]['id']}").status_code == 204
    assert bob.http.get("/_api/auth/me").json() == {"user": None}  # signed out at once
    assert client.delete(f"{base}/preview/users/{users[1]['id']}").status_code == 404

    stranger = signed_in(server, "stranger")
    try:
        assert stranger.get(f"{base}/preview").status_code == 404
        assert stranger.delete(f"{base}/preview").status_code == 404
    finally:
        stranger.close()
    assert client.get(f"{base}/elsewhere").status_code == 404
    assert client.get(f"{base}/live").json() == {
        "space": "live",
        "buildId": None,
        "collections": [],
    }

    reset = client.delete(f"{base}/preview")
    assert reset.status_code == 200 and reset.json() == {"deleted": 5, "users": 1}
    assert messages(ada.list("entries")) == ["First!", "Lovely bread"]
    assert ada.http.get("/_api/auth/me").json() == {"user": None}
    told = last_message(client, app_id)["content"]
    assert (
        told
        == "[zerocode: the user reset the preview's data to its seed records outside any turn.]"
    )


def test_a_deploy_and_a_rollback_keep_live_data_while_the_preview_is_reset(
    client: httpx.Client,
) -> None:
    app_id = data_app(client, "A guestbook for a bakery called Pretzel")
    first = deploy(client, app_id)
    live = Visitor(client.get(f"/api/apps/{app_id}").json()["deployUrl"])
    assert live.create("entries", {"message": "Kept through it all"}).status_code == 201
    assert client.delete(f"/api/apps/{app_id}/data/preview").status_code == 200
    second = deploy(client, app_id)
    assert second["id"] != first["id"]
    assert messages(live.list("entries")) == ["Kept through it all"]
    rolled = client.post(f"/api/apps/{app_id}/rollback", json={"buildId": first["id"]})
    assert rolled.status_code == 200, rolled.text
    assert messages(live.list("entries")) == ["Kept through it all"]
    counts = client.get(f"/api/apps/{app_id}/data/live").json()["collections"]
    assert {c["name"]: c["count"] for c in counts} == {"entries": 1, "notes": 0}


def test_a_deploy_that_would_hide_live_records_is_refused_unless_confirmed(
    client: httpx.Client,
) -> None:
    app_id = data_app(client, "Notes for a bakery called Bagel")
    deploy(client, app_id)
    live = Visitor(client.get(f"/api/apps/{app_id}").json()["deployUrl"])
    live.sign_up("ada")
    assert live.create("notes", {"title": "Kept", "done": True}).status_code == 201
    slim = json.loads(json.dumps(MODEL))
    del slim["collections"]["notes"]["fields"]["done"]
    url = f"/api/apps/{app_id}/files/zerocode.data.json"
    assert client.put(url, json={"content": json.dumps(slim)}).status_code == 200
    refused = client.post(f"/api/apps/{app_id}/deploy")
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "data_hidden"
    assert "the field notes.done (1 live record)" in error["message"]
    assert [n["done"] for n in live.list("notes").json()["records"]] == [True]  # unchanged
    confirmed = client.post(f"/api/apps/{app_id}/deploy", json={"confirmDataChanges": True})
    assert confirmed.status_code == 202, confirmed.text
    wait_for_build(client, app_id, confirmed.json()["buildId"])
    [note] = live.list("notes").json()["records"]
    assert note["title"] == "Kept" and "done" not in note  # hidden, not deleted
    assert client.put(url, json={"content": json.dumps(MODEL)}).status_code == 200
    again = client.post(f"/api/apps/{app_id}/deploy")  # the model only grows: no question
    assert again.status_code == 202, again.text
    wait_for_build(client, app_id, again.json()["buildId"])
    assert [n["done"] for n in live.list("notes").json()["records"]] == [True]


def test_records_changed_by_hand_are_told_to_the_model(client: httpx.Client) -> None:
    app_id = data_app(client, "Notes for a bakery called Ciabatta")
    base = f"/api/apps/{app_id}/data/preview/entries"
    added = client.post(base, json={"message": "Added by the baker"})
    assert added.status_code == 201, added.text
    record = added.json()
    assert record["owner"] is None and record["message"] == "Added by the baker"
    told = last_message(client, app_id)["content"]
    assert told == note_of(
        'added a record to entries in the preview\'s data: {"message":"Added by the baker"}'
    )
    # Held to the fields (not the rules, which forbid visitors to change an entry).
    bad = client.post(base, json={"message": "x", "stars": 5})
    assert bad.status_code == 400 and "stars" in bad.json()["error"]["message"]
    assert last_message(client, app_id)["content"] == told  # a refusal tells nothing
    changed = client.patch(f"{base}/{record['id']}", json={"message": "Changed by hand"})
    assert changed.status_code == 200 and changed.json()["message"] == "Changed by hand"
    assert "changed the record" in last_message(client, app_id)["content"]
    visitor = preview_of(client, app_id)
    assert "Changed by hand" in messages(visitor.list("entries"))
    assert client.delete(f"{base}/{record['id']}").status_code == 204
    assert "deleted the record" in last_message(client, app_id)["content"]
    assert client.delete(f"{base}/{record['id']}").status_code == 404
    assert "Changed by hand" not in messages(visitor.list("entries"))
