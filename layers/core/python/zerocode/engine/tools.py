"""The Vue agent's tools over any Workspace, and their real outcomes.

Whatever the model sends — an unknown tool, broken JSON, a path outside the
project, an ambiguous edit — becomes a failed tool result it can read and
correct, never an exception that kills the turn. Each outcome also carries a
one-line summary for people and whether a file really changed, so the UI can
only report work that happened. Storage outages still raise: they are not the
model's doing and the turn must fail visibly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zerocode.apps import assets
from zerocode.apps.image_intake import describe
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import FileMissing, PathRefused, Workspace, WorkspaceFull, clean_path
from zerocode.data import model as data_model
from zerocode.engine.acceptance import CheckInvalid, parse_check
from zerocode.engine.check_suite import CheckStore
from zerocode.engine.tool_definitions import (
    CHECK_TOOL_NAMES,
    CHECK_TOOLS,
    LIST_CHECKS,
    READ_ONLY_NAMES,
    READ_ONLY_TOOLS,
    SCHEMAS,
    TOOL_DEFINITIONS,
)
from zerocode.errors import Conflict, NotFound, ZerocodeError
from zerocode.memory.messages import ToolCall, ToolResult
from zerocode.publishing import export_rules, toolchain

__all__ = ["CHECK_TOOL_NAMES", "TOOL_DEFINITIONS", "ToolBox", "ToolOutcome"]

DEFAULT_PROTECTED = frozenset({"package.json", "vite.config.js", "index.html", "src/main.js"})


@dataclass(frozen=True, kw_only=True)
class ToolOutcome:
    result: ToolResult
    path: str | None
    summary: str  # one line for people
    changed: bool  # a file was created, modified or deleted
    exit: bool
    suite: bool = False  # an acceptance check was added or retired
    kept: bool = False  # a write refused for undoing the builder's edit: fails the call only


class _Failed(ZerocodeError):
    """A refusal the model caused; becomes a failed tool result."""


class _Kept(_Failed):
    """A write refused because it undid the builder's own edit (engine/edit_guard.py)."""


@dataclass(frozen=True, kw_only=True)
class _Done:
    text: str
    summary: str
    changed: bool = False
    exit: bool = False
    suite: bool = False


