"""Turns outlive the connection (issue 24), through the real server over HTTP: a client that
goes away does not end its turn; a reattach gets exactly what it missed; a stop ends a turn
interrupted, told to the model and the user; a server killed mid-turn makes the reattach
say interrupted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, parse_sse, signed_in

SLOW = "Write it slowly [[slow]]"


def frames(response: httpx.Response) -> Iterator[list[str]]:
    """The response's SSE frames as their lines (keep-alive comments skipped)."""
    frame: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if frame and not all(x.startswith(":") for x in frame):
                yield frame
            frame = []
        else:
            frame.append(line)


def field_of(frame: list[str], name: str) -> str:
    return next((x[len(name) + 1 :].strip() for x in frame if x.startswith(name + ":")), "")


def start_and_leave(client: httpx.Client, app_id: str, message: str, keep: int) -> list[str]:
    """Start a turn, read its first ``keep`` events, then close the connection; their ids."""
    with client.stream("POST", f"/api/apps/{app_id}/chat", json={"message": message}) as r:
        assert r.status_code == 200, r.read()
        seen = []
        for frame in frames(r):
            seen.append(field_of(frame, "id"))
            if len(seen) == keep:
                break
    return seen


def replay(client: httpx.Client, app_id: str, turn: int, **kwargs: Any) -> Any:
    with client.stream("GET", f"/api/apps/{app_id}/turns/{turn}/events", **kwargs) as r:
        assert r.status_code == 200, r.read()
        return parse_sse(r.iter_lines())


def wait_idle(client: httpx.Client, app_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while client.get(f"/api/apps/{app_id}/turns/current").status_code != 204:
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.2)


def test_a_turn_whose_client_left_after_the_first_event_runs_to_its_end(
    client: httpx.Client,
) -> None:
    app = create(client, "A page about clocks", "html")
    ids = start_and_leave(client, app["id"], SLOW, keep=1)
    assert ids == ["1:1"]
    current = client.get(f"/api/apps/{app['id']}/turns/current")
    assert current.status_code == 200 and current.json()["turn"] == 1
    assert current.json()["status"] == "running"
    wait_idle(client, app["id"])
    turn = replay(client, app["id"], 1)  # a finished turn replays whole
    assert turn.ended == ("succeeded", 1)
    assert [b["status"] for b in turn.builds] == ["running", "succeeded"]
    assert turn.ids == [f"1:{n}" for n in range(1, len(turn.ids) + 1)]
    entries = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    reply = next(e for e in entries if e["turn"] == 1 and e["role"] == "ai")
    assert reply["status"] == "ok" and turn.text.strip()[:200] in reply["content"]
    builds = client.get(f"/api/apps/{app['id']}/builds?purpose=preview").json()["builds"]
    assert builds and builds[0]["state"] == "succeeded"
    assert builds[0]["id"] == turn.builds[-1]["buildId"]
    # the app is free at once: the next turn starts (turn 3: the note on turn 1's checks is 2)
    assert chat(client, app["id"], "Thanks").ended == ("succeeded", 3)


def test_a_reattach_after_the_third_event_gets_exactly_the_rest(client: httpx.Client) -> None:
    app = create(client, "A page about tides", "html")
    assert start_and_leave(client, app["id"], SLOW, keep=3) == ["1:1", "1:2", "1:3"]
    current = client.get(f"/api/apps/{app['id']}/turns/current").json()
    assert current["turn"] == 1 and current["lastEventId"].startswith("1:")
    rest = replay(client, app["id"], 1, headers={"Last-Event-ID": "1:3"})  # follows live
    assert rest.done is not None and rest.done["status"] == "succeeded"
    whole = replay(client, app["id"], 1)
    assert rest.ids == whole.ids[3:] and rest.order == whole.order[3:]
    assert rest.text and whole.text.endswith(rest.text) and rest.text != whole.text
    assert replay(client, app["id"], 1, params={"after": 3}).ids == rest.ids
    assert replay(client, app["id"], 1, params={"after": len(whole.ids)}).ids == []


def test_a_stopped_turn_ends_interrupted_and_says_why_to_the_model_and_the_user(
    client: httpx.Client,
) -> None:
    app = create(client, "A page about herons", "html")
    with client.stream("POST", f"/api/apps/{app['id']}/chat", json={"message": SLOW}) as r:
        lines = r.iter_lines()
        assert next(lines).startswith("id: 1:1")
        stop = client.post(f"/api/apps/{app['id']}/turns/1/cancel")
        assert stop.status_code == 202 and stop.json() == {"turn": 1, "status": "stopping"}
        turn = parse_sse(lines)
    assert turn.ended == ("interrupted", 1)
    assert turn.errors == [{"code": "stopped", "message": "stopped by the user"}]
    entries = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    shown = next(e for e in entries if e["turn"] == 1 and e["role"] == "error")
    assert shown["status"] == "interrupted" and "stopped by the user" in shown["content"]
    context = client.get(f"/api/apps/{app['id']}/context").json()["messages"]
    notes = [m["content"] for m in context if m["role"] == "assistant"]
    assert any("stopped by the user" in (n or "") for n in notes)
    again = client.post(f"/api/apps/{app['id']}/turns/1/cancel")
    assert again.status_code == 409  # it is over
    assert chat(client, app["id"], "Go on").ended == ("succeeded", 2)


def test_only_the_owner_or_an_admin_reads_or_stops_a_turn(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A page about moles", "html")
    chat(client, app["id"], "Make it")
    stranger = signed_in(server)
    for method, path in [
        ("GET", "turns/current"),
        ("GET", "turns/1/events"),
        ("POST", "turns/1/cancel"),
    ]:
        response = stranger.request(method, f"/api/apps/{app['id']}/{path}")
        assert response.status_code == 404, (method, path)
    stranger.close()
    assert client.get(f"/api/apps/{app['id']}/turns/7/events").status_code == 404
    bad = client.get(f"/api/apps/{app['id']}/turns/1/events", headers={"Last-Event-ID": "2:1"})
    assert bad.status_code == 400 and "Last-Event-ID" in bad.json()["error"]["message"]
    assert client.get(f"/api/apps/{app['id']}/turns/0/events").status_code == 422


@pytest.fixture
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("zerocode-killed"))
    srv.start()
    yield srv
    srv.stop()


def test_a_server_killed_mid_turn_makes_the_reattach_say_interrupted(own: Server) -> None:
    client = signed_in(own)
    app = create(client, "A page about gulls", "html")
    assert start_and_leave(client, app["id"], SLOW, keep=2) == ["1:1", "1:2"]
    assert own.proc is not None
    own.proc.kill()  # no shutdown: the turn cannot close itself
    own.proc.wait()
    own.start()
    assert client.get(f"/api/apps/{app['id']}/turns/current").status_code == 204
    turn = replay(client, app["id"], 1, headers={"Last-Event-ID": "1:2"})
    assert turn.ids == ["1:3"] and turn.ended == ("interrupted", 1)
    # the app is free at once (a local server's turns died with it), and the next turn
    # closes the dead one in the history
    assert chat(client, app["id"], "Again").ended == ("succeeded", 2)
    entries = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    dead = next(e for e in entries if e["turn"] == 1 and e["role"] == "error")
    assert dead["status"] == "interrupted" and "server stopped" in dead["content"]
    client.close()
