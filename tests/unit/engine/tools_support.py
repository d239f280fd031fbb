"""The tools' tests' own parts: a tiny in-memory Workspace and calls and their outcomes."""

from __future__ import annotations

import json
from typing import Any

from zerocode.apps.workspace import (
    FileInfo,
    FileMissing,
    WorkspaceFull,
    check_app_id,
    clean_path,
)
from zerocode.engine.tools import ToolOutcome
from zerocode.memory.messages import FAILED_PREFIX, ToolCall


class MemoryWorkspace:
    """Just enough of the Workspace port, with the shared path rules and a size limit."""

    def __init__(self, max_file_bytes: int = 1000) -> None:
        self.files: dict[tuple[str, str], bytes] = {}
        self.max_file_bytes = max_file_bytes
        self.fail_writes_with: Exception | None = None

    def read(self, app_id: str, path: str) -> bytes:
        try:
            return self.files[(check_app_id(app_id), clean_path(path))]
        except KeyError:
            raise FileMissing(f"file {clean_path(path)} does not exist") from None

    def write(self, app_id: str, path: str, data: bytes) -> None:
        if self.fail_writes_with is not None:
            raise self.fail_writes_with
        if len(data) > self.max_file_bytes:
            raise WorkspaceFull(f"file {path} is too big")
        self.files[(check_app_id(app_id), clean_path(path))] = data

    def delete(self, app_id: str, path: str) -> None:
        self.read(app_id, path)
        del self.files[(app_id, clean_path(path))]

    def list(self, app_id: str) -> list[FileInfo]:
        return sorted(
            (FileInfo(p, len(d)) for (a, p), d in self.files.items() if a == app_id),
            key=lambda f: f.path,
        )

    def delete_app(self, app_id: str) -> int:
        doomed = [k for k in self.files if k[0] == app_id]
        for k in doomed:
            del self.files[k]
        return len(doomed)


APP = "app1"


_ids = iter(range(10**6))


def call(name: str, args: Any = None, raw: str | None = None) -> ToolCall:
    text = raw if raw is not None else json.dumps(args if args is not None else {})
    return ToolCall(f"call_{next(_ids)}", name, text)


def ok(outcome: ToolOutcome) -> str:
    assert outcome.result.ok, outcome.result.content
    assert not outcome.result.content.startswith(FAILED_PREFIX)
    return outcome.result.content


def failed(outcome: ToolOutcome) -> str:
    assert not outcome.result.ok, outcome.result.content
    assert outcome.result.content.startswith(FAILED_PREFIX)
    assert not outcome.changed and not outcome.exit
    assert outcome.summary == outcome.result.content[len(FAILED_PREFIX) :].replace("\n", " ")
    return outcome.result.content
