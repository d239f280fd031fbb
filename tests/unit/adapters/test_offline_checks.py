"""The offline model's acceptance checks (issue 25): what it states with each creation and
each edit, how it retires the checks an edit makes wrong, the potemkin flaws (a button
that does nothing while the checks say it counts), and the regress flaw (a change that breaks
the counter an earlier check asserts, repaired without retiring that check).

The turns run against a small stand-in for the engine's side of the protocol: the Vue
agent's tools over a dict of files and a suite numbering checks ``c1, c2, …`` (results worded
as engine/tools.py words them), and for one-shot answers the ```checks block applied and
told back in a note (engine/suite_step.py's wording). Every check goes through the real
:func:`parse_check`. The browser side is tests/integration/adapters/
test_offline_checks_in_browser.py.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from zerocode.adapters.model.offline.base import Script
from zerocode.adapters.model.offline.flaws import POTEMKIN_CLAIM, SEEDED, VUE_FIXED
from zerocode.adapters.model.offline.pages import creation_files
from zerocode.adapters.model.offline.regress import PAGE_REPAIRED, VUE_REPAIRED, detached
from zerocode.adapters.model.offline.script import NOTED, answer
from zerocode.adapters.model.offline.vue import HOME_VIEW, vue_project_files
from zerocode.engine import prompts
from zerocode.engine.acceptance import CheckInvalid, parse_check
from zerocode.engine.repair import REPAIR_MARK

TOOLS = [
    "read_dir",
    "read_file",
    "write_file",
    "modify_file",
    "delete_file",
    "exit",
    "add_check",
    "retire_check",
]
NOTE_HEAD = "[zerocode checks: what your last answer's checks block did]"
MAX_TURN_CALLS = 20

HEADING = {
    "description": "The heading reads “Recipe Book”",
    "steps": [],
    "expect": [{"text": {"css": "h1"}, "equals": "Recipe Book"}],
}
TRY_IT = {"click": {"role": "button", "name": "Try it"}}
PAGE_COUNTER = {
    "description": "Clicking “Try it” twice shows 2 clicks",
    "steps": [TRY_IT, TRY_IT],
    "expect": [
        {"text": {"css": "#status"}, "equals": "Clicked 2 times."},
        {"noConsoleErrors": True},
    ],
}
VUE_COUNTER = {
    **PAGE_COUNTER,
    "expect": [{"visible": {"text": "Clicked 2 times."}}, {"noConsoleErrors": True}],
}
VUE_ABOUT = {
    "description": "The “About” link opens the page headed “About”",
    "steps": [{"click": {"role": "link", "name": "About"}}],
    "expect": [{"text": {"css": "h1"}, "equals": "About"}, {"noConsoleErrors": True}],
}


@dataclass
class App:
    """The platform's side of one app: its files, its suite, the conversation so far."""

    kind: str
    files: dict[str, str] = field(default_factory=dict)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # live, by id
    retired: dict[str, str] = field(default_factory=dict)  # id → reason
    numbered: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0  # tool calls of the newest turn
    tools: list[str] = field(default_factory=lambda: list(TOOLS))

    def __post_init__(self) -> None:
        self.messages = [{"role": "system", "content": prompts.load(self.kind)}]

    # -- the suite

    def add(self, raw: object) -> str:
        check = parse_check(raw)
        self.numbered += 1
        found = f"c{self.numbered}"
        self.checks[found] = check.to_json()
        return found

    def retire(self, check_id: str, reason: str) -> None:
        if check_id not in self.checks:
            raise CheckInvalid(f"no live check {check_id}")
        del self.checks[check_id]
        self.retired[check_id] = reason

    # -- a turn

    def turn(self, request: str) -> str:
        """The request answered to its end (a Vue tool loop, or one answer and its note)."""
        self.messages.append({"role": "user", "content": request})
        self.calls = 0
        return self.answer_round()

    def answer_round(self) -> str:
        if self.kind == "vue_project":
            for _ in range(10):
                script = answer(self.messages, tools=self.tools)
                if not script.calls:
                    self.messages.append({"role": "assistant", "content": script.text})
                    return script.text
                self.run_step(script)
            raise AssertionError("the tool loop did not end")
        script = answer(self.messages)
        assert not script.calls
        self.messages.append({"role": "assistant", "content": script.text})
        self.files.update(page_files(script.text, multi=self.kind == "multi_file"))
        return script.text

    def note(self) -> None:
        """After a one-shot turn (its repairs included): apply its answers' checks blocks and
        tell the model in a note, a turn of its own."""
        request = max(
            i
            for i, m in enumerate(self.messages)
            if m["role"] == "user" and not m["content"].startswith(REPAIR_MARK)
        )
        lines = []
        for answered in [m for m in self.messages[request:] if m["role"] == "assistant"]:
            block = checks_of(answered["content"])
            if block is None:
                continue
            for i, raw in enumerate(block.get("add", []), start=1):
                try:
                    lines.append(f"- added {self.add(raw)}: {raw['description']}")
                except CheckInvalid as exc:
                    lines.append(f"- refused check {i}: {exc.message}")
            for item in block.get("retire", []):
                self.retire(item["id"], item["reason"])
                lines.append(f"- retired {item['id']}: {item['reason']}")
        if lines:
            self.messages.append({"role": "user", "content": NOTE_HEAD + "\n" + "\n".join(lines)})

    def page_turn(self, request: str) -> str:
        text = self.turn(request)
        self.note()
        return text

    def repair(self, feedback: str) -> str:
        self.messages.append({"role": "user", "content": feedback})
        return self.answer_round()

    def run_step(self, script: Script) -> None:
        step = len(self.messages)
        calls = [
            {
                "id": f"call{step}-{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(script.calls)
        ]
        self.messages.append(
            {"role": "assistant", "content": script.text or None, "tool_calls": calls}
        )
        for call, c in zip(calls, script.calls, strict=True):
            self.calls += 1
            assert self.calls <= MAX_TURN_CALLS
            self.messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": self.tool(c.name, c.arguments),
                }
            )

    def tool(self, name: str, arguments: str) -> str:
        args = json.loads(arguments)
        if name == "read_dir":
            return "\n".join(
                f"{p} ({len(c.encode())} bytes)" for p, c in sorted(self.files.items())
            )
        if name == "read_file":
            return self.files.get(args["path"], f"ERROR: no file {args['path']}")
        if name == "write_file":
            verb = "replaced" if args["path"] in self.files else "created"
            self.files[args["path"]] = args["content"]
            return f"{verb} {args['path']} ({len(args['content'].encode())} bytes)"
        if name == "modify_file":
            text = self.files.get(args["path"], "")
            if text.count(args["old"]) != 1:
                return f"ERROR: old text not found in {args['path']}"
            self.files[args["path"]] = text.replace(args["old"], args["new"], 1)
            return f"modified {args['path']} (+1 −1 chars)"
        if name == "add_check":
            try:
                found = self.add(args)
            except CheckInvalid as exc:
                return f"ERROR: check refused, nothing was added: {exc.message}"
            said = f"added check {found}: {args['description']}"
            return said + " (it runs in a browser once the preview is built)"
        if name == "retire_check":
            try:
                self.retire(args["id"], args["reason"])
            except CheckInvalid as exc:
                return f"ERROR: not retired: {exc.message}"
            return f"retired check {args['id']}: {args['reason']}"
        return f"ERROR: unknown tool {name!r}"


