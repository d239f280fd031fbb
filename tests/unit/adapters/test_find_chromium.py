"""Which browser the platform checks pages in (adapters/local/chromium.py ``find_chromium``)."""

from __future__ import annotations

import shutil

import pytest

from zerocode.adapters.local import chromium


def on_path(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}" if name in names else None)


def test_the_headless_shell_comes_before_the_full_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    on_path(monkeypatch, "chromium", "chromium-headless-shell")
    assert chromium.find_chromium() == "/usr/bin/chromium-headless-shell"
    on_path(monkeypatch, "google-chrome", "chrome-headless-shell")
    assert chromium.find_chromium() == "/usr/bin/chrome-headless-shell"


def test_the_full_browser_when_there_is_no_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    on_path(monkeypatch, "chromium")
    assert chromium.find_chromium() == "/usr/bin/chromium"
    on_path(monkeypatch)
    assert chromium.find_chromium() is None


def test_a_configured_browser_is_taken_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    on_path(monkeypatch, "chromium-headless-shell")
    assert chromium.find_chromium("/opt/chrome/chrome") == "/opt/chrome/chrome"
