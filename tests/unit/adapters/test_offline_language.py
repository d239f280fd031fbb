"""The offline model writes in the prompt's language and names apps cleanly (issue 26, point 8):
the language of a prompt, the name it gives, and the pages, projects and checks it writes in
English, Chinese and Japanese."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.unit.adapters.test_offline_checks import App, acceptance_feedback, checks_of
from tests.unit.adapters.test_offline_model import (
    BUILD_FAILED,
    code_blocks,
    conversation,
    headings,
)
from zerocode.adapters.model.offline.flaws import counter_component
from zerocode.adapters.model.offline.language import UI, language_of, ui_of_files
from zerocode.adapters.model.offline.names import NAME_LIMIT, app_name
from zerocode.adapters.model.offline.script import answer
from zerocode.adapters.model.offline.vue import HOME_VIEW, vue_project_files
from zerocode.engine.repair import repair_message

# -- the prompt's language -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "language"),
    [
        ("Make a pomodoro timer with start and pause buttons", "en"),
        ("做一个番茄钟网页", "zh"),
        ("用 Vue 做一个待办清单网站，带路由", "zh"),  # a Latin word among many CJK characters
        ("做一个 Vue recipe box", "en"),  # mostly English words
        ("ポモドーロタイマーを作って", "ja"),
        ("日本語のメモ帳アプリ", "ja"),  # kanji and kana
        ("Make a page called ポモドーロ for my team and friends", "en"),  # kana, mostly English
        ("", "en"),
        ("12345 !!!", "en"),
        ("Café menu for Zoë", "en"),
    ],
)
def test_the_language_of_a_prompt(prompt: str, language: str) -> None:
    assert language_of(prompt) == language


# -- the name ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "name"),
    [
        # English: no request phrasing, no later clause, no framework, title-cased
        ("Make a pomodoro timer with start and pause buttons", "Pomodoro Timer"),
        ("Vue recipe box: add recipes, mark favourites", "Recipe Box"),
        ("Build me a simple tip calculator", "Tip Calculator"),
        ("Create an expense tracker that sums by month", "Expense Tracker"),
        ("Please make a weather app", "Weather App"),  # "Weather" alone is no name
        ("I want a quiz game, with scores", "Quiz Game"),
        ("Can you build me a to-do list which syncs", "To-Do List"),
        ("Pomodoro timer page", "Pomodoro Timer"),
        ("A todo app in Vue with a router", "Todo App"),
        ("A Vue todo app with an about page", "Todo App"),
        ("Create a multi-file portfolio site with separate CSS", "Portfolio Site"),
        ("A page about newts", "Newts"),  # the page names nothing: what it is about
        ("A landing page for a bakery", "Bakery"),
        ("A landing page with a signup form", "Landing Page"),
        ("A tip calculator for restaurants", "Tip Calculator"),
        ("Make an iPhone-style calculator", "iPhone-Style Calculator"),
        ('Make a page called "Newt Club"', "Newt Club"),
        ("A pomodoro timer <for> students & me", "Pomodoro Timer"),
        # Chinese: no 做一个 / 帮我 / 请 / 我想要, no 网页 / 应用 where a name is left
        ("做一个番茄钟网页", "番茄钟"),
        ("帮我做一个待办清单，带截止日期", "待办清单"),
        ("请做一个简单的记账网页", "记账网页"),  # "记账" alone is no name
        ("我想要一个个人作品集网站", "个人作品集"),
        ("写一个小费计算器", "小费计算器"),
        ("做一个多页面的公司网站", "公司网站"),
        ("一个多文件的着陆页，CSS 单独放", "着陆页"),
        ("做一个叫“小熊书屋”的网站", "小熊书屋"),
        ("做一个关于水獭的网页：有图片", "水獭网页"),
        # mixed
        ("用 Vue 做一个食谱应用，可以收藏", "食谱应用"),
        ("做一个 Markdown 编辑器", "Markdown 编辑器"),
        ("做一个 Vue 待办应用", "待办应用"),
        ("ポモドーロタイマーを作って", "ポモドーロタイマー"),
        # nothing to name: "My App" in the prompt's language
        ("", "My App"),
        ("Build a Vue app", "My App"),
        ("做一个网页", "我的应用"),
    ],
)
def test_the_name_of_an_app(prompt: str, name: str) -> None:
    assert app_name(prompt) == name


def test_a_long_name_is_cut_at_a_word_or_a_character() -> None:
    long = "Create an extraordinarily comprehensive multilingual encyclopaedia browser"
    assert app_name(long) == "Extraordinarily Comprehensive"
    chinese = app_name("做一个" + "非常详细的多语言百科全书浏览器和阅读记录工具" * 2)
    assert len(chinese) == NAME_LIMIT and chinese.startswith("非常详细的多语言百科全书")
    word = app_name("Make a " + "x" * 50)
    assert word == "X" + "x" * (NAME_LIMIT - 1)


def test_the_naming_answer_is_the_name() -> None:
    for prompt in ("Make a pomodoro timer with start and pause buttons", "做一个番茄钟网页"):
        assert answer(conversation("naming", prompt)).text == app_name(prompt)


# -- the page, in the prompt's language ------------------------------------------------------


def _page(kind: str, prompt: str) -> tuple[str, str]:
    """The creation's index.html and the script it runs (inline or script.js)."""
    blocks = code_blocks(answer(conversation(kind, prompt)).text)
    return blocks["html"], blocks.get("javascript", blocks["html"])


