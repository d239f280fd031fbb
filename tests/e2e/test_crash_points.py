"""The fault-injection suite (issue 13): the real server, SIGKILLed at each step boundary
of a scripted Vue turn, then restarted on the same data directory.

After each kill: /context is valid, nothing committed before the kill is lost, the next
turn is accepted within 60 s (the lease of the dead turn is no longer renewed), and once
it runs, the transcript and the display say what the killed turn did and why it ended.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, Turn, create, parse_sse, signed_in
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate

REQUEST = "A Vue notes app"


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    got = client.get(f"/api/apps/{app_id}/context")
    assert got.status_code == 200, got.text
    messages: list[dict[str, Any]] = got.json()["messages"]
    validate(from_openai_list(messages))
    return messages


def killing_server(tmp_path: Path, point: str) -> Server:
    """A started server that kills itself at ``point``, its turn leases short (3 s)."""
    server = Server(tmp_path / "data")
    server.data_dir.mkdir()
    server.env.update({"ZEROCODE_FAULT_KILL": point, "ZEROCODE_TURN_LEASE_SECONDS": "3"})
    server.start()
    return server


def chat_when_free(client: httpx.Client, app_id: str, message: str) -> tuple[float, Turn]:
    """Seconds until the app accepted a turn, and that turn."""
    started = time.monotonic()
    while True:
        with client.stream("POST", f"/api/apps/{app_id}/chat", json={"message": message}) as r:
            if r.status_code == 409 and time.monotonic() - started < 90:
                time.sleep(0.5)
                continue
            assert r.status_code == 200, r.read()
            return time.monotonic() - started, parse_sse(r.iter_lines())


def killed_turn(server: Server, client: httpx.Client, app_id: str) -> Turn:
    """Run the turn the server dies in; what reached the client before the connection died."""
    lines: list[str] = []
    try:
        with client.stream("POST", f"/api/apps/{app_id}/chat", json={"message": REQUEST}) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                lines.append(line)
    except httpx.HTTPError:
        pass  # the server died mid-response
    assert server.proc is not None
    assert server.proc.wait(timeout=60) == -9, "the server was not killed at its fault point"
    return parse_sse(iter([*lines, ""]))


def identity(message: dict[str, Any]) -> tuple[str, ...]:
    """A message as elision leaves it: its role and ids, or its text."""
    if message.get("tool_calls"):
        return ("call", *(c["id"] for c in message["tool_calls"]))
    if message["role"] == "tool":
        return ("tool", message["tool_call_id"])
    if message["role"] == "system":
        return ("system",)
    return (message["role"], message.get("content") or "")


def closing(client: httpx.Client, app_id: str, turn: int) -> dict[str, Any] | None:
    entries = client.get(f"/api/apps/{app_id}/history", params={"limit": 50}).json()["entries"]
    return next((e for e in entries if e["turn"] == turn and e["role"] != "user"), None)


# point -> what the transcript holds of the killed turn after the restart
CASES = {
    "before_user_commit": "nothing",
    "after_user_commit": "request",
    "mid_stream": "request",
    "after_tool": "request",
    "after_step_commit": "step",
    "during_build": "step",  # the answer is saved once the preview stands
}


@pytest.mark.parametrize("point", list(CASES))
def test_a_server_killed_at_a_step_boundary_recovers_truthfully(tmp_path: Path, point: str) -> None:
    server = killing_server(tmp_path, point)
    try:
        client = signed_in(server)
        app = create(client, REQUEST, "vue_project")
        seen = killed_turn(server, client, app["id"])
        assert seen.done is None  # nobody told the client it finished: it did not
        server.env.pop("ZEROCODE_FAULT_KILL")
        server.start()

        before = context(client, app["id"])
        users = [m for m in before if m["role"] == "user"]
        calls = [m for m in before if m["role"] == "assistant" and m.get("tool_calls")]
        finals = [m for m in before if m["role"] == "assistant" and not m.get("tool_calls")]
        expected = CASES[point]
        assert bool(users) == (expected != "nothing")
        assert bool(calls) == (expected in ("step", "final"))
        assert bool(finals) == (expected == "final")
        if calls:  # the committed step is whole: every call has its result
            results = [m for m in before if m["role"] == "tool"]
            assert len(results) == sum(len(c["tool_calls"]) for c in calls)

        waited, turn = chat_when_free(client, app["id"], 'Change the title to "Notes"')
        assert waited < 60, f"the app stayed locked {waited:.0f} s after the crash"
        assert turn.done is not None, turn.errors

        after = context(client, app["id"])
        kept = {identity(m) for m in after}
        for message in before:  # nothing committed before the kill was lost (maybe elided)
            assert identity(message) in kept
        notes = [
            m["content"]
            for m in after
            if m["role"] == "assistant" and "was interrupted" in (m.get("content") or "")
        ]
        if expected == "nothing":  # no trace of the killed turn: the new one is turn 1
            history = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
            assert not notes and turn.done["turn"] == 1
            assert all(e["status"] != "interrupted" for e in history)
            return
        shown = closing(client, app["id"], 1)
        assert shown is not None and shown["status"] == "interrupted", shown
        if point == "during_build":
            builds = client.get(f"/api/apps/{app['id']}/builds").json()["builds"]
            killed = builds[-1]  # newest first: the last is the build the kill interrupted
            assert killed["state"] == "failed" and "server stopped" in killed["error"]
        assert len(notes) == 1 and "the server stopped before it finished" in notes[0]
        assert "server stopped" in shown["content"]
        if expected == "step":
            assert "src/App.vue (write_file)" in notes[0] and "src/App.vue" in shown["content"]
        elif point == "after_tool":
            assert "may have run" in notes[0] and "(write_file)" in notes[0]
            assert "may have changed files" in shown["content"]
        else:
            assert "changed no files" in notes[0]
            assert "No files were changed" in shown["content"]
    finally:
        server.stop()


def test_a_restarted_local_server_frees_the_app_its_dead_turn_held(tmp_path: Path) -> None:
    """One process owns a local data directory, so its start frees the turn leases of the
    run before it (they died with it): the user's retry is not refused for the lease's
    remaining half minute. (Where processes share the leases, on AWS, a dead turn's lease
    runs out instead: tests/integration/engine/test_turns.py.)"""
    server = Server(tmp_path / "data")
    server.data_dir.mkdir()
    server.env["ZEROCODE_FAULT_KILL"] = "mid_stream"
    server.start()
    try:
        client = signed_in(server)
        app = create(client, REQUEST, "vue_project")
        killed_turn(server, client, app["id"])
        server.env.pop("ZEROCODE_FAULT_KILL")
        server.start()
        current = client.get(f"/api/apps/{app['id']}/turns/current")
        assert current.status_code == 204  # nothing runs: the turn died with its server
        with client.stream(
            "POST", f"/api/apps/{app['id']}/chat", json={"message": REQUEST}
        ) as retry:
            assert retry.status_code == 200  # at once, not after the lease ran out
            turn = parse_sse(retry.iter_lines())
        assert turn.done is not None and turn.done["turn"] == 2
    finally:
        server.stop()
