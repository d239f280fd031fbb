"""Shutdown in order (issue 38, point 3), through the real local server and its checking
browser, stopped as a terminal's Ctrl-C stops it: SIGINT to its whole process group (the
browser's driver included). A turn running at the signal ends with its checks run while the
preview is still served, and a chat meanwhile gets 503 ``server_stopping``; past the bound
(``ZEROCODE_SHUTDOWN_SECONDS``) the turn is interrupted and its checks are ``not_run``
"the server was stopping", and the next start runs them again on its own. A scripted model
decides when each answer comes, so nothing here depends on how fast anything runs."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, parse_sse, signed_in
from tests.e2e.test_browser_shares import PagesModel, _chunk
from tests.integration.adapters.test_chromium_covers import chromium_or_skip

STOPPING = "the server was stopping"


def page(waits: int) -> str:
    """One page and one check of it, the check waiting ``waits`` × 5 s before it looks."""
    check = {
        "description": "the heading shows",
        "steps": [{"wait": 5000}] * waits,
        "expect": [{"text": {"css": "h1"}, "equals": "Fine"}],
    }
    html = "<!doctype html><html><body><h1>Fine</h1></body></html>"
    return f"Here it is.\n\n```html\n{html}\n```\n\n```checks\n{json.dumps([check])}\n```"


class HeldModel(PagesModel):
    """test_browser_shares' model with one page and one check: a request saying
    ``[[hold]]`` gets its first words, then the rest once ``go`` is set (``holding`` is set
    meanwhile); ``[[long]]`` gets a check that waits 10 s before it looks."""

    def __init__(self) -> None:
        super().__init__()
        self.holding, self.go = threading.Event(), threading.Event()
        self.thread.start()

    def chunks(self, said: str) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        answer = page(2 if "[[long]]" in said else 0)
        if "[[hold]]" in said and not self.go.is_set():
            yield _chunk({"role": "assistant", "content": answer[:5]})
            self.holding.set()
            self.go.wait(300)
            answer = answer[5:]
        yield _chunk({"role": "assistant", "content": answer})
        yield _chunk({}, "stop")

    def close(self) -> None:
        self.go.set()
        self.server.shutdown()
        self.server.server_close()


class OwnGroup(Server):
    """A server in a process group of its own, as a terminal's foreground job is: SIGINT to
    the group is the terminal's Ctrl-C (it reaches the browser's driver too)."""

    def _start(self) -> None:
        self.forked = False  # a process of its own group: started with subprocess
        grouped = functools.partial(subprocess.Popen, start_new_session=True)
        with mock.patch.object(subprocess, "Popen", grouped):
            super()._start()

    def ctrl_c(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGINT)

    def said(self, line: str) -> None:
        """Wait until the server's output has ``line`` (it prints as it stops)."""
        assert self.log is not None and self.proc is not None
        deadline = time.monotonic() + 60
        while line not in self.log.read_text():
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.05)

    def exited(self) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=120)


@pytest.fixture
def model() -> Iterator[HeldModel]:
    held = HeldModel()
    yield held
    held.close()


def server_of(data: Path, model: HeldModel, bound: str) -> OwnGroup:
    chromium_or_skip()
    srv = OwnGroup(data)
    srv.env.update(
        {
            "ZEROCODE_MODEL_BASE_URL": model.base_url,
            "ZEROCODE_MODEL_API_KEY": "sk-test",
            "ZEROCODE_MODEL_CODE": "held",
            "ZEROCODE_MODEL_ROUTING": "held",
            "ZEROCODE_MODEL_VUE": "held",
            "ZEROCODE_RUNTIME_CHECK": "1",
            "ZEROCODE_SHUTDOWN_SECONDS": bound,
        }
    )
    srv.start()
    return srv


@contextlib.contextmanager
def serving(
    tmp_path: Path, model: HeldModel, bound: str
) -> Iterator[tuple[OwnGroup, httpx.Client, dict[str, Any]]]:
    """A server stopping with ``bound``, a user signed in, and an html app of theirs."""
    srv = server_of(tmp_path, model, bound)
    try:
        client = signed_in(srv)
        yield srv, client, create(client, "A page", "html")
        client.close()
    finally:
        srv.stop()


def suite(client: httpx.Client, app_id: str) -> dict[str, Any]:
    got = client.get(f"/api/apps/{app_id}/checks")
    assert got.status_code == 200, got.text
    return dict(got.json())


def test_ctrl_c_mid_turn_lets_it_end_checked_while_the_preview_is_served(
    model: HeldModel, tmp_path: Path
) -> None:
    with serving(tmp_path, model, "300") as (srv, client, app):
        other = create(client, "Another page", "html")
        assert chat(client, app["id"], "Make it").done["checks"]["passed"] == 1  # type: ignore[index]
        path = f"/api/apps/{app['id']}/chat"
        with client.stream("POST", path, json={"message": "Again [[hold]]"}) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            assert next(lines).startswith("id: ")
            assert model.holding.wait(60)
            srv.ctrl_c()
            srv.said("stopping: waiting up to 300 s for 1 running turn(s)")
            refused = client.post(f"/api/apps/{other['id']}/chat", json={"message": "Hi"})
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "server_stopping"
            assert "the server is stopping" in refused.json()["error"]["message"]
            preview = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
            assert httpx.get(preview).status_code == 200  # the preview still served
            model.go.set()
            turn = parse_sse(lines)
        assert turn.ended == ("succeeded", 3), turn.errors  # turn 2: the note on the checks
        assert turn.checks and all(c["status"] == "passed" for c in turn.checks), turn.checks
        assert srv.exited() == 0
        assert "Traceback" not in (srv.log.read_text() if srv.log else "")


def test_past_the_bound_checks_are_not_run_and_the_next_start_runs_them(
    model: HeldModel, tmp_path: Path
) -> None:
    with serving(tmp_path, model, "0") as (srv, client, app):
        path = f"/api/apps/{app['id']}/chat"
        with client.stream("POST", path, json={"message": "Make it [[long]]"}) as r:
            assert r.status_code == 200
            lines = r.iter_lines()
            for line in lines:  # the preview is built: its check (10 s of waits) begins
                if line.startswith("data:") and '"succeeded"' in line and "buildId" in line:
                    break
            srv.ctrl_c()
            turn = parse_sse(lines)
        assert turn.ended == ("interrupted", 1), turn
        assert [(c["status"], c.get("note")) for c in turn.checks] == [("not_run", STOPPING)], turn
        assert srv.exited() == 0
        stopped = turn.checks[0]["run"]

        srv.start()  # the checks run again on their own, against the preview
        deadline = time.monotonic() + 120
        while (body := suite(client, app["id"]))["runs"][0]["run"] == stopped:
            assert time.monotonic() < deadline, body
            time.sleep(0.2)
        runs = {r["run"]: r for r in body["runs"]}
        assert runs[stopped]["whyNotRun"] == STOPPING
        assert runs[stopped]["checks"] == {"passed": 0, "failed": 0, "notRun": 1}
        assert body["runs"][0]["checks"] == {"passed": 1, "failed": 0, "notRun": 0}, body
        assert body["checks"][0]["status"] == "passed", body