def step_names(messages: list[dict[str, Any]]) -> list[list[str]]:
    """The tools each assistant step among ``messages`` called."""
    return [
        [c["function"]["name"] for c in m["tool_calls"]] for m in messages if m.get("tool_calls")
    ]


def checks_of(text: str) -> dict[str, Any] | None:
    found = re.search(r"```checks\n(.*?)\n```", text, re.DOTALL)
    return None if found is None else json.loads(found.group(1))


def page_files(text: str, *, multi: bool) -> dict[str, str]:
    blocks = dict(re.findall(r"```(html|css|javascript)\n(.*?)\n```", text, re.DOTALL))
    names = {"html": "index.html", "css": "style.css", "javascript": "script.js"}
    return {names[lang]: body for lang, body in blocks.items() if multi or lang == "html"}


def acceptance_feedback(app: App, failing: dict[str, str], attempt: int = 1) -> str:
    """The platform's acceptance repair message (engine/repair.py's wording)."""
    lines = [f'- {i} "{app.checks[i]["description"]}": {why}' for i, why in failing.items()]
    return (
        f"{REPAIR_MARK} {attempt}/2: acceptance checks fail]\n"
        f"{len(failing)} of {len(app.checks)} acceptance checks fail on the new preview:\n"
        + "\n".join(lines)
        + "\n\nFix the code so that these checks pass. If the user asked for a change that "
        "makes a check wrong, retire it (retire_check) and say why."
    )


