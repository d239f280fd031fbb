"""The offline model's language detection and app names (issue 26, point 8): the language a
prompt is written in, and the clean name it gives an app."""

from __future__ import annotations

import pytest

from zerocode.adapters.model.offline.language import language_of
from zerocode.adapters.model.offline.names import NAME_LIMIT, app_name

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