class ToolBox:
    """The tools of one turn: counts calls so a looping model is stopped at ``max_calls``.
    With a CheckStore (and the turn's number), the acceptance check tools too."""

    def __init__(
        self,
        workspace: Workspace,
        app_id: str,
        *,
        max_calls: int = 20,
        protected: frozenset[str] = DEFAULT_PROTECTED,
        checks: CheckStore | None = None,
        turn: int = 0,
        read_only: bool = False,
        kind: CodeGenType = CodeGenType.VUE_PROJECT,
    ) -> None:
        self.workspace = workspace
        self.read_only, self.kind = read_only, kind
        self.app_id = app_id
        self.max_calls = max_calls
        self.protected = protected
        self.checks, self.turn = checks, turn
        self.calls = 0
        # Set by a repair round (engine/edit_guard.py): why a write undoes the builder's own
        # edit (path, what the file holds, what it would hold), or None when it does not.
        self.guard: Callable[[str, bytes | None, bytes], str | None] | None = None
        self._handlers: dict[str, Callable[[dict[str, Any]], _Done]] = {
            "read_dir": self._read_dir,
            "read_file": self._read_file,
            "write_file": self._write_file,
            "modify_file": self._modify_file,
            "delete_file": self._delete_file,
            "list_assets": self._list_assets,
            "exit": self._exit,
        }
        if checks is not None:
            self._handlers["add_check"] = self._add_check
            self._handlers["retire_check"] = self._retire_check
            self._handlers["list_checks"] = self._list_checks
        if read_only:  # Ask mode (engine/ask.py): no tool here can change anything
            self._handlers = {k: v for k, v in self._handlers.items() if k in READ_ONLY_NAMES}

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """The tools offered to the model: the check tools only where checks are kept; in
        Ask mode, the tools that only read."""
        if self.read_only:
            return [t for t in READ_ONLY_TOOLS if t["function"]["name"] in self._handlers]
        if self.checks is None:
            return TOOL_DEFINITIONS
        return TOOL_DEFINITIONS + CHECK_TOOLS + [LIST_CHECKS]

    def run(self, call: ToolCall) -> ToolOutcome:
        """The call's real outcome; raises only for internal failures such as a storage outage."""
        path: str | None = None
        try:
            if call.name == "exit":  # how the model stops: allowed past the limit, any args
                return self._outcome(call, None, self._exit({}))
            self.calls += 1
            if self.calls > self.max_calls:
                raise _Failed(f"tool call limit of {self.max_calls} per turn reached; call exit")
            handler = self._handlers.get(call.name)
            if handler is None and self.read_only and call.name in SCHEMAS:
                raise _Failed(
                    f"{call.name} is not available: this turn is a question (Ask mode), so "
                    "nothing can be changed; answer from what you read. Nothing was changed."
                )
            if handler is None:
                raise _Failed(
                    f"unknown tool {call.name!r}; the tools are " + ", ".join(self._handlers)
                )
            args = _arguments(call)
            path = _display_path(args.get("path"))
            done = handler(args)
        except (_Failed, PathRefused, FileMissing, WorkspaceFull, Conflict, NotFound) as exc:
            return ToolOutcome(
                result=ToolResult.failure(call, exc.message),
                path=path,
                summary=_one_line(exc.message),
                changed=False,
                exit=False,
                kept=isinstance(exc, _Kept),
            )
        return self._outcome(call, path, done)

    @staticmethod
    def _outcome(call: ToolCall, path: str | None, done: _Done) -> ToolOutcome:
        return ToolOutcome(
            result=ToolResult.success(call, done.text),
            path=path,
            summary=_one_line(done.summary),
            changed=done.changed,
            exit=done.exit,
            suite=done.suite,
        )

    def _read_dir(self, args: dict[str, Any]) -> _Done:
        raw = args.get("path", "")
        base = "" if raw.strip() in ("", ".", "./") else clean_path(raw)
        files = [
            f for f in self.workspace.list(self.app_id) if not base or f.path.startswith(base + "/")
        ]
        if not files:
            if base:
                raise _Failed(f"no directory {base} in the project")
            return _Done(text="the project has no files yet", summary="listed the project (empty)")
        lines = [f"{f.path} ({f.size} bytes)" for f in files]
        where = base or "the project"
        return _Done(text="\n".join(lines), summary=f"listed {where} ({len(files)} files)")

    def _read_file(self, args: dict[str, Any]) -> _Done:
        path = clean_path(args["path"])
        data = self.workspace.read(self.app_id, path)
        return _Done(text=_text(path, data), summary=f"read {path} ({len(data)} bytes)")

    def _write_file(self, args: dict[str, Any]) -> _Done:
        path = clean_path(args["path"])
        data = str(args["content"]).encode("utf-8")
        _check_build_file(path)
        _check_package_json(path, data)
        try:
            current: bytes | None = self.workspace.read(self.app_id, path)
        except FileMissing:
            current = None
        if current == data:
            return _Done(
                text=f"{path} already has this content; nothing changed",
                summary=f"{path} unchanged",
            )
        self._guarded(path, current, data)
        self.workspace.write(self.app_id, path, data)
        verb = "created" if current is None else "replaced"
        return _Done(
            text=f"{verb} {path} ({len(data)} bytes)",
            summary=f"{verb} {path} ({len(data)} bytes)",
            changed=True,
        )

    def _modify_file(self, args: dict[str, Any]) -> _Done:
        path = clean_path(args["path"])
        _check_build_file(path)  # before reading: the same answer whether or not it exists
        old, new = args["old"], args["new"]
        if old == "":
            raise _Failed(
                f"old text is empty; give the exact text to replace in {path} "
                "(use write_file to create or rewrite a file)"
            )
        text = _text(path, self.workspace.read(self.app_id, path))
        count = text.count(old)
        if count == 0:
            raise _Failed(f"old text not found in {path}")
        if count > 1:
            raise _Failed(f"old text occurs {count} times in {path}; include more context")
        if old == new:
            return _Done(
                text=f"old and new text are the same; {path} unchanged", summary=f"{path} unchanged"
            )
        changed = text.replace(old, new, 1).encode("utf-8")
        _check_package_json(path, changed)
        self._guarded(path, text.encode("utf-8"), changed)
        self.workspace.write(self.app_id, path, changed)
        added, removed = _changed_chars(old, new)
        summary = f"modified {path} (+{added} −{removed} chars)"
        return _Done(text=summary, summary=summary, changed=True)

    def _guarded(self, path: str, current: bytes | None, data: bytes) -> None:
        refused = self.guard(path, current, data) if self.guard is not None else None
        if refused is not None:
            raise _Kept(refused)

    def _delete_file(self, args: dict[str, Any]) -> _Done:
        path = clean_path(args["path"])
        if path in self.protected:
            raise _Failed(f"{path} is protected and cannot be deleted")
        _check_assets(path)
        self.workspace.delete(self.app_id, path)
        return _Done(text=f"deleted {path}", summary=f"deleted {path}", changed=True)

    def _list_assets(self, args: dict[str, Any]) -> _Done:
        kind = self.kind
        found = [f for f in self.workspace.list(self.app_id) if assets.is_asset_file(kind, f.path)]
        lines = []
        for f in found:
            seen = describe(self.workspace.read(self.app_id, f.path))
            what = f"{seen[0]}, {seen[1]}×{seen[2]} px" if seen else "not a readable image"
            lines.append(f"{f.path} ({what}, {f.size} bytes): {assets.url(kind, f.path)}")
        if not lines:
            text = f"the user has uploaded no images ({assets.folder(kind)} is empty)"
            return _Done(text=text, summary="listed the assets (none)")
        count = len(lines)
        if kind is CodeGenType.VUE_PROJECT:
            lines.append(
                "In a template, bind the URL as a string: <img :src=\"'assets/NAME'\" ...> "
                "(a plain src would be bundled as a module and fail the build)."
            )
        return _Done(text="\n".join(lines), summary=f"listed the assets ({count})")

    def _add_check(self, args: dict[str, Any]) -> _Done:
        assert self.checks is not None
        try:
            check = parse_check(args)
        except CheckInvalid as exc:
            raise _Failed(f"check refused, nothing was added: {exc.message}") from None
        try:
            stored = self.checks.add(self.app_id, check, self.turn)
        except CheckInvalid as exc:
            raise _Failed(f"check refused, nothing was added: {exc.message}") from None
        text = f"added check {stored.id}: {check.description}"
        return _Done(
            text=text + " (it runs in a browser once the preview is built)",
            summary=text,
            suite=True,
        )

    def _retire_check(self, args: dict[str, Any]) -> _Done:
        assert self.checks is not None
        try:
            stored = self.checks.retire(self.app_id, args["id"], args["reason"], self.turn)
        except CheckInvalid as exc:
            raise _Failed(f"not retired: {exc.message}") from None
        text = f"retired check {stored.id}: {stored.retired}"
        return _Done(text=text, summary=text, suite=True)

    def _list_checks(self, args: dict[str, Any]) -> _Done:
        assert self.checks is not None
        suite = self.checks.list(self.app_id)
        if not suite:
            none = "the app has no acceptance checks"
            return _Done(text=none, summary="listed the checks (none)")
        runs = self.checks.runs(self.app_id, limit=1)
        verdicts = {r.check_id: r.status for r in runs[0].results} if runs else {}
        lines = []
        for c in suite:
            state = f"retired: {c.retired}" if c.retired else verdicts.get(c.id, "not run yet")
            lines.append(f"{c.id} ({state}): {c.check.description}")
        if runs:
            lines.append(f"(the newest run: turn {runs[0].turn}, round {runs[0].round})")
        return _Done(text="\n".join(lines), summary=f"listed the checks ({len(suite)})")

    def _exit(self, args: dict[str, Any]) -> _Done:
        return _Done(text="exit", summary="finished", exit=True)


