"""``zerocode eval``: how often the configured model's apps work, first try and after repair.

A fixed suite of app prompts (English and Chinese; html, multi-file and Vue; creations and
element edits; apps that keep data: a guestbook, notes with sign-in) runs through the real
engine on a throw-away local platform: the real preview builds (Vue in the sandbox), the
runtime check and the acceptance checks in Chromium when it is installed, and the repair
loop. With no model endpoint configured it
runs against the offline model's flawed mode (seeded, realistic first-try mistakes), so the
suite and the repair loop run in CI; with an endpoint it measures that model. Prints a
table (acceptance: how often the model's own checks held, first try and at the end);
``--json`` writes the figures.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.events import BuildEvent, CheckEvent, DoneEvent, ErrorEvent, RepairEvent

OWNER = "eval"


@dataclass(frozen=True, kw_only=True)
class Case:
    name: str
    mode: CodeGenType
    prompt: str
    edit: str | None = None  # an element edit after the creation: the new heading text


SUITE: tuple[Case, ...] = (
    Case(
        name="html-en",
        mode=CodeGenType.HTML,
        prompt="A tip calculator with a bill field and a tip slider",
    ),
    Case(name="html-zh", mode=CodeGenType.HTML, prompt="做一个番茄钟计时器页面，有开始和暂停按钮"),
    Case(name="html-edit-en", mode=CodeGenType.HTML, prompt="A page about owls", edit="Night Owls"),
    Case(
        name="html-edit-zh", mode=CodeGenType.HTML, prompt="一个介绍熊猫的页面", edit="可爱的熊猫"
    ),
    Case(
        name="multi-en",
        mode=CodeGenType.MULTI_FILE,
        prompt="A landing page for a bakery with separate CSS",
    ),
    Case(name="multi-zh", mode=CodeGenType.MULTI_FILE, prompt="一个摄影师的作品集网站，多文件"),
    Case(name="vue-en", mode=CodeGenType.VUE_PROJECT, prompt="A Vue todo app with an about page"),
    Case(name="vue-zh", mode=CodeGenType.VUE_PROJECT, prompt="做一个待办事项的Vue应用，有关于页面"),
    Case(
        name="vue-edit-en",
        mode=CodeGenType.VUE_PROJECT,
        prompt="A Vue habit tracker",
        edit="Daily Habits",
    ),
    Case(
        name="vue-edit-zh",
        mode=CodeGenType.VUE_PROJECT,
        prompt="做一个记账本Vue应用",
        edit="我的账本",
    ),
    # Apps that keep data (docs/data.md): their checks write, reload and read back.
    Case(name="data-html-en", mode=CodeGenType.HTML, prompt="A guestbook for a bakery"),
    Case(
        name="data-vue-en",
        mode=CodeGenType.VUE_PROJECT,
        prompt="A Vue notes app where each user keeps their own notes",
    ),
)


@dataclass(kw_only=True)
class Result:
    case: str
    turn: str  # "create" or "edit"
    status: str  # the turn's done status
    first_try: bool  # the first preview stood with no repair
    repairs: int
    builds: int
    tokens_in: int
    tokens_out: int
    seconds: float
    error: str = ""
    # Acceptance checks: the newest run's tally, and whether the first run had a failure.
    checks: dict[str, int] | None = None
    checks_failed_first: bool = False

    @property
    def checked(self) -> bool:
        """The suite ran in a browser in this turn (not only "not run")."""
        return self.checks is not None and self.checks["passed"] + self.checks["failed"] > 0

    @property
    def accepted(self) -> bool:
        """Every check of the app passed at the turn's end."""
        c = self.checks
        return c is not None and c["failed"] == 0 and c["notRun"] == 0 and c["passed"] > 0


async def _turn(
    p: Platform, app: App, case: Case, kind: str, message: str, element: dict[str, Any] | None
) -> Result:
    started = time.monotonic()
    run = p.engine.start(app, message, element)
    repairs = builds = 0
    status, error = "interrupted", ""
    checks: dict[str, int] | None = None
    failed_first = False
    async for event in run.events():
        if isinstance(event, RepairEvent):
            repairs += 1
        elif isinstance(event, BuildEvent) and event.status != "running":
            builds += 1
        elif isinstance(event, CheckEvent):
            failed_first |= event.round == 0 and event.status == "failed"
        elif isinstance(event, ErrorEvent):
            error = error or event.message
        elif isinstance(event, DoneEvent):
            status, checks = event.status, event.checks
    return Result(
        case=case.name,
        turn=kind,
        status=status,
        first_try=status == "succeeded" and repairs == 0,
        repairs=repairs,
        builds=builds,
        tokens_in=run.usage[0],
        tokens_out=run.usage[1],
        seconds=round(time.monotonic() - started, 2),
        error=error[:160],
        checks=checks,
        checks_failed_first=failed_first,
    )


def _heading(p: Platform, app: App) -> str | None:
    """The first heading's text in the app's files: what a user would click to edit."""
    for file in p.workspace.list(app.id):
        if not file.path.endswith((".html", ".vue")):
            continue
        text = p.workspace.read(app.id, file.path).decode(errors="replace")
        found = re.search(r"<h1[^>]*>\s*([^<{]+?)\s*</h1>", text)
        if found:
            return found.group(1)
    return None


