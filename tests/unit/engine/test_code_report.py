"""What an html / multi-file answer's code blocks did, as the display tells it: each block one
line (file, status, lines added and removed, the version's diff), the prose kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.properties import examples
from zerocode.apps.versions import file_diff, line_counts
from zerocode.engine import code_report
from zerocode.engine.code_report import not_saved, saved, shown_text
from zerocode.engine.turn_state import TurnState

OLD = "<!DOCTYPE html>\n<html>\n<body>\n<h1>About Plovers</h1>\n<p>Birds.</p>\n</body>\n</html>\n"
NEW = OLD.replace("About Plovers", "About Sandpipers")


def fenced(lang: str, body: str) -> str:
    return f"```{lang}\n{body.rstrip()}\n```"


def test_a_one_word_change_is_one_line_modified_plus_one_minus_one() -> None:
    text = f"Changed the title.\n\n{fenced('html', NEW)}\n\nAnything else?"
    report = saved(
        0, 1, text, multi=False, before={"index.html": OLD.encode()}, after={"index.html": NEW}
    )
    shown = report.shown("v2")
    assert shown == (
        "Changed the title.\n\n`index.html`: modified, +1 −1 (diff: v2)\n\nAnything else?"
    )
    assert "```" not in shown and "<h1>" not in shown


def test_a_new_file_is_added_with_its_lines_and_an_unchanged_one_says_so() -> None:
    text = fenced("html", NEW)
    first = saved(0, 1, text, multi=False, before={"index.html": None}, after={"index.html": NEW})
    assert first.shown("v1") == "`index.html`: added, +7 −0 (diff: v1)"
    same = saved(
        0, 1, text, multi=False, before={"index.html": NEW.encode()}, after={"index.html": NEW}
    )
    assert same.shown(None) == "`index.html`: unchanged"


def test_without_a_version_there_is_no_diff_link() -> None:
    report = saved(
        0, 1, fenced("html", NEW), multi=False, before={"index.html": OLD.encode()},
        after={"index.html": NEW},
    )  # fmt: skip
    assert report.shown(None) == "`index.html`: modified, +1 −1"


def test_blocks_the_parser_does_not_take_say_they_were_not_saved() -> None:
    text = "\n".join(
        [fenced("html", NEW), fenced("css", "h1 { color: red; }"), fenced("html", "<p>again</p>")]
    )
    report = saved(
        0, 1, text, multi=False, before={"index.html": OLD.encode()}, after={"index.html": NEW}
    )
    assert report.shown("v2").splitlines() == [
        "`index.html`: modified, +1 −1 (diff: v2)",
        "`style.css`: not saved — an html app keeps all its code in index.html",
        "`index.html`: not saved — only the first html block is used",
    ]


def test_a_block_that_is_no_file_is_shown_as_written() -> None:
    text = f"Run it with:\n{fenced('bash', 'npx serve .')}\n\n{fenced('html', NEW)}"
    report = saved(
        0, 1, text, multi=False, before={"index.html": OLD.encode()}, after={"index.html": NEW}
    )
    assert report.shown("v2") == (
        "Run it with:\n```bash\nnpx serve .\n```\n\n`index.html`: modified, +1 −1 (diff: v2)"
    )


def test_a_multi_file_answer_without_a_css_block_says_style_css_was_emptied() -> None:
    css = "h1 {\n  color: teal;\n}\n"
    text = f"{fenced('html', NEW)}\n\n{fenced('javascript', 'alert(1)')}"
    after = {"index.html": NEW, "style.css": "", "script.js": "alert(1)\n"}
    before = {"index.html": OLD.encode(), "style.css": css.encode(), "script.js": b"alert(1)\n"}
    report = saved(0, 1, text, multi=True, before=before, after=after)
    assert report.shown("v4").splitlines() == [
        "`index.html`: modified, +1 −1 (diff: v4)",
        "",
        "`script.js`: unchanged",
        "",
        "`style.css`: modified, +0 −3 (diff: v4) — the answer has no css block, so it was "
        "saved empty",
    ]


def test_an_answer_not_saved_says_why_for_each_file_and_shows_no_code() -> None:
    cut = "Here it is:\n```html\n<html><body><h1>Half a pa"
    report = not_saved(0, 1, cut, "the answer was cut off by the output limit", multi=True)
    assert report.shown("v9") == (
        "Here it is:\n`index.html`: not saved — the answer was cut off by the output limit"
    )
    refused = not_saved(0, 1, fenced("css", ""), "the ```css code block is empty", multi=True)
    assert refused.shown(None) == "`style.css`: not saved — the css code block is empty"


def test_the_streamed_text_is_spliced_answer_by_answer() -> None:
    first = f"Made it.\n{fenced('html', OLD)}"
    second = f"Fixed.\n{fenced('html', NEW)}"
    streamed = ["Made it.\n", fenced("html", OLD), "Fixed.\n", fenced("html", NEW)]
    reports = [
        saved(0, 2, first, multi=False, before={"index.html": None}, after={"index.html": OLD}),
        saved(
            2, 4, second, multi=False, before={"index.html": OLD.encode()},
            after={"index.html": NEW},
        ),
    ]  # fmt: skip
    assert shown_text(streamed, reports, "v1") == (
        "Made it.\n`index.html`: added, +7 −0 (diff: v1)"
        "Fixed.\n`index.html`: modified, +1 −1 (diff: v1)"
    )
    assert shown_text(["no code here"], [], None) == "no code here"


def test_the_turn_display_shows_the_summary_and_keeps_the_checks_out() -> None:
    st = TurnState()
    answer = f"Changed the title.\n\n{fenced('html', NEW)}\n\n{fenced('checks', '{}')}"
    st.text = [answer[:30], answer[30:]]
    st.code = [
        saved(
            0, 2, answer, multi=False, before={"index.html": OLD.encode()},
            after={"index.html": NEW},
        )
    ]  # fmt: skip
    st.changed = True
    st.steps = ["✓ saved `index.html`"]
    assert st.display("v2") == (
        "Changed the title.\n\n`index.html`: modified, +1 −1 (diff: v2)\n\n- ✓ saved `index.html`"
    )


def test_the_status_words_are_the_documented_ones() -> None:
    assert (code_report.NOT_SAVED, code_report.NOT_KNOWN) == ("not saved", "not known")


lines = st.lists(st.sampled_from(["<p>a</p>", "<p>b</p>", "", "  x", "y"]), max_size=12)


@settings(max_examples=examples(200))
@given(lines, lines)
def test_the_counts_are_the_diffs_plus_and_minus_lines(a: list[str], b: list[str]) -> None:
    before, after = "\n".join(a).encode(), "\n".join(b).encode()
    diff = file_diff("index.html", "modified", before, after).diff.splitlines()
    plus = sum(1 for x in diff if x.startswith("+") and not x.startswith("+++"))
    minus = sum(1 for x in diff if x.startswith("-") and not x.startswith("---"))
    assert line_counts(before, after) == (plus, minus)