def _check_build_file(path: str) -> None:
    """The build configuration is the platform's (docs/security.md): vite.config.js and the
    lockfile cannot be written, nor any other file a build tool would run or read as its
    configuration (postcss.config.js, tsconfig.json, .env, ...: ``toolchain.config_refusal``),
    nor anything the download leaves out (``export_rules.refusal``: .npmrc, .vscode/,
    bunfig.toml, src/x.cjs...), so what the model writes is what the builder gets.
    Deleting one is allowed: no build or download carries it either way."""
    _check_assets(path)
    if path in toolchain.PLATFORM_OWNED:
        raise _Failed(
            f"{path} is the platform's and cannot be written: every build uses the "
            "platform's vite.config.js (base './', the Vue plugin) and lockfile. "
            "Choose dependencies in package.json instead (allowed: "
            f"{toolchain.allowed_list()})."
        )
    why = toolchain.config_refusal(path)
    if why is not None:
        raise _Failed(
            f"{path} is build configuration, which the platform owns: no build runs or reads "
            f"a project's own, so it cannot be written. Instead: {why}. Nothing was written."
        )
    why = export_rules.refusal(CodeGenType.VUE_PROJECT, path)
    if why is not None:
        raise _Failed(
            f"{path} cannot be part of the app, which holds only what the platform builds "
            f"from and publishes (the download carries nothing else): {why}. "
            "Nothing was written."
        )