VUE_COUNTER_FAILS = "expect[0]: expected the text 'Clicked 2 times.' visible, found not visible"
COUNTER_FAILS = (
    "expect[0]: expected the text of css '#status' equal to 'Clicked 2 times.', "
    "found 'Not clicked yet.'"
)


# -- creations -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_page_creation_states_its_heading_and_its_counting_button(kind: str) -> None:
    app = App(kind)
    text = app.page_turn("A recipe book")
    block = checks_of(text)
    assert block == {"add": [HEADING, PAGE_COUNTER]}
    assert text.index("```checks") > text.rindex("```html" if kind == "html" else "```javascript")
    assert app.checks == {"c1": HEADING, "c2": PAGE_COUNTER}
    # what the checks assert is what the page has
    page = app.files["index.html"]
    assert (
        "<h1>Recipe Book</h1>" in page
        and '<button id="action" type="button">Try it</button>' in page
    )
    script = app.files["script.js" if kind == "multi_file" else "index.html"]
    assert (
        '<p id="status"' in page and "Clicked ${clicks} time${clicks === 1 ? '' : 's'}." in script
    )
    assert app.messages[-1]["content"] == (
        f"{NOTE_HEAD}\n- added c1: The heading reads “Recipe Book”\n"
        "- added c2: Clicking “Try it” twice shows 2 clicks"
    )


def test_a_vue_creation_writes_the_project_then_adds_its_checks() -> None:
    app = App("vue_project")
    text = app.turn("A recipe book with vue router")
    steps = [m for m in app.messages if m.get("tool_calls")]
    names = [[c["function"]["name"] for c in s["tool_calls"]] for s in steps]
    assert names == [["write_file"] * 7, ["add_check"] * 3]
    assert app.calls == 10 <= 18
    assert app.files == vue_project_files("Recipe Book", "A recipe book with vue router")
    heading = {
        **HEADING,
        "description": "The heading reads “Recipe Book”",
        "expect": [{"text": {"css": "h1"}, "equals": "Recipe Book"}],
    }
    assert app.checks == {"c1": heading, "c2": VUE_COUNTER, "c3": VUE_ABOUT}
    assert text.startswith("Created **Recipe Book**: a Vue 3 + Vite project with 7")
    assert text.endswith(
        "Acceptance checks:\n"
        "added check c1: The heading reads “Recipe Book”\n"
        "added check c2: Clicking “Try it” twice shows 2 clicks\n"
        "added check c3: The “About” link opens the page headed “About”"
    )
    home, shell = app.files[HOME_VIEW], app.files["src/App.vue"]
    assert '<button type="button" @click="clicks++">Try it</button>' in home
    assert "<p>Clicked {{ clicks }} time{{ clicks === 1 ? '' : 's' }}.</p>" in home
    assert '<router-link to="/about">About</router-link>' in shell
    assert "<h1>About</h1>" in app.files["src/views/AboutView.vue"]


def test_without_the_check_tools_a_vue_creation_is_as_before() -> None:
    app = App("vue_project", tools=[t for t in TOOLS if "check" not in t])
    text = app.turn("A recipe book with vue router")
    steps = [m for m in app.messages if m.get("tool_calls")]
    assert len(steps) == 1 and app.checks == {}
    assert text.startswith("Created **Recipe Book**") and "check" not in text


