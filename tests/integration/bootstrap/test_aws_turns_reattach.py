"""Turns outlive the connection in AWS mode (issue 24, point 3), on moto over HTTP, with each
log AWS keeps turns in: Redis Streams where the cache exists (a real Redis stands in for
ElastiCache) and DynamoDB in the ``cheap`` profile (the turn-events table on moto).

On Lambda a container serves one request at a time, and the chat POST's invocation lasts
as long as its turn (its response is held until ``done``: docs/engine.md, "Turns outlive
the connection"). So while the turn runs, every other request lands on another container,
which knows the turn only through the shared log. Here container ``a`` runs the turn and
container ``b`` answers the reattach; both are the API's ASGI app over one moto backend.

A client that goes away mid-turn (TestClient cancels the request, the harshest way an ASGI
server tells an app its client left) ends only the reading: the POST's response still
completes only once the turn has, and the turn runs to ``done: succeeded``. Before a turn's
first event (its message saved, the model yet to answer) it is running all the same."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from fastapi.testclient import TestClient

from tests.conftest import REDIS_URL, redis_client_or_skip
from tests.e2e.conftest import Turn, parse_sse
from tests.e2e.test_turns_outlive import SLOW
from tests.integration.bootstrap.test_aws_mode import (
    aws_settings,
    container,
    create_html_app,
    gateway,
    sign_up,
)
from zerocode.bootstrap.settings import Settings

__all__ = ["aws_settings"]  # the fixture, for the tests below


@pytest.fixture(params=["RedisTurnLog", "DynamoTurnLog"], ids=["redis", "dynamodb"])
def turn_log(request: pytest.FixtureRequest) -> str:
    """Which log AWS mode keeps the turns in: the cache's Redis Streams, or DynamoDB."""
    if request.param == "RedisTurnLog":
        redis_client_or_skip()
    return str(request.param)


@pytest.fixture
def settings(turn_log: str, aws_settings: Settings) -> Settings:
    """AWS mode as the stack configures it with that log: the cache's URL where it exists
    (the cache also takes the window and the rate limits then), else the turn-events table.
    In Redis the front door's count of sign-ups from one address outlives the test, and
    every TestClient is one address ("testclient"): reruns must not run into its limit."""
    if turn_log == "RedisTurnLog":
        return aws_settings.model_copy(
            update={"redis_url": REDIS_URL, "rate_login_address": 1_000_000}
        )
    return aws_settings


