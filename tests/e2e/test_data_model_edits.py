"""The app's data model by hand, through the real server (docs/data.md): a bad
zerocode.data.json is refused saying where and why and changes nothing; a good one is a
version like any hand edit, told to the model, and the site never serves it."""

from __future__ import annotations

import json

import httpx

from tests.e2e.conftest import Server
from tests.e2e.test_user_edits import html_app
from tests.e2e.test_versions import last_message, versions_of
from tests.unit.data.test_model import NOTES

MODEL = {  # a guestbook: anyone reads and signs it, no one changes an entry
    "collections": {
        "entries": {
            "fields": {"message": {"type": "text", "required": True, "max": 500}},
            "rules": NOTES["collections"]["guestbook"]["rules"],
        }
    }
}


def test_a_hand_edit_of_the_data_model_is_checked_kept_and_never_served(
    client: httpx.Client, server: Server
) -> None:
    app_id, _, _ = html_app(client, "A page for a bakery called Crumbs")  # no data yet
    url = f"/api/apps/{app_id}/files/zerocode.data.json"
    bad = json.loads(json.dumps(MODEL))
    bad["collections"]["entries"]["rules"]["create"] = "owner"
    refused = client.put(url, json={"content": json.dumps(bad)})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["code"] == "file_refused"
    assert "collections.entries.rules.create: a record has no owner" in error["message"]
    assert client.get(url).status_code == 404 and len(versions_of(client, app_id)) == 1

    saved = client.put(url, json={"content": json.dumps(MODEL, indent=2)})
    assert saved.status_code == 200, saved.text
    assert saved.json()["changed"] == ["zerocode.data.json"]
    assert saved.json()["version"]["kind"] == "edit"
    assert json.loads(client.get(url).text) == MODEL
    told = last_message(client, app_id)["content"]
    assert "zerocode.data.json" in told

    preview = httpx.URL(client.get(f"/api/apps/{app_id}").json()["previewUrl"])
    served = httpx.get(
        f"http://127.0.0.1:{server.sites_port}/zerocode.data.json",
        headers={"Host": preview.netloc.decode()},
    )
    assert served.status_code == 404, served.text
