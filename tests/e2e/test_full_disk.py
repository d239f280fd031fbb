"""A full disk, for real (issue 29): the server's data directory on a small tmpfs that the
test fills with a ballast file, as another process or ordinary use would. Through the real
server: a turn that meets the full disk half-way says so in SSE (error with its phase and
kind, then done failed), in the history and in the model's context; writes answer 503
``storage_unavailable``; reads go on; nothing is lost (SQLite's integrity check); and once
the ballast is gone everything is writable again."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, Turn, chat, create, parse_sse, signed_in
from tests.tmpfs import tmpfs
from zerocode.adapters.local.free_space import free_bytes
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate

DISK_MB = 16


def fill(path: Path) -> int:
    """Write ``path`` until the disk is full; the bytes written."""
    written = 0
    block = b"\0" * (64 << 10)
    with path.open("ab", buffering=0) as out:
        while True:
            try:
                written += out.write(block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        for size in (4096, 512, 1):  # the last partial blocks
            with contextlib.suppress(OSError):
                while True:
                    written += out.write(b"\0" * size)
    return written


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", f"{DISK_MB}m") as mounted:
        yield mounted


@pytest.fixture
def full_server(disk: Path, tmp_path: Path) -> Iterator[Server]:
    server = Server(disk / "data", log_dir=tmp_path)
    server.data_dir.mkdir()
    server.env.update(
        {
            "ZEROCODE_DISK_RESERVE_MB": "1",
            "ZEROCODE_MIN_FREE_MB": "1",
            "ZEROCODE_HEALTH_PROBE_SECONDS": "0",
        }
    )
    server.start()
    yield server
    server.stop()


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    validate(from_openai_list(messages))  # the window stays a valid conversation
    return messages


def chat_filling_the_disk(client: httpx.Client, app_id: str, ballast: Path) -> Turn:
    """A slow turn whose disk fills once it is under way (after its first event)."""
    body = {"message": "A page about owls [[slow]]"}
    with client.stream("POST", f"/api/apps/{app_id}/chat", json=body, timeout=60) as response:
        assert response.status_code == 200, response.read()
        lines = response.iter_lines()

        def filling() -> Iterator[str]:
            filled = False
            for line in lines:
                if not filled and line.startswith("data:"):
                    fill(ballast)
                    filled = True
                yield line

        return parse_sse(filling())


def test_a_full_disk_is_told_everywhere_and_nothing_is_lost(
    full_server: Server, disk: Path
) -> None:
    client = signed_in(full_server)
    app = create(client, "A page about owls", "html")
    first = chat(client, app["id"], "A page about owls")
    assert first.done is not None and first.done["status"] == "succeeded"
    page = client.get(f"/api/apps/{app['id']}/files/index.html").text

    # The disk fills while the turn runs: the turn says what failed, where, and ends failed.
    turn = chat_filling_the_disk(client, app["id"], disk / "ballast")
    assert turn.order[-2:] == ["error", "done"], turn.order
    (error,) = turn.errors
    assert error["code"] == "storage_unavailable" and error["kind"] == "disk_full"
    assert error["phase"] and "storage is full" in error["message"]
    assert turn.done is not None and turn.done["status"] == "failed"
    shown = client.get(f"/api/apps/{app['id']}/history").json()["entries"][0]
    assert shown["role"] == "error" and "storage is full" in shown["content"]
    note = context(client, app["id"])[-1]
    assert "storage is full" in note["content"]  # the model is told why the turn ended
    assert "I built" not in note["content"]

    # Full: writes are refused with the code, reads go on.
    refused = client.post(f"/api/apps/{app['id']}/chat", json={"message": "Add a footer"})
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "storage_unavailable"
    assert "Retry-After" not in refused.headers  # a full disk does not pass by itself
    assert "freed space" in refused.json()["error"]["message"]
    bigger = page.replace("</body>", f"<!-- {'x' * 100_000} --></body>")
    saved = client.put(f"/api/apps/{app['id']}/files/index.html", json={"content": bigger})
    assert saved.status_code == 503, saved.text
    assert saved.json()["error"]["code"] == "storage_unavailable"
    assert client.get(f"/api/apps/{app['id']}/files/index.html").text == page
    assert client.get(f"/api/apps/{app['id']}/history").status_code == 200
    assert client.get("/api/health").json()["status"] == "degraded"

    # Space returns: everything is writable again.
    (disk / "ballast").unlink()
    again = chat(client, app["id"], "Add a footer")
    assert again.done is not None and again.done["status"] == "succeeded", again.errors
    saved = client.put(f"/api/apps/{app['id']}/files/index.html", json={"content": bigger})
    assert saved.status_code == 200, saved.text
    assert saved.json()["build"]["state"] == "succeeded"
    assert create(client, "A page about cats", "html")["id"]
    assert client.get("/api/health").json()["status"] == "ok"
    context(client, app["id"])

    full_server.stop()
    database = sqlite3.connect(full_server.data_dir / "zerocode.sqlite3")
    try:
        assert database.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        database.close()


def test_a_turn_is_not_started_when_its_end_could_not_be_recorded(
    full_server: Server, disk: Path
) -> None:
    client = signed_in(full_server)
    app = create(client, "A page about owls", "html")
    fill(disk / "ballast")  # the reserve stays; nothing beside it
    refused = client.post(f"/api/apps/{app['id']}/chat", json={"message": "A page about owls"})
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "storage_unavailable"
    assert client.get(f"/api/apps/{app['id']}/history").json()["entries"] == []
    (disk / "ballast").unlink()
    turn = chat(client, app["id"], "A page about owls")
    assert turn.done is not None and turn.done["status"] == "succeeded"
    assert free_bytes(disk) > 0


@pytest.mark.parametrize(
    ("fault", "mode", "phase"),
    [
        ("build_output:1:ENOSPC", "html", "building the preview"),
        ("transcript:2:ENOSPC", "vue_project", "saving the step"),
    ],
)
def test_a_full_disk_at_a_boundary_ends_the_turn_without_a_repair(
    tmp_path: Path, fault: str, mode: str, phase: str
) -> None:
    """ENOSPC injected where a build places its output and where a step is saved: the turn
    ends failed with the storage error (no repair round: the model cannot fix a disk)."""
    server = Server(tmp_path / "data")
    server.data_dir.mkdir()
    server.env["ZEROCODE_FAULT_FAIL"] = fault
    server.start()
    try:
        client = signed_in(server)
        app = create(client, "A notes app", mode)
        turn = chat(client, app["id"], "A notes app")
        (error,) = turn.errors
        assert (error["code"], error["kind"]) == ("storage_unavailable", "disk_full")
        assert error["phase"] == phase, error
        assert not turn.repairs
        assert turn.done is not None and turn.done["status"] == "failed"
        shown = client.get(f"/api/apps/{app['id']}/history").json()["entries"][0]
        assert shown["role"] == "error" and "storage is full" in shown["content"]
        told = [m.get("content") or "" for m in context(client, app["id"])[2:]]
        assert any("storage is full" in said for said in told)  # the model is told
        builds = client.get(f"/api/apps/{app['id']}/builds").json()["builds"]
        if fault.startswith("build_output"):  # the refused build says why
            (build,) = builds
            assert build["state"] == "failed" and "storage is full" in build["error"], build
        again = chat(client, app["id"], "Add a footer")
        assert again.done is not None and again.done["status"] == "succeeded", again.errors
    finally:
        server.stop()
