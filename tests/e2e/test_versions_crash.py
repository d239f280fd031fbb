"""A server killed in the middle of a restore (tests/e2e/test_crash_points.py's method):
after the restart the next turn first finishes the restore, so the files, the versions and
what the model is told (M9) agree, once, and the turn's element edit lands."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import chat, create, shown_build, signed_in
from tests.e2e.test_crash_points import chat_when_free, context, killing_server
from tests.e2e.test_versions import h1_of, versions_of

RESTORED = "[zerocode: the user restored version v1"


@pytest.mark.parametrize("point", ["mid_restore", "after_restore_note"])
def test_a_restore_cut_by_a_kill_is_finished_by_the_next_turn(tmp_path: Path, point: str) -> None:
    server = killing_server(tmp_path, point)
    try:
        client = signed_in(server)
        app = create(client, "A page for a bakery called Crumbs", "html")
        app_id = app["id"]
        chat(client, app_id, app["initPrompt"])
        page = client.get(f"/api/apps/{app_id}/files/index.html").text
        first = h1_of(page)
        element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": first}
        element["buildId"] = shown_build(client, app_id)
        chat(client, app_id, 'Rename it to "Crumbs & Co"', element)
        with pytest.raises(httpx.HTTPError):
            client.post(f"/api/apps/{app_id}/versions/v1/restore")
        assert server.proc is not None and server.proc.wait(timeout=60) == -9
        server.env.pop("ZEROCODE_FAULT_KILL")
        server.start()

        early = [m for m in context(client, app_id) if RESTORED in (m.get("content") or "")]
        assert len(early) == (1 if point == "after_restore_note" else 0)
        waited, turn = chat_when_free(client, app_id, 'Call it "Bread Bros"')
        assert waited < 60 and turn.done is not None, turn.errors
        assert turn.done["status"] == "succeeded", turn.errors

        messages = context(client, app_id)
        told = [i for i, m in enumerate(messages) if RESTORED in (m.get("content") or "")]
        asked = [i for i, m in enumerate(messages) if "Bread Bros" in (m.get("content") or "")]
        assert len(told) == 1 and told[0] < asked[0], "the model is told once, before the turn"
        assert f"<h1>{first}</h1>" in messages[told[0]]["content"]
        versions = versions_of(client, app_id)
        assert [(v["id"], v["kind"]) for v in versions] == [
            ("v4", "turn"),
            ("v3", "restore"),
            ("v2", "turn"),
            ("v1", "turn"),
        ]
        assert versions[1]["restoredFrom"] == "v1"
        assert h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text) == "Bread Bros"
        diff = client.get(f"/api/apps/{app_id}/versions/v3/diff?against=v1").json()
        assert diff["files"] == []  # v3 is exactly v1's files
        notes = [
            e
            for e in client.get(f"/api/apps/{app_id}/history").json()["entries"]
            if e["role"] == "note"
        ]
        assert len(notes) == 1 and "Restored v1" in notes[0]["content"]
        assert "server stopped before the preview was rebuilt" in notes[0]["content"]
    finally:
        server.stop()