def test_a_refused_check_is_reported_as_the_tool_said() -> None:
    app = App("vue_project")
    real = app.tool

    def refusing(name: str, arguments: str) -> str:
        if name == "add_check" and "About" in arguments:
            return "ERROR: check refused, nothing was added: steps[0].click: no"
        return real(name, arguments)

    app.tool = refusing  # type: ignore[method-assign]
    text = app.turn("A vue shop")
    assert text.endswith("add_check failed: check refused, nothing was added: steps[0].click: no")
    assert set(app.checks) == {"c1", "c2"}


# -- edits -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_title_changes_state_the_new_heading_and_retire_the_old_one(kind: str) -> None:
    app = App(kind)
    app.page_turn("A recipe book")
    text = app.page_turn('Change the title to "My Recipes"')
    assert checks_of(text) == {
        "add": [
            {
                "description": "The heading reads “My Recipes”",
                "steps": [],
                "expect": [{"text": {"css": "h1"}, "equals": "My Recipes"}],
            }
        ],
        "retire": [{"id": "c1", "reason": "the user changed “Recipe Book” to “My Recipes”"}],
    }
    assert set(app.checks) == {"c2", "c3"} and "<h1>My Recipes</h1>" in app.files["index.html"]
    # the second change retires the check the first one added: its id came from the note
    text = app.page_turn('Change the title to "Our Recipes"')
    assert checks_of(text)["retire"] == [  # type: ignore[index]
        {"id": "c3", "reason": "the user changed “My Recipes” to “Our Recipes”"}
    ]
    assert set(app.checks) == {"c2", "c4"}
    assert app.checks["c4"]["expect"] == [{"text": {"css": "h1"}, "equals": "Our Recipes"}]


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_check_wait_trigger_adds_a_check_that_holds_the_suite(kind: str) -> None:
    app = App(kind)
    app.page_turn("A recipe book")
    text = app.page_turn('Change the title to "My Recipes" [[check-wait=3000]]')
    added = checks_of(text)["add"]  # type: ignore[index]
    assert added[-1] == {
        "description": "The heading is still there after 3000 ms",
        "steps": [{"wait": 3000}],
        "expect": [{"visible": {"css": "h1"}}],
    }
    assert "<h1>My Recipes</h1>" in app.files["index.html"]  # the trigger is not the title
    # Past the schema's bound (5,000 ms), no check: the trigger is ignored.
    text = app.page_turn('Change the title to "Our Recipes" [[check-wait=9000]]')
    assert all("still there" not in c["description"] for c in checks_of(text)["add"])  # type: ignore[index]


def test_renaming_the_button_restates_the_counting_check() -> None:
    app = App("html")
    app.page_turn("A recipe book")
    element = "\n\n[Selected element] tag: 'button', text: 'Try it'"
    text = app.page_turn('Make it say "Count me"' + element)
    assert checks_of(text) == {
        "add": [
            {
                "description": "Clicking “Count me” twice shows 2 clicks",
                "steps": [{"click": {"role": "button", "name": "Count me"}}] * 2,
                "expect": PAGE_COUNTER["expect"],
            }
        ],
        "retire": [{"id": "c2", "reason": "the user changed “Try it” to “Count me”"}],
    }
    assert ">Count me</button>" in app.files["index.html"]


def test_another_text_is_checked_as_shown() -> None:
    app = App("html")
    app.page_turn("A recipe book")
    element = "\n\n[Selected element] tag: 'p', text: 'Not clicked yet.'"
    text = app.page_turn('Say "Nothing yet"' + element)
    assert checks_of(text) == {
        "add": [
            {
                "description": "The page shows “Nothing yet”",
                "steps": [],
                "expect": [{"visible": {"text": "Nothing yet"}}],
            }
        ]
    }


def test_a_vue_title_change_retires_the_heading_it_replaced_twice_over() -> None:
    app = App("vue_project")
    app.turn("A vue shop")
    text = app.turn('Change the title to "Corner Shop"')
    steps = [m for m in app.messages[-12:] if m.get("tool_calls")]
    assert [c["function"]["name"] for c in steps[-1]["tool_calls"]] == ["retire_check", "add_check"]
    assert app.retired == {"c1": "the user changed “Shop” to “Corner Shop”"}
    assert app.checks["c4"] == {
        "description": "The heading reads “Corner Shop”",
        "steps": [],
        "expect": [{"text": {"css": "h1"}, "equals": "Corner Shop"}],
    }
    assert text.startswith("Changed “Shop” to “Corner Shop” in src/views/HomeView.vue.")
    assert "retired check c1: the user changed" in text and "added check c4:" in text
    app.turn('Change the title to "Big Shop"')
    assert app.retired["c4"] == "the user changed “Corner Shop” to “Big Shop”"
    assert set(app.checks) == {"c2", "c3", "c5"}
    assert "<h1>Big Shop</h1>" in app.files[HOME_VIEW]


