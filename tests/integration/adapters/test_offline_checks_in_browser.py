"""The offline model's acceptance checks (issue 25) replayed in real headless Chromium against
the files it generated, served from a local origin: the checks of an unflawed creation pass;
those of a potemkin creation (a button that does nothing) fail with evidence, the repaired
answer's pass, a stubborn model's repairs keep failing; an edit's check passes on the edited
page while the check it retired would have failed there; a regressing edit ([[flaw=regress]])
fails the creation's counter check while its own heading check passes, and its repair passes
both. The Vue project is built with the platform's own builder (real Vite) when npm is
installed."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import shared_loop
from tests.integration.adapters.test_chromium_check import Site
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.local.chromium_acceptance import CheckOutcome, run_check
from zerocode.adapters.model.offline.script import answer
from zerocode.adapters.model.offline.vue import HOME_VIEW
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.engine import prompts
from zerocode.engine.acceptance import parse_check
from zerocode.engine.repair import REPAIR_MARK
from zerocode.publishing.builds import BuildJob, new_build_id

TOOLS = ["read_dir", "read_file", "write_file", "modify_file", "exit", "add_check", "retire_check"]
ACCEPTANCE_FAILS = (
    f"{REPAIR_MARK} 1/2: acceptance checks fail]\n"
    "1 of 2 acceptance checks fails on the new preview:\n"
    '- c2 "Clicking “Try it” twice shows 2 clicks": expect[0]: expected the text of css '
    "'#status' equal to 'Clicked 2 times.', found 'Not clicked yet.'\n\n"
    "Fix the code so that these checks pass."
)


def conversation(kind: str, *turns: str) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": prompts.load(kind)}]
    return messages + [{"role": "user", "content": t} for t in turns]


def checks_of(text: str) -> dict[str, Any]:
    found = re.search(r"```checks\n(.*?)\n```", text, re.DOTALL)
    assert found is not None, text
    body: dict[str, Any] = json.loads(found.group(1))
    return body


def site_of(text: str) -> dict[str, str]:
    """The answer's files, by the path a browser asks for."""
    blocks = dict(re.findall(r"```(html|css|javascript)\n(.*?)\n```", text, re.DOTALL))
    paths = {"html": "/", "css": "/style.css", "javascript": "/script.js"}
    return {paths[lang]: body for lang, body in blocks.items()}


def run(
    checks: list[dict[str, Any]], pages: dict[str, str], directory: Path | None = None
) -> list[CheckOutcome]:
    """Each check run, in order, against one origin serving ``pages`` (or ``directory``), in
    the process's one boxed Chromium (tests/shared_loop.py), a fresh confined context each."""
    executable = chromium_or_skip()
    site = Site(pages, directory=directory)
    site.start()

    async def go() -> list[CheckOutcome]:
        browser = await shared_loop.browser(executable)
        return [
            await run_check(browser, site.url, parse_check(c), action_ms=1500, expect_ms=1500)
            for c in checks
        ]

    try:
        return shared_loop.run(go())
    finally:
        site.stop()


def statuses(outcomes: list[CheckOutcome]) -> list[str]:
    return [o.status for o in outcomes]


# -- html and multi_file ---------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["A recipe book", "做一个食谱网页"])
@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_creations_checks_pass_on_the_page_it_wrote(kind: str, prompt: str) -> None:
    text = answer(conversation(kind, prompt)).text
    checks = checks_of(text)["add"]
    assert len(checks) == 2
    assert statuses(run(checks, site_of(text))) == ["passed", "passed"]


def test_a_chinese_potemkin_button_fails_its_check_in_chinese() -> None:
    first = answer(conversation("html", "做一个食谱网页 [[flaw=potemkin]]")).text
    heading, counter = run(checks_of(first)["add"], site_of(first))
    assert heading.status == "passed"
    assert counter.status == "failed" and counter.evidence is not None
    assert counter.evidence.expected == "the text of css '#status' equal to '已点击 2 次。'"
    assert counter.evidence.actual == "'还没有点击。'"


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_potemkin_button_fails_its_check_until_repaired(kind: str) -> None:
    messages = conversation(kind, "A recipe book [[flaw=potemkin]]")
    first = answer(messages).text
    checks = checks_of(first)["add"]
    heading, counter = run(checks, site_of(first))
    assert heading.status == "passed"  # it looks right
    assert counter.status == "failed" and counter.evidence is not None
    assert counter.evidence.where == "expect[0]"
    assert counter.evidence.expected == "the text of css '#status' equal to 'Clicked 2 times.'"
    assert counter.evidence.actual == "'Not clicked yet.'"
    assert counter.evidence.screenshot is not None
    messages += [
        {"role": "assistant", "content": first},
        {"role": "user", "content": ACCEPTANCE_FAILS},
    ]
    fixed = answer(messages).text
    assert "```checks" not in fixed
    assert statuses(run(checks, site_of(fixed))) == ["passed", "passed"]


def test_a_stubborn_potemkin_page_fails_its_check_in_every_repair() -> None:
    messages = conversation("multi_file", "A recipe book [[flaw=potemkin-stubborn]]")
    first = answer(messages).text
    counter = checks_of(first)["add"][1]
    said = first
    pages = []
    for attempt in (1, 2):
        feedback = ACCEPTANCE_FAILS.replace("1/2", f"{attempt}/3")
        messages += [{"role": "assistant", "content": said}, {"role": "user", "content": feedback}]
        said = answer(messages).text
        pages.append(site_of(said))
    outcomes = [run([counter], p)[0] for p in [site_of(first), *pages]]
    assert statuses(outcomes) == ["failed"] * 3
    assert all(o.evidence is not None and o.evidence.where == "expect[0]" for o in outcomes)


