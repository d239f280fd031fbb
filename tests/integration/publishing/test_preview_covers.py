"""Preview covers (issue 26, point 7): an app with no deploy cover gets a private cover from
its latest preview. Real local platform (SQLite, the local builder and stores, real preview
builds of an html app); the camera is a stand-in that records what it was asked to shoot
(tests/e2e/test_preview_covers.py takes real screenshots through the real server).

What is checked: the first preview is shot at once; previews that follow within the
interval are not shot each, but the newest is, once the interval is over; one job per app
and one browser for all apps; nothing for an app with a deploy cover; a screenshot of a
preview that moved on meanwhile is not kept; a failed screenshot says why without the
preview's key and fails nothing; at most two files per app; deleting the app deletes them."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.builds import Build, BuildState
from zerocode.publishing.preview_covers import PNG_MAGIC, PreviewCovers


class Camera:
    """Shoots nothing: answers a PNG naming the call, after ``delay`` seconds; counts how
    many ran at once. ``during`` runs inside a capture (to change things meanwhile)."""

    def __init__(self, delay: float = 0.0, *, fail: bool = False) -> None:
        self.delay, self.fail = delay, fail
        self.urls: list[str] = []
        self.running = self.most = 0
        self.during: Callable[[], Awaitable[None]] | None = None

    async def capture(self, url: str) -> bytes:
        self.urls.append(url)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(self.delay)
            if self.during is not None:
                during, self.during = self.during, None
                await during()
            if self.fail:
                raise RuntimeError(f"page.goto: net::ERR_FAILED at {url}")
        finally:
            self.running -= 1
        return PNG_MAGIC + f"shot {len(self.urls)}".encode()


def local(tmp_path: Path, camera: Camera, interval: float) -> tuple[Platform, PreviewCovers]:
    p = wiring.platform(
        Settings(
            data_dir=tmp_path, covers=False, runtime_check=False, preview_cover_seconds=interval
        )
    )
    covers = p.publishing.preview_covers
    assert covers is not None
    covers.camera = camera  # covers=False wires none: this stand-in instead
    return p, covers


def new_app(p: Platform, owner: str = "owner-1") -> App:
    return asyncio.run(p.create_app(owner, "A page about newts", CodeGenType.HTML))


async def preview(p: Platform, app: App, heading: str) -> Build:
    await asyncio.to_thread(p.workspace.write, app.id, "index.html", f"<h1>{heading}</h1>".encode())
    build = await p.publishing.preview(app)
    assert build.state is BuildState.SUCCEEDED, build
    return build


def files(tmp_path: Path, app: App) -> set[str]:
    folder = tmp_path / "preview-covers" / app.id
    return {f.stem for f in folder.glob("*.png")} if folder.is_dir() else set()


def recorded(p: Platform, app: App) -> str | None:
    current = p.apps.get(app.id)
    assert current is not None
    return current.preview_cover


def test_the_first_preview_is_shot_at_once_and_a_burst_once_at_its_end(tmp_path: Path) -> None:
    camera = Camera()
    p, covers = local(tmp_path, camera, interval=1.5)
    app = new_app(p)

    async def scenario() -> tuple[Build, Build, float, float]:
        first = await preview(p, app, "One")
        await covers.settle()
        shot_first = time.monotonic()
        assert len(camera.urls) == 1 and recorded(p, app) == first.id
        await preview(p, app, "Two")
        last = await preview(p, app, "Three")
        await asyncio.sleep(0.3)
        assert len(camera.urls) == 1, "a preview within the interval was shot at once"
        await covers.settle()
        return first, last, shot_first, time.monotonic()

    first, last, shot_first, ended = asyncio.run(scenario())
    assert len(camera.urls) == 2  # three previews, two screenshots
    assert ended - shot_first >= 1.4  # the second waited for the interval
    assert recorded(p, app) == last.id  # the newest preview is the cover, not "Two"
    assert camera.urls == [p.publishing.urls.preview(app.preview_key)] * 2
    assert files(tmp_path, app) == {first.id, last.id}  # the cover and the one before
    png = p.publishing.preview_cover(p.apps.get(app.id))  # type: ignore[arg-type]
    assert png == PNG_MAGIC + b"shot 2"


def test_one_job_per_app_and_one_browser_for_all(tmp_path: Path) -> None:
    camera = Camera(delay=0.2)
    p, covers = local(tmp_path, camera, interval=0)
    a, b = new_app(p), new_app(p)

    async def scenario() -> tuple[Build, Build]:
        await preview(p, a, "A one")
        await preview(p, b, "B one")
        newest_a = await preview(p, a, "A two")  # while A's job runs: it goes on after
        await covers.settle()
        return newest_a, b_newest()

    def b_newest() -> Build:
        shown = p.publishing._newest_preview(b.id)
        assert shown is not None
        return shown

    newest_a, newest_b = asyncio.run(scenario())
    assert camera.most == 1  # never two browsers at once
    assert recorded(p, a) == newest_a.id and recorded(p, b) == newest_b.id
    assert len(camera.urls) == 3  # A's first and newest, B's


def test_an_app_with_a_deploy_cover_gets_none(tmp_path: Path) -> None:
    camera = Camera()
    p, covers = local(tmp_path, camera, interval=0)
    app = new_app(p)

    async def scenario() -> None:
        await preview(p, app, "One")
        await covers.settle()
        assert recorded(p, app) is not None
        current = p.apps.get(app.id)
        assert current is not None
        p.apps.put(replace(current, cover="http://127.0.0.1:8001/covers/x/b.png"))
        await preview(p, app, "Two")
        await covers.settle()

    asyncio.run(scenario())
    assert len(camera.urls) == 1  # the deployed app's preview was not shot
    deployed = p.apps.get(app.id)
    assert deployed is not None
    assert p.publishing.preview_cover(deployed) is None  # the deploy cover is the cover


def test_a_screenshot_of_a_preview_that_moved_on_is_not_kept(tmp_path: Path) -> None:
    camera = Camera()
    p, covers = local(tmp_path, camera, interval=0)
    app = new_app(p)
    newer: list[Build] = []

    async def move_on() -> None:
        newer.append(await preview(p, app, "Newer"))

    async def scenario() -> Build:
        camera.during = move_on
        first = await preview(p, app, "One")
        await covers.settle()
        return first

    first = asyncio.run(scenario())
    assert len(camera.urls) == 2
    assert recorded(p, app) == newer[0].id
    assert first.id not in files(tmp_path, app)


def test_a_failed_screenshot_says_why_without_the_key_and_fails_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    camera = Camera(fail=True)
    p, covers = local(tmp_path, camera, interval=0)
    app = new_app(p)

    async def scenario() -> Build:
        build = await preview(p, app, "One")
        await covers.settle()
        return build

    with caplog.at_level(logging.WARNING):
        build = asyncio.run(scenario())
    assert build.state is BuildState.SUCCEEDED
    assert recorded(p, app) is None and files(tmp_path, app) == set()
    assert "preview cover of app" in caplog.text and "ERR_FAILED" in caplog.text
    assert app.preview_key not in caplog.text


def test_at_most_two_files_per_app_and_none_once_it_is_deleted(tmp_path: Path) -> None:
    camera = Camera()
    p, covers = local(tmp_path, camera, interval=0)
    app, other = new_app(p), new_app(p, "owner-2")

    async def scenario() -> list[Build]:
        made = []
        for n in range(4):
            made.append(await preview(p, app, f"Take {n}"))
            await covers.settle()
        await preview(p, other, "Other")
        await covers.settle()
        return made

    made = asyncio.run(scenario())
    assert files(tmp_path, app) == {made[-1].id, made[-2].id}
    assert p.delete_app(app)
    assert not (tmp_path / "preview-covers" / app.id).exists()
    assert len(files(tmp_path, other)) == 1  # another app's are untouched


def test_a_cover_of_an_app_deleted_meanwhile_is_not_kept(tmp_path: Path) -> None:
    camera = Camera()
    p, covers = local(tmp_path, camera, interval=0)
    app = new_app(p)

    async def delete() -> None:
        await asyncio.to_thread(p.apps.delete, app.id)

    async def scenario() -> None:
        camera.during = delete
        await preview(p, app, "One")
        await covers.settle()

    asyncio.run(scenario())
    assert files(tmp_path, app) == set()


def test_the_local_platform_wires_a_camera_only_with_covers_and_preview_covers(
    tmp_path: Path,
) -> None:
    def wired(name: str, **settings: Any) -> Platform:
        p = wiring.platform(Settings(data_dir=tmp_path / name, runtime_check=False, **settings))
        assert p.publishing.preview_covers is not None  # the store, for reading and deleting
        return p

    assert wired("a", covers=False).publishing.preview_covers.camera is None  # type: ignore[union-attr]
    off = wired("b", preview_covers=False).publishing.preview_covers
    assert off is not None and off.camera is None
    on = wired("c")
    assert on.publishing.preview_covers.camera is on.publishing.covers  # type: ignore[union-attr]