def test_the_vue_about_page_edits_restate_the_about_check() -> None:
    app = App("vue_project")
    app.turn("A vue shop")
    element = "\n\n[Selected element] tag: 'h1', text: 'About'"
    app.turn('Call it "Our story"' + element)
    assert "<h1>Our story</h1>" in app.files["src/views/AboutView.vue"]
    assert app.retired == {"c3": "the user changed “About” to “Our story”"}
    assert app.checks["c4"] == {
        "description": "The “About” link opens the page headed “Our story”",
        "steps": [{"click": {"role": "link", "name": "About"}}],
        "expect": [{"text": {"css": "h1"}, "equals": "Our story"}, {"noConsoleErrors": True}],
    }


def test_the_ids_are_read_back_from_the_final_text_when_tool_results_are_gone() -> None:
    app = App("vue_project")
    app.turn("A vue shop")
    # an older turn's tool results elided: only the request and the final text remain
    app.messages = [
        m
        for m in app.messages
        if m["role"] in ("system", "user") or (m["role"] == "assistant" and not m.get("tool_calls"))
    ]
    app.turn('Change the title to "Corner Shop"')
    assert "c1" in app.retired


# -- notes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["html", "multi_file", "vue_project"])
def test_a_note_as_the_newest_message_gets_no_code(kind: str) -> None:
    messages = [
        {"role": "system", "content": prompts.load(kind)},
        {"role": "user", "content": 'A shop called "Nice"'},
        {"role": "assistant", "content": "Here it is."},
        {"role": "user", "content": f'{NOTE_HEAD}\n- added c3: The heading says "My Todos"'},
    ]
    script = answer(messages, tools=TOOLS)
    assert script == Script(NOTED) and "```" not in script.text and not script.calls


def test_a_request_after_a_note_is_answered_as_a_change() -> None:
    app = App("html")
    app.page_turn("A recipe book")
    assert app.messages[-1]["content"].startswith(NOTE_HEAD)
    text = app.page_turn('Change the title to "Soup"')
    assert text.startswith("Changed “Recipe Book” to “Soup”.")


# -- repairs -------------------------------------------------------------------------------


def test_a_vue_repair_round_states_no_checks_again() -> None:
    app = App("vue_project")
    app.turn("A vue shop")
    before, since = dict(app.checks), len(app.messages)
    app.repair(f"{REPAIR_MARK} 1/2: the preview build failed]\nx")
    assert app.checks == before
    assert step_names(app.messages[since:]) == [["write_file"] * 7]


def test_an_acceptance_repair_of_a_change_retires_the_stale_failing_check() -> None:
    app = App("html")
    app.page_turn("A recipe book")
    app.messages = app.messages[:1]  # the creation left the window (a summary stands for it)
    app.messages += [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": creation_answer("html")},
    ]
    app.turn('Change the title to "Soup"')
    failing = {
        "c1": "expect[0]: expected the text of css 'h1' equal to 'Recipe Book', found 'Soup'"
    }
    text = app.repair(acceptance_feedback(app, failing))
    assert checks_of(text) == {
        "retire": [{"id": "c1", "reason": "the user changed the heading to “Soup”"}]
    }
    app.note()
    assert app.retired == {"c1": "the user changed the heading to “Soup”"}
    vue = App("vue_project")
    vue.turn("A vue shop")
    vue.messages = [m for m in vue.messages if m.get("role") != "tool" and not m.get("tool_calls")][
        :2
    ]
    vue.messages.append({"role": "assistant", "content": "Created it."})
    vue.turn('Change the title to "Soup"')
    failing = {"c1": "expect[0]: expected the text of css 'h1' equal to 'Shop', found 'Soup'"}
    text = vue.repair(acceptance_feedback(vue, failing))
    assert "c1" in vue.retired and "retired check c1: the user changed the heading" in text