def test_a_title_edit_states_a_check_that_passes_and_retires_one_that_would_not() -> None:
    messages = conversation("html", "A recipe book")
    created = answer(messages).text
    messages += [
        {"role": "assistant", "content": created},
        {
            "role": "user",
            "content": "[zerocode checks: what your last answer's checks block did]\n"
            "- added c1: The heading reads “Recipe Book”\n"
            "- added c2: Clicking “Try it” twice shows 2 clicks",
        },
        {"role": "user", "content": 'Change the title to "Soup Kitchen"'},
    ]
    changed = answer(messages).text
    block = checks_of(changed)
    assert [r["id"] for r in block["retire"]] == ["c1"]
    old_heading, counter = checks_of(created)["add"]
    outcomes = run([*block["add"], counter, old_heading], site_of(changed))
    assert statuses(outcomes) == ["passed", "passed", "failed"]  # c1 was rightly retired


# -- vue_project -------------------------------------------------------------------------------


def vue_turn(request: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """A Vue creation's files and the checks it added, its tool calls run as the engine would."""
    messages = conversation("vue_project", request)
    files: dict[str, str] = {}
    checks: list[dict[str, Any]] = []
    for step in range(5):
        script = answer(messages, tools=TOOLS)
        if not script.calls:
            return files, checks
        calls = [
            {
                "id": f"c{step}-{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(script.calls)
        ]
        messages.append({"role": "assistant", "content": script.text, "tool_calls": calls})
        for call, c in zip(calls, script.calls, strict=True):
            args = json.loads(c.arguments)
            if c.name == "write_file":
                files[args["path"]] = args["content"]
                said = f"created {args['path']}"
            else:
                assert c.name == "add_check"
                checks.append(args)
                said = f"added check c{len(checks)}: {args['description']}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": said})
    raise AssertionError("the tool loop did not end")


def built(local_builder: Any, files: dict[str, str]) -> Path:
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of({p: c.encode() for p, c in files.items()}),
    )
    outcome = asyncio.run(local_builder.build(job))
    assert outcome.ok and outcome.output, outcome.log_tail
    return Path(outcome.output)


def passing_vue_turn(
    local_builder: Any, request: str, described: list[str]
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """A Vue creation whose checks are ``described`` and pass on its built project."""
    files, checks = vue_turn(request)
    assert [c["description"] for c in checks] == described
    outcomes = run(checks, {}, directory=built(local_builder, files))
    assert statuses(outcomes) == ["passed"] * len(checks), [o.evidence for o in outcomes]
    return files, checks


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_vue_projects_checks_pass_and_its_potemkin_twin_fails_one(local_builder: Any) -> None:
    files, checks = passing_vue_turn(
        local_builder,
        "A recipe book with vue router",
        [
            "The heading reads “Recipe Book”",
            "Clicking “Try it” twice shows 2 clicks",
            "The “About” link opens the page headed “About”",
        ],
    )
    flawed, flawed_checks = vue_turn("A recipe book with vue router [[flaw=potemkin]]")
    assert flawed_checks == checks and flawed[HOME_VIEW] != files[HOME_VIEW]
    assert {p: c for p, c in flawed.items() if p != HOME_VIEW} == {
        p: c for p, c in files.items() if p != HOME_VIEW
    }
    outcomes = run(checks, {}, directory=built(local_builder, flawed))
    assert statuses(outcomes) == ["passed", "failed", "passed"]
    evidence = outcomes[1].evidence
    assert evidence is not None and evidence.where == "expect[0]"
    assert (
        evidence.expected == "text 'Clicked 2 times.' visible" and evidence.actual == "not visible"
    )
    # the repair restores exactly the unflawed view (tests/unit/adapters/test_offline_checks.py),
    # whose build passes every check above


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_chinese_vue_projects_checks_pass(local_builder: Any) -> None:
    passing_vue_turn(
        local_builder,
        "用 Vue 做一个食谱本，带路由",
        [
            "The heading reads “食谱本”",
            "Clicking “试一试” twice shows 2 clicks",
            "The “关于” link opens the page headed “关于”",
        ],
    )


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_regressing_edit_fails_the_earlier_counter_check_until_repaired(kind: str) -> None:
    messages = conversation(kind, "A recipe book")
    created = answer(messages).text
    _, counter = checks_of(created)["add"]
    messages += [
        {"role": "assistant", "content": created},
        {
            "role": "user",
            "content": "[zerocode checks: what your last answer's checks block did]\n"
            "- added c1: The heading reads “Recipe Book”\n"
            "- added c2: Clicking “Try it” twice shows 2 clicks",
        },
        {"role": "user", "content": 'Change the title to "Owl Hall" [[flaw=regress]]'},
    ]
    changed = answer(messages).text
    block = checks_of(changed)
    assert [r["id"] for r in block["retire"]] == ["c1"]
    (heading,) = block["add"]
    assert heading["expect"] == [{"text": {"css": "h1"}, "equals": "Owl Hall"}]
    new, old = run([heading, counter], site_of(changed))
    assert new.status == "passed"  # the change asked for is there
    assert old.status == "failed" and old.evidence is not None  # the regression is caught
    assert old.evidence.where == "expect[0]" and old.evidence.actual == "'Not clicked yet.'"
    messages += [
        {"role": "assistant", "content": changed},
        {"role": "user", "content": ACCEPTANCE_FAILS},
    ]
    fixed = answer(messages).text
    assert "```checks" not in fixed  # the counter check stands: nothing retired
    assert statuses(run([heading, counter], site_of(fixed))) == ["passed", "passed"]