@pytest.mark.parametrize("kind", ["html", "multi_file"])
@pytest.mark.parametrize(
    ("prompt", "lang", "button", "idle", "count", "name"),
    [
        (
            "Make a pomodoro timer with start and pause buttons",
            "en",
            "Try it",
            "Not clicked yet.",
            "`Clicked ${clicks} time",
            "Pomodoro Timer",
        ),
        (
            "做一个番茄钟网页",
            "zh-CN",
            "试一试",
            "还没有点击。",
            "`已点击 ${clicks} 次。`",
            "番茄钟",
        ),
        (
            "ポモドーロタイマーを作って",
            "ja",
            "Try it",  # no Japanese table yet: English texts, a Japanese page
            "Not clicked yet.",
            "`Clicked ${clicks} time",
            "ポモドーロタイマー",
        ),
    ],
)
def test_a_page_is_written_in_the_prompts_language_and_headed_by_its_name(
    kind: str, prompt: str, lang: str, button: str, idle: str, count: str, name: str
) -> None:
    page, script = _page(kind, prompt)
    assert f'<html lang="{lang}">' in page
    assert headings(page) == [name] and f"<title>{name}</title>" in page
    assert f'<button id="action" type="button">{button}</button>' in page
    assert f'<p id="status" aria-live="polite">{idle}</p>' in page
    assert count in script
    assert f"<h1>{prompt}</h1>" not in page  # never the raw prompt


def test_a_chinese_page_states_its_checks_in_its_own_words() -> None:
    app = App("html")
    text = app.page_turn("做一个番茄钟网页")
    assert checks_of(text) == {
        "add": [
            {
                "description": "The heading reads “番茄钟”",
                "steps": [],
                "expect": [{"text": {"css": "h1"}, "equals": "番茄钟"}],
            },
            {
                "description": "Clicking “试一试” twice shows 2 clicks",
                "steps": [{"click": {"role": "button", "name": "试一试"}}] * 2,
                "expect": [
                    {"text": {"css": "#status"}, "equals": "已点击 2 次。"},
                    {"noConsoleErrors": True},
                ],
            },
        ]
    }


def test_a_change_keeps_the_pages_language_whatever_the_requests() -> None:
    app = App("multi_file")
    app.page_turn("做一个番茄钟网页")
    element = "\n\n[Selected element] tag: 'button', text: '试一试'"
    text = app.page_turn('Make the button say "Go"' + element)  # an English request
    block = checks_of(text)
    assert block is not None
    assert block["add"][0]["expect"][0] == {"text": {"css": "#status"}, "equals": "已点击 2 次。"}
    assert block["retire"] == [{"id": "c2", "reason": "the user changed “试一试” to “Go”"}]
    assert '<html lang="zh-CN">' in app.files["index.html"]