def test_a_check_the_users_own_edit_changed_is_retired_not_fought() -> None:
    """Issue 38: AboutView's heading edited by hand to "About Us", then a title change; the
    repair says the user's edit (deliberate) broke c3: it is retired, no file is touched."""
    vue = App("vue_project")
    vue.turn("A vue shop")
    vue.turn('Change the title to "Soup"')
    why = "expect[0]: expected the text of css 'h1' equal to 'About', found 'About Us'"
    said = "The user's own edit (v2) changed what c3 expected; the edit is deliberate and final."
    text = vue.repair(acceptance_feedback(vue, {"c3": why}) + "\n\n" + said)
    assert vue.retired["c3"] == "the user's own edit (v2) changed what it expected, on purpose"
    assert "modify_file" not in text and "write_file" not in text


def creation_answer(kind: str) -> str:
    return answer(
        [
            {"role": "system", "content": prompts.load(kind)},
            {"role": "user", "content": "A recipe book"},
        ]
    ).text


# -- the potemkin flaws ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_potemkin_page_has_a_button_that_does_nothing_until_repaired(kind: str) -> None:
    app = App(kind)
    first = app.turn("A recipe book [[flaw=potemkin]]")
    assert checks_of(first) == {"add": [HEADING, PAGE_COUNTER]}  # the checks say it counts
    app.add(HEADING), app.add(PAGE_COUNTER)  # as the platform applies them
    script = app.files["script.js" if kind == "multi_file" else "index.html"]
    assert "addEventListener" not in script and "function countClick() {" in script
    assert 'id="action"' in app.files["index.html"]
    fixed = app.repair(acceptance_feedback(app, {"c2": COUNTER_FAILS}))
    assert fixed.startswith("Fixed the script: the click handler was written but never attached")
    assert checks_of(fixed) is None  # not stated again
    plain = creation_files(
        parse_req("A recipe book [[flaw=potemkin]]", kind), multi=kind == "multi_file"
    )
    got = page_files(fixed, multi=kind == "multi_file").values()
    assert tuple(f.rstrip() for f in got) == tuple(f.rstrip() for f in plain)


def parse_req(text: str, kind: str) -> Any:
    from zerocode.adapters.model.offline.base import parse_request

    return parse_request(
        [{"role": "system", "content": prompts.load(kind)}, {"role": "user", "content": text}]
    )


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_stubborn_potemkin_page_never_works(kind: str) -> None:
    app = App(kind)
    app.turn("A recipe book [[flaw=potemkin-stubborn]]")
    app.add(HEADING), app.add(PAGE_COUNTER)
    name = "script.js" if kind == "multi_file" else "index.html"
    scripts = [app.files[name]]
    for attempt in range(1, 5):
        text = app.repair(acceptance_feedback(app, {"c2": COUNTER_FAILS}, attempt))
        assert text.startswith(POTEMKIN_CLAIM) and checks_of(text) is None
        scripts.append(app.files[name])
    working = "clicks += 1;", "addEventListener('click'", "getElementById('status').textContent ="
    assert all(not all(w in s for w in working) for s in scripts)
    assert all(a != b for a, b in itertools.pairwise(scripts))


def test_a_potemkin_vue_project_is_fixed_with_an_edit() -> None:
    app = App("vue_project")
    text = app.turn("A vue shop [[flaw=potemkin]]")
    home = app.files[HOME_VIEW]
    assert '<button type="button">Try it</button>' in home and "@click" not in home
    assert set(app.checks) == {"c1", "c2", "c3"} and text.startswith("Created **Shop**")
    since = len(app.messages)
    final = app.repair(acceptance_feedback(app, {"c2": VUE_COUNTER_FAILS}))
    assert step_names(app.messages[since:]) == [["modify_file"]]
    assert app.files[HOME_VIEW] == vue_project_files("Shop", "A vue shop")[HOME_VIEW]
    assert final == VUE_FIXED["potemkin"] and set(app.checks) == {"c1", "c2", "c3"}