async def run_suite(p: Platform, cases: tuple[Case, ...] = SUITE) -> list[Result]:
    """Each case on a new app, with the sites origin served meanwhile (the runtime check
    loads each preview from it, as a visitor would)."""
    import uvicorn

    from zerocode.http.sites import create_sites_app

    sites = uvicorn.Server(
        uvicorn.Config(
            create_sites_app(p),
            host=p.settings.host,
            port=p.settings.sites_port,
            log_config=None,
            access_log=False,
        )
    )
    serving = asyncio.create_task(sites.serve())
    # uvicorn's Server says it started only by a flag: nothing to await but time.
    while not sites.started and not serving.done():  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    try:
        return await _cases(p, cases)
    finally:
        sites.should_exit = True
        await serving


async def _cases(p: Platform, cases: tuple[Case, ...]) -> list[Result]:
    results = []
    for case in cases:
        app = await p.create_app(OWNER, case.prompt, case.mode)
        results.append(await _turn(p, app, case, "create", case.prompt, None))
        if case.edit is None:
            continue
        heading = _heading(p, app)
        element = {"tag": "h1", "text": heading} if heading else None
        edit = f'Change this heading to "{case.edit}"' if element else f'Title: "{case.edit}"'
        results.append(await _turn(p, app, case, "edit", edit, element))
    return results


def table(results: list[Result]) -> str:
    head = (
        "case          turn    status     first  repairs  builds  checks ✓/✗/–  tokens in/out     s"
    )
    rows = [head, "-" * len(head)]
    for r in results:
        c = r.checks
        shown = f"{c['passed']}/{c['failed']}/{c['notRun']}" if c else "-"
        rows.append(
            f"{r.case:<13} {r.turn:<7} {r.status:<10} {'yes' if r.first_try else 'no':<6} "
            f"{r.repairs:>7}  {r.builds:>6}  {shown:<13} "
            f"{r.tokens_in:>7}/{r.tokens_out:<7} {r.seconds:>5.1f}"
        )
    rows.append("")
    rows.append(summary_line(results))
    return "\n".join(rows)


def summary(results: list[Result]) -> dict[str, Any]:
    n = len(results) or 1
    green = [r for r in results if r.status == "succeeded"]
    repaired = [r for r in green if r.repairs]
    checked = [r for r in results if r.checked]
    return {
        # Of the turns whose acceptance checks ran in a browser: no check failed on the
        # first preview, and every check passed at the turn's end.
        "checked_turns": len(checked),
        "acceptance_first_try": (
            sum(not r.checks_failed_first for r in checked) / len(checked) if checked else None
        ),
        "acceptance_final": (sum(r.accepted for r in checked) / len(checked) if checked else None),
        "turns": len(results),
        "first_try_success": sum(r.first_try for r in results) / n,
        "success_after_repair": len(green) / n,
        "repaired_turns": len(repaired),
        "mean_rounds_to_green": (
            sum(r.repairs for r in repaired) / len(repaired) if repaired else 0.0
        ),
        "tokens_in": sum(r.tokens_in for r in results),
        "tokens_out": sum(r.tokens_out for r in results),
        "seconds": round(sum(r.seconds for r in results), 1),
    }


def summary_line(results: list[Result]) -> str:
    s = summary(results)
    return (
        f"first-try success {s['first_try_success']:.0%}, success after repair "
        f"{s['success_after_repair']:.0%} ({s['repaired_turns']} repaired, "
        f"{s['mean_rounds_to_green']:.1f} rounds to green on average), "
        f"tokens {s['tokens_in']}/{s['tokens_out']}, {s['seconds']} s; "
        + (
            f"acceptance checks met {s['acceptance_first_try']:.0%} first try, "
            f"{s['acceptance_final']:.0%} at the end ({s['checked_turns']} turns checked)"
            if s["checked_turns"]
            else "no acceptance checks ran in a browser"
        )
    )


def run_eval(settings: Settings, json_path: Path | None = None) -> int:
    """Run the suite on a throw-away data directory; 0 when every turn ended."""
    updates: dict[str, Any] = {
        "rate_chat": 10_000,
        "rate_create": 10_000,
        "sites_port": _free_port(),
        "sites_url": None,
        "sites_domain": None,
    }
    if settings.model_base_url is None:
        updates["offline_model"] = "flawed"
    with tempfile.TemporaryDirectory(prefix="zerocode-eval-") as tmp:
        updates["data_dir"] = Path(tmp)
        if settings.toolchain_dir is None:  # share the installed toolchain, not reinstall it
            updates["toolchain_dir"] = settings.data_dir / "toolchain"
        p = wiring.platform(settings.model_copy(update=updates))
        print(f"zerocode eval: {len(SUITE)} cases against {p.model.description}", flush=True)
        results = asyncio.run(run_suite(p))
    print(table(results))
    if json_path is not None:
        json_path.write_text(
            json.dumps(
                {
                    "model": p.model.description,
                    "summary": summary(results),
                    "results": [asdict(r) for r in results],
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    return 0 if all(r.status != "interrupted" for r in results) else 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