@pytest.fixture
def containers(settings: Settings, tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    with container(settings, tmp_path, "a") as a, container(settings, tmp_path, "b") as b:
        yield a, b


class Leaver(threading.Thread):
    """A client that starts a turn on container ``a``, reads its first event and goes away.
    Closing the stream returns only once the app's response is complete, which in AWS mode
    is once the turn has ended: hence a thread of its own."""

    def __init__(self, a: TestClient, app_id: str, token: str) -> None:
        super().__init__(daemon=True)
        self.a, self.app_id, self.token = a, app_id, token
        self.left = threading.Event()  # it read its first event and is closing the stream
        self.answered = threading.Event()  # the POST's response is complete
        self.seen: list[str] = []
        self.status = 0
        self.after_answer: int | None = None  # turns/current on ``a`` once answered

    def run(self) -> None:
        try:
            with self.a.stream(
                "POST",
                f"/api/apps/{self.app_id}/chat",
                headers=gateway(self.token),
                json={"message": SLOW},
            ) as r:
                self.status = r.status_code
                lines = r.iter_lines()
                self.seen.append(next(x for x in lines if x.startswith("id:"))[3:].strip())
                self.left.set()
                r.close()  # gone; returns once the app has completed its response
            self.answered.set()
            self.after_answer = self.a.get(
                f"/api/apps/{self.app_id}/turns/current", headers=gateway(self.token)
            ).status_code
        finally:
            self.left.set()


def logged_so_far(last_event_id: str) -> int:
    """Events of the turn in the shared log: its newest id's number, 0 while the writer has
    appended nothing yet (it lets events gather for WRITE_LINGER first)."""
    return int(last_event_id.split(":")[1]) if last_event_id else 0


def replay(b: TestClient, app_id: str, token: str, **kwargs: Any) -> Turn:
    headers = {**gateway(token), **kwargs.pop("headers", {})}
    with b.stream("GET", f"/api/apps/{app_id}/turns/1/events", headers=headers, **kwargs) as r:
        assert r.status_code == 200, r.read()
        return parse_sse(r.iter_lines())


def test_a_turn_whose_client_left_runs_to_its_end_and_another_container_reattaches(
    turn_log: str, containers: tuple[TestClient, TestClient]
) -> None:
    a, b = containers
    for api in (a, b):
        turns = cast(Any, api.app).state.platform.turns
        assert type(turns.log).__name__ == turn_log and turns.shared
    token = sign_up(b, "alice")
    app = create_html_app(b, token)
    current_url = f"/api/apps/{app['id']}/turns/current"

    leaver = Leaver(a, app["id"], token)
    leaver.start()
    assert leaver.left.wait(20)
    assert leaver.status == 200 and leaver.seen == ["1:1"]
    # The client is gone; its turn is not, and its POST is still being answered.
    current = b.get(current_url, headers=gateway(token))
    assert current.status_code == 200, current.text
    assert current.json()["turn"] == 1 and current.json()["status"] == "running"
    assert not leaver.answered.is_set()
    # A client that had seen three events comes back, to another container.
    deadline = time.monotonic() + 10
    while logged_so_far(current.json()["lastEventId"]) < 3:
        assert time.monotonic() < deadline, current.json()
        time.sleep(0.05)
        current = b.get(current_url, headers=gateway(token))
        assert current.status_code == 200, current.text  # still running
    assert current.json()["turn"] == 1 and current.json()["status"] == "running"
    rest = replay(b, app["id"], token, headers={"Last-Event-ID": "1:3"})  # follows live
    assert rest.ended == ("succeeded", 1)
    # The POST's response was complete only once the turn was over (the invocation lasts
    # as long as the turn), and the app was free by then.
    leaver.join(20)
    assert leaver.answered.is_set() and leaver.after_answer == 204

    whole = replay(b, app["id"], token)  # the finished turn, from the log
    assert whole.ended == ("succeeded", 1)
    assert whole.ids == [f"1:{n}" for n in range(1, len(whole.ids) + 1)]
    assert rest.ids == whole.ids[3:] and rest.order == whole.order[3:]  # no gap, no duplicate
    assert rest.text and whole.text.endswith(rest.text) and rest.text != whole.text
    assert replay(b, app["id"], token, params={"after": 3}).ids == rest.ids
    assert replay(a, app["id"], token).ids == whole.ids  # the container that ran it agrees

    # Its history entry is whole: every piece of prose the model streamed, before and
    # after the client left (the code blocks are shown as the files they wrote).
    entries = b.get(f"/api/apps/{app['id']}/history", headers=gateway(token)).json()["entries"]
    assert [(e["turn"], e["role"]) for e in entries] == [(1, "ai"), (1, "user")]
    reply = entries[0]["content"]
    assert entries[0]["status"] == "ok" and entries[1]["content"] == SLOW
    prose = [part.strip() for part in whole.text.split("```")[::2] if part.strip()]
    assert reply.startswith(prose[0]) and all(part in reply for part in prose)
    assert [x["status"] for x in whole.builds] == ["running", "succeeded"]
    built = b.get(f"/api/apps/{app['id']}/builds?purpose=preview", headers=gateway(token))
    assert built.json()["builds"][0]["id"] == whole.builds[-1]["buildId"]
    assert built.json()["builds"][0]["state"] == "succeeded"
    # and the next message starts a turn at once (3: turn 2 is the note on 1's checks)
    with b.stream(
        "POST", f"/api/apps/{app['id']}/chat", headers=gateway(token), json={"message": "Thanks"}
    ) as r:
        assert r.status_code == 200, r.read()
        assert parse_sse(r.iter_lines()).ended == ("succeeded", 3)


class HeldModel:
    """The model, its answer held back until ``go`` is set: a model slow to answer (a real
    one may take seconds before its first token, with the user's message already saved)."""

    def __init__(self, inner: Any, go: threading.Event) -> None:
        self.inner, self.go = inner, go
        self.description = inner.description

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        assert await asyncio.to_thread(self.go.wait, 20)
        async for event in self.inner.stream(*args, **kwargs):
            yield event


def test_before_its_first_event_a_turn_is_running_and_a_reattach_waits_for_it(
    turn_log: str, containers: tuple[TestClient, TestClient]
) -> None:
    """Between the user's message being saved and the turn's first event (the model has
    not answered yet), another container says the turn runs, and a reattach follows it
    rather than calling it over."""
    a, b = containers
    token = sign_up(b, "alice")
    app = create_html_app(b, token)
    go, reattaching, empty = threading.Event(), threading.Event(), threading.Event()
    engine = cast(Any, a.app).state.platform.engine
    engine.model = HeldModel(engine.model, go)
    log = cast(Any, b.app).state.platform.turns.log
    found = log.last

    async def last(app_id: str, turn: int) -> Any:
        """The model answers once the reattach has found the turn's log empty."""
        entry = await found(app_id, turn)
        if entry is None and reattaching.is_set():
            empty.set()
            go.set()
        return entry

    log.last = last
    started: list[Turn] = []

    def post() -> None:
        with a.stream(
            "POST", f"/api/apps/{app['id']}/chat", headers=gateway(token), json={"message": "Go"}
        ) as r:
            assert r.status_code == 200, r.read()
            started.append(parse_sse(r.iter_lines()))

    poster = threading.Thread(target=post, daemon=True)
    poster.start()
    try:
        history = f"/api/apps/{app['id']}/history"
        deadline = time.monotonic() + 10
        while not b.get(history, headers=gateway(token)).json()["entries"]:
            assert time.monotonic() < deadline, "the user's message was not saved"
            time.sleep(0.05)
        current = b.get(f"/api/apps/{app['id']}/turns/current", headers=gateway(token))
        assert current.status_code == 200, current.text
        assert current.json() == {"turn": 1, "status": "running", "lastEventId": ""}
        reattaching.set()
        whole = replay(b, app["id"], token)
    finally:
        go.set()  # whatever happened, let the turn end
        poster.join(20)
    assert empty.is_set() and started, "the reattach came too late, or the turn did not end"
    assert whole.ended == ("succeeded", 1)
    assert whole.ids == started[0].ids and whole.order == started[0].order