def test_a_stubborn_potemkin_vue_project_never_works() -> None:
    app = App("vue_project")
    app.turn("A vue shop [[flaw=potemkin-stubborn]]")
    views = [app.files[HOME_VIEW]]
    for attempt in range(1, 5):
        text = app.repair(acceptance_feedback(app, {"c2": "expect[0]: not visible"}, attempt))
        assert text == f"Wrote {HOME_VIEW}."
        views.append(app.files[HOME_VIEW])
    assert all("clicks++" not in v for v in views)
    assert all(a != b for a, b in itertools.pairwise(views))
    assert set(app.checks) == {"c1", "c2", "c3"}


def test_the_flawed_mode_does_not_pick_the_potemkin_flaws() -> None:
    assert {name for name, _ in SEEDED}.isdisjoint({"potemkin", "potemkin-stubborn"})


# -- the regress flaw: a change that breaks an earlier check ------------------------------

OWL = 'Change the title to "Owl Hall" [[flaw=regress]]'
OWL_HEADING = {
    "description": "The heading reads “Owl Hall”",
    "steps": [],
    "expect": [{"text": {"css": "h1"}, "equals": "Owl Hall"}],
}


def changed_app(kind: str, request: str) -> App:
    """An app created ("A recipe book", or for Vue "A vue shop"), its checks noted, then
    changed by ``request`` (its checks block not yet applied)."""
    app = App(kind)
    if kind == "vue_project":
        app.turn("A vue shop")
        app.turn(request)
    else:
        app.page_turn("A recipe book")
        app.turn(request)
    return app


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_regressing_page_edit_detaches_the_counter_until_repaired(kind: str) -> None:
    plain = changed_app(kind, 'Change the title to "Owl Hall"')
    app = changed_app(kind, OWL)
    first = app.messages[-1]["content"]
    name = "script.js" if kind == "multi_file" else "index.html"
    # the requested change, stated as usual
    assert first.startswith("Changed “Recipe Book” to “Owl Hall”.")
    assert checks_of(first) == {
        "add": [OWL_HEADING],
        "retire": [{"id": "c1", "reason": "the user changed “Recipe Book” to “Owl Hall”"}],
    }
    assert checks_of(first) == checks_of(plain.messages[-1]["content"])
    assert "<h1>Owl Hall</h1>" in app.files["index.html"]
    # ... and the counter broken: the handler written, never attached
    script = app.files[name]
    assert "addEventListener" not in script and "function countClick() {" in script
    assert "getElementById('status').textContent =" in script  # quietly: nothing throws
    assert script == detached(plain.files[name]) != plain.files[name]
    assert {p: c for p, c in app.files.items() if p != name} == {
        p: c for p, c in plain.files.items() if p != name
    }
    app.add(OWL_HEADING)
    app.retire("c1", "as the platform applies the block")
    fixed = app.repair(acceptance_feedback(app, {"c2": COUNTER_FAILS}))
    assert fixed.startswith(PAGE_REPAIRED.format("Try it") + "\n\nChanged “Recipe Book” to")
    assert checks_of(fixed) is None  # nothing retired: the user did not ask for the counter
    assert app.files == plain.files  # the change kept, the handler attached again
    assert set(app.checks) == {"c2", "c3"}


def test_a_regress_trigger_is_never_part_of_the_new_text() -> None:
    inside = changed_app("html", 'Change the title to "Owl Hall [[flaw=regress]]"')
    outside = changed_app("html", OWL)
    assert inside.messages[-1] == outside.messages[-1] and inside.files == outside.files
    assert parse_req('Title "[[flaw=regress]] Owl  Hall"', "html").quoted == "Owl Hall"
    assert parse_req('Title "Owl  Hall"', "html").quoted == "Owl  Hall"  # as before


@pytest.mark.parametrize("kind", ["html", "vue_project"])
def test_the_regress_trigger_leaves_a_creation_as_it_is(kind: str) -> None:
    flawed = App(kind)
    flawed.turn("A vue shop [[flaw=regress]]")
    plain = App(kind)
    plain.turn("A vue shop")
    assert flawed.files == plain.files and flawed.checks == plain.checks


