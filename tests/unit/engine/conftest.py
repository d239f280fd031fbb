"""The ToolBox fixtures of the tools' tests (tests/unit/engine/tools_support.py)."""

from __future__ import annotations

import pytest

from tests.unit.engine.tools_support import APP, MemoryWorkspace
from zerocode.engine.tools import ToolBox


@pytest.fixture
def ws() -> MemoryWorkspace:
    ws = MemoryWorkspace()
    ws.files[(APP, "package.json")] = b"{}"
    ws.files[(APP, "src/App.vue")] = b"<template><h1>Hello</h1></template>\n"
    return ws


@pytest.fixture
def box(ws: MemoryWorkspace) -> ToolBox:
    return ToolBox(ws, APP)