def _check_assets(path: str) -> None:
    """The user's uploaded images are theirs: no tool writes, changes or deletes one."""
    why = assets.write_refusal(CodeGenType.VUE_PROJECT, path)
    if why is not None:
        raise _Failed(f"{path} cannot be written or deleted: {why}. Nothing changed.")


def _check_package_json(path: str, data: bytes) -> None:
    """package.json may be written only with allowed dependencies and the platform's scripts;
    the data model (zerocode.data.json) only as a valid one (zerocode/data/model.py)."""
    refused = None
    if path == toolchain.PACKAGE_JSON:
        refused = toolchain.check_package_json(data)
    elif path == data_model.DATA_MODEL:
        refused = data_model.refusal(data)
    if refused is not None:
        raise _Failed(f"{refused}. Nothing was written.")


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments checked against its schema; empty text counts as ``{}``."""
    if not call.arguments.strip():
        args: dict[str, Any] | None = {}
    else:
        args = call.parsed_arguments()
    if args is None:
        raise _Failed(
            f"arguments of {call.name} must be a JSON object, got {_clip(call.arguments)!r}"
        )
    schema = SCHEMAS[call.name]
    missing = [k for k in schema["required"] if k not in args]
    if missing:
        raise _Failed(f"{call.name} needs " + ", ".join(repr(k) for k in missing))
    for key, spec in schema["properties"].items():
        want = list if spec["type"] == "array" else str
        if key in args and not isinstance(args[key], want):
            raise _Failed(
                f"{call.name}: {key!r} must be {'a list' if want is list else 'a string'}, "
                f"got {type(args[key]).__name__}"
            )
    return args


def _text(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Failed(f"{path} is not a UTF-8 text file ({len(data)} bytes)") from None


def _changed_chars(old: str, new: str) -> tuple[int, int]:
    """Characters inserted and removed, ignoring the prefix and suffix old and new share."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while (
        end < min(len(old), len(new)) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]
    ):
        end += 1
    return len(new) - start - end, len(old) - start - end


def _display_path(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return clean_path(raw)
    except PathRefused:  # shown as written, but a bidi or invisible character escaped
        shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in raw)
        return _one_line(_clip(shown))


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())