def test_a_regressing_vue_edit_drops_the_click_handler_until_repaired() -> None:
    plain = changed_app("vue_project", 'Change the title to "Owl Hall"')
    app = changed_app("vue_project", OWL)
    change = next(i for i, m in enumerate(app.messages) if m["content"] == OWL)
    assert step_names(app.messages[change:]) == [
        ["read_dir"],
        ["read_file"] * 3,
        ["modify_file", "modify_file"],  # the change, and the slip
        ["retire_check", "add_check"],
    ]
    slip = json.loads(app.messages[change + 7]["tool_calls"][1]["function"]["arguments"])
    assert slip == {
        "path": HOME_VIEW,
        "old": '<button type="button" @click="clicks++">',
        "new": '<button type="button">',
    }
    home = app.files[HOME_VIEW]
    assert "<h1>Owl Hall</h1>" in home and '<button type="button">Try it</button>' in home
    assert "@click" not in home
    assert {p: c for p, c in app.files.items() if p != HOME_VIEW} == {
        p: c for p, c in plain.files.items() if p != HOME_VIEW
    }
    # the model does not know: it reports the change and its checks as without the slip
    assert app.messages[-1]["content"] == plain.messages[-1]["content"]
    assert app.messages[-1]["content"].startswith(
        "Changed “Shop” to “Owl Hall” in src/views/HomeView.vue."
    )
    assert app.retired == {"c1": "the user changed “Shop” to “Owl Hall”"}
    assert app.checks["c4"] == OWL_HEADING
    since = len(app.messages)
    final = app.repair(acceptance_feedback(app, {"c2": VUE_COUNTER_FAILS}))
    assert step_names(app.messages[since:]) == [["modify_file"]]
    assert json.loads(app.messages[since + 1]["tool_calls"][0]["function"]["arguments"]) == {
        "path": HOME_VIEW,
        "old": '<button type="button">',
        "new": '<button type="button" @click="clicks++">',
    }
    assert final == VUE_REPAIRED.format("Try it")
    assert app.files == plain.files  # the change kept, the button counting again
    assert set(app.checks) == {"c2", "c3", "c4"} and list(app.retired) == ["c1"]


def test_a_vue_regress_repair_also_retires_a_stale_heading_it_is_shown() -> None:
    app = App("vue_project")
    app.turn("A vue shop")
    # the creation's tool results left the window: the change cannot retire c1
    app.messages = [m for m in app.messages if m.get("role") != "tool" and not m.get("tool_calls")]
    app.messages = [*app.messages[:2], {"role": "assistant", "content": "Created it."}]
    app.turn(OWL)
    assert "c1" not in app.retired and '<button type="button">Try it' in app.files[HOME_VIEW]
    since = len(app.messages)
    failing = {
        "c1": "expect[0]: expected the text of css 'h1' equal to 'Shop', found 'Owl Hall'",
        "c2": VUE_COUNTER_FAILS,
    }
    final = app.repair(acceptance_feedback(app, failing))
    assert step_names(app.messages[since:]) == [["modify_file", "retire_check"]]
    assert final == (
        f"{VUE_REPAIRED.format('Try it')}\n\nAcceptance checks:\n"
        "retired check c1: the user changed the heading to “Owl Hall”"
    )
    assert list(app.retired) == ["c1"] and "c2" in app.checks
    assert '<button type="button" @click="clicks++">Try it</button>' in app.files[HOME_VIEW]


def test_any_other_repair_of_a_regress_turn_is_the_unflawed_change() -> None:
    plain = changed_app("multi_file", 'Change the title to "Owl Hall"')
    app = changed_app("multi_file", OWL)
    again = app.repair(f"{REPAIR_MARK} 1/2: the page fails in the browser]\nx")
    assert not again.startswith("Fixed") and app.files == plain.files
    vue = changed_app("vue_project", OWL)
    since = len(vue.messages)
    vue.repair(f"{REPAIR_MARK} 1/2: the preview build failed]\nx")
    assert [n for s in step_names(vue.messages[since:]) for n in s].count("modify_file") == 1