def test_the_page_language_is_read_back_from_the_files() -> None:
    assert ui_of_files(['<html lang="zh-CN">']) == UI["zh"]
    assert ui_of_files(['<html class="x" lang="ja">']) == UI["ja"]
    assert ui_of_files(["<p>已点击 {{ clicks }} 次。</p>"]) == UI["zh"]
    assert ui_of_files(["<h1>Hi</h1>"]) == UI["en"]


# -- the Vue project, in the prompt's language -------------------------------------------------


def _files(script: Any) -> dict[str, str]:
    return {a["path"]: a["content"] for a in (json.loads(c.arguments) for c in script.calls)}


def test_a_chinese_vue_project_is_written_in_chinese() -> None:
    prompt = "用 Vue 做一个待办清单网站，带路由"
    files = _files(answer(conversation("vue_project", prompt)))
    assert files == vue_project_files("待办清单", prompt)
    assert '<html lang="zh-CN">' in files["index.html"]
    assert "<title>待办清单</title>" in files["index.html"]
    assert "<h1>待办清单</h1>" in files[HOME_VIEW]
    assert '@click="clicks++">试一试</button>' in files[HOME_VIEW]
    assert "<p>已点击 {{ clicks }} 次。</p>" in files[HOME_VIEW]
    assert ">首页</router-link>" in files["src/App.vue"]
    assert ">关于</router-link>" in files["src/App.vue"]
    assert "<strong>待办清单</strong>" in files["src/App.vue"]
    about = files["src/views/AboutView.vue"]
    assert "<h1>关于</h1>" in about and f"根据描述生成：“{prompt}”。" in about
    assert json.loads(files["package.json"])["name"] == "zerocode-app"  # no ASCII to slug
    english = _files(answer(conversation("vue_project", "A Vue todo app with an about page")))
    assert '<html lang="en">' in english["index.html"] and "<h1>Todo App</h1>" in english[HOME_VIEW]
    assert ">About</router-link>" in english["src/App.vue"] and "Try it" in english[HOME_VIEW]
    assert not re.search(r"[A-Z]{4,}", english[HOME_VIEW] + english["src/App.vue"])  # all filled


def test_a_chinese_vue_project_states_its_checks_in_its_own_words() -> None:
    app = App("vue_project")
    text = app.turn("用 Vue 做一个待办清单网站")
    assert [c["description"] for c in app.checks.values()] == [
        "The heading reads “待办清单”",
        "Clicking “试一试” twice shows 2 clicks",
        "The “关于” link opens the page headed “关于”",
    ]
    assert app.checks["c2"]["expect"][0] == {"visible": {"text": "已点击 2 次。"}}
    assert text.startswith("Created **待办清单**")
    element = "\n\n[Selected element] tag: 'router-link', text: '关于'"
    app.turn('Call it "我们"' + element)
    assert app.retired == {"c3": "the user changed “关于” to “我们”"}
    assert app.checks["c4"]["expect"][0] == {"text": {"css": "h1"}, "equals": "关于"}


@pytest.mark.parametrize("flaw", ["import", "potemkin"])
def test_a_chinese_vue_flaw_is_made_and_repaired_in_chinese(flaw: str) -> None:
    prompt = "做一个 Vue 番茄钟"
    app = App("vue_project")
    app.turn(f"{prompt} [[flaw={flaw}]]")
    right = vue_project_files("番茄钟", prompt)
    assert app.files[HOME_VIEW] != right[HOME_VIEW]
    failing = (
        {"c2": "expect[0]: expected the text '已点击 2 次。' visible, found not visible"}
        if flaw == "potemkin"
        else {}
    )
    feedback = acceptance_feedback(app, failing) if failing else repair_message(BUILD_FAILED, 1, 2)
    app.repair(feedback)
    if flaw == "import":
        assert app.files["src/components/ClickCounter.vue"] == counter_component(UI["zh"])
        assert "<p>已点击 {{ count }} 次。</p>" in app.files["src/components/ClickCounter.vue"]
    else:
        assert app.files[HOME_VIEW] == right[HOME_VIEW]
