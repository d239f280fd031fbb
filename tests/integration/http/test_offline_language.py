"""The offline model, through the real openai client and the whole platform, names an app and
writes its page in the prompt's language (issue 26, point 8): the app's name is the clean
name, which heads the page and titles it; the page's lang and its button are the prompt's."""

from __future__ import annotations

import re

import pytest

from tests.integration.http.conftest import Api


@pytest.mark.parametrize(
    ("prompt", "kind", "name", "lang", "button", "status"),
    [
        ("做一个番茄钟网页", "html", "番茄钟", "zh-CN", "试一试", "还没有点击。"),
        (
            "帮我做一个多文件的记账网站，带图表",
            "multi_file",
            "记账网站",
            "zh-CN",
            "试一试",
            "还没有点击。",
        ),
        (
            "Make a pomodoro timer with start and pause buttons",
            "html",
            "Pomodoro Timer",
            "en",
            "Try it",
            "Not clicked yet.",
        ),
        (
            "Build me a multi-file expense tracker, with monthly totals",
            "multi_file",
            "Expense Tracker",
            "en",
            "Try it",
            "Not clicked yet.",
        ),
    ],
)
def test_the_app_is_named_and_its_page_written_in_the_prompts_language(
    api: Api, prompt: str, kind: str, name: str, lang: str, button: str, status: str
) -> None:
    owner = api.user()
    created = api.client.post(
        "/api/apps", headers=owner, json={"initPrompt": prompt, "codeGenType": kind}
    )
    assert created.status_code == 201, created.text
    app = created.json()
    assert app["name"] == name  # the naming answer, through the real client
    stream = api.chat(owner, app["id"], prompt)
    assert "event: done" in stream and '"status":"succeeded"' in stream
    page = api.platform.workspace.read(app["id"], "index.html").decode()
    declared = re.search(r'<html lang="([^"]+)">', page)
    assert declared is not None and declared.group(1) == lang
    assert re.findall(r"<h1>(.*?)</h1>", page) == [name]
    assert re.findall(r"<title>(.*?)</title>", page) == [name]
    assert f'<button id="action" type="button">{button}</button>' in page
    assert f'<p id="status" aria-live="polite">{status}</p>' in page
    assert f"<h1>{prompt}</h1>" not in page
    fetched = api.client.get(f"/api/apps/{app['id']}", headers=owner).json()
    assert fetched["name"] == name
