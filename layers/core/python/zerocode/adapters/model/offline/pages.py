"""The html and multi_file answers: a page on creation, one text replaced on a change."""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Callable, Iterable
from typing import Any

from zerocode.adapters.model.offline import placing
from zerocode.adapters.model.offline.base import (
    H1,
    NEEDS_QUOTES,
    Request,
    Script,
    element_text,
    is_creation,
    page_text,
    template,
    text_of,
)
from zerocode.adapters.model.offline.checks import (
    Edit,
    checks_block,
    creation_checks,
    edit_checks,
    live_checks,
    stale_on_repair,
    waiting_check,
)
from zerocode.adapters.model.offline.data_apps import (
    data_block,
    guestbook_checks,
    guestbook_files,
    is_guestbook,
)
from zerocode.adapters.model.offline.language import Ui, ui_for, ui_of_files
from zerocode.adapters.model.offline.names import app_name

# The platform's notes that carry the files: a restored version (engine/restore.py), a
# person's edit (engine/user_edit.py).
PLATFORM_NOTES = ("[zerocode: the user restored version", "[zerocode: the user edited")
_WHERE = {"h1": "heading", "button": "button"}  # an edited element's tag: what its check is
_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)\n?```", re.DOTALL)


def page_answer(
    req: Request, *, multi: bool, script_edit: Callable[[str], str] | None = None
) -> Script:
    """The answer to a creation or a change; ``script_edit`` (the regress flaw, :mod:`.regress`)
    rewrites the changed page's script (script.js, or the page holding the inline one)."""
    langs = languages(multi=multi)
    current = _latest_blocks(req.earlier, langs)
    if is_creation(req.earlier):
        return Script(creation_text(req, creation_files(req, multi=multi), multi=multi))
    image = placing.wanted(req.text, req.earlier)
    if image is not None and current is not None and req.quoted is None:
        return _place(image, current, langs)
    new = req.quoted
    if new is None:
        return Script(NEEDS_QUOTES)
    if current is None:
        return Script(
            "I could not find the current version of the page in our conversation, "
            "so nothing was changed."
        )
    old, tag = element_text(req), req.element.get("tag", "")
    changed = _replace_in_page(current[0], old, new, tag)
    if changed is None:
        what = f"“{old}”" if old is not None else "a <h1> heading"
        return Script(f"I could not find {what} in the current page, so nothing was changed.")
    page, found = changed
    files = (page, *current[1:])
    if script_edit is not None:
        files = (*files[:-1], script_edit(files[-1]))
    edit = Edit(found, new, "heading" if old is None else _WHERE.get(tag, "text"))
    if req.repairing:  # the checks were stated; retire only those the feedback shows stale
        add: list[dict[str, Any]] = []
        retire = stale_on_repair(req)
    else:
        add, retire = edit_checks(live_checks(req.earlier), edit, ui_of_files(current), vue=False)
        add += waiting_check(req.triggers)
    return Script(
        _with_checks(f"Changed “{found}” to “{new}”.\n\n{_blocks(langs, files)}", add, retire)
    )


def _place(image: placing.Uploaded, current: tuple[str, ...], langs: tuple[str, ...]) -> Script:
    """The builder's image placed before the page's heading, the rest as it was."""
    page = placing.placed(current[0], image)
    if page is None:
        return Script(
            f"The page already shows {image.url}, or has no heading to put it beside, "
            "so nothing was changed."
        )
    files = (page, *current[1:])
    return Script(f"Placed your image {image.url} in the header.\n\n{_blocks(langs, files)}")


def languages(*, multi: bool) -> tuple[str, ...]:
    return ("html", "css", "javascript") if multi else ("html",)


def creation_files(req: Request, *, multi: bool) -> tuple[str, ...]:
    """The files of the page a creation writes: (index.html,) or (html, css, javascript), in
    the request's language, headed by the app's name."""
    if is_guestbook(req):
        return guestbook_files(req, multi=multi)
    title, ui = app_name(req.description), ui_for(req.description)
    if multi:
        return _multi_page(title, req.description, ui)
    return (_single_page(title, req.description, ui),)


def creation_text(req: Request, files: tuple[str, ...], *, multi: bool) -> str:
    """The whole answer to a creation, around its files' code blocks, and the checks of what
    it must do (not in a repair: they were stated in the turn's first answer)."""
    title = app_name(req.description)
    what = "a static site in three files" if multi else "a single self-contained page"
    if is_guestbook(req):
        text = (
            f"Here is **{title}**, {what} whose guestbook keeps its entries with the "
            f"platform's data API.\n\n{code_blocks(files, multi=multi)}\n\n"
            f"Its data model: anyone reads and signs it; no one changes or deletes an entry."
            f"\n\n{data_block()}"
        )
        return text if req.repairing else _with_checks(text, guestbook_checks(req), [])
    text = (
        f"Here is **{title}**, {what}.\n\n{code_blocks(files, multi=multi)}\n\n"
        "Click the button to try the script."
    )
    if req.repairing:
        return text
    return _with_checks(text, creation_checks(title, ui_for(req.description), vue=False), [])


def _with_checks(text: str, add: list[dict[str, Any]], retire: list[dict[str, str]]) -> str:
    block = checks_block(add, retire)
    return f"{text}\n\n{block}" if block else text


def code_blocks(files: tuple[str, ...], *, multi: bool) -> str:
    return _blocks(languages(multi=multi), files)


def _latest_blocks(earlier: list[dict[str, Any]], langs: tuple[str, ...]) -> tuple[str, ...] | None:
    """The code of the newest earlier message that has every wanted block: an answer of
    the model's, or the platform's note of a restored version or an edit (which carries
    the files)."""
    aliases = {"js": "javascript", "htm": "html"}
    for message in reversed(earlier):
        role = message.get("role")
        note = role == "user" and text_of(message).startswith(PLATFORM_NOTES)
        if role != "assistant" and not note:
            continue
        found: dict[str, str] = {}
        for lang, body in _FENCE.findall(text_of(message)):
            found.setdefault(aliases.get(lang.lower(), lang.lower()), body)
        if all(lang in found for lang in langs):
            return tuple(found[lang] for lang in langs)
    return None


def _blocks(langs: Iterable[str], files: Iterable[str]) -> str:
    return "\n\n".join(
        f"```{lang}\n{body.rstrip()}\n```" for lang, body in zip(langs, files, strict=True)
    )


def _replace_in_page(page: str, old: str | None, new: str, tag: str) -> tuple[str, str] | None:
    """(the page with the element's text replaced, the text replaced) or None when absent."""
    if old is None:
        h1 = H1.search(page)
        if h1 is None:
            return None
        start, end = h1.span(2)
        return page[:start] + page_text(new) + page[end:], html.unescape(h1.group(2).strip())
    for needle in dict.fromkeys((page_text(old), html.escape(old), old)):
        patterns = (
            [rf"(<{re.escape(tag)}\b[^>]*>\s*){re.escape(needle)}(\s*</{re.escape(tag)}>)"]
            if re.fullmatch(r"[a-zA-Z][\w-]*", tag)
            else []
        )
        patterns += [rf"(>\s*){re.escape(needle)}(\s*<)", rf"(){re.escape(needle)}()"]
        for pattern in patterns:
            found = re.search(pattern, page)
            if found:
                replacement = found.group(1) + page_text(new) + found.group(2)
                return page[: found.start()] + replacement + page[found.end() :], old
    return None


def _single_page(title: str, description: str, ui: Ui) -> str:
    css = template("page/style.css")
    return template("page/single.html").format(
        css=textwrap.indent(css, "    "),
        js=textwrap.indent(_script(ui), "    "),
        **_page_texts(title, description, ui),
    )


def _multi_page(title: str, description: str, ui: Ui) -> tuple[str, str, str]:
    page = template("page/index.html").format(**_page_texts(title, description, ui))
    return page, template("page/style.css"), _script(ui)


def _page_texts(title: str, description: str, ui: Ui) -> dict[str, str]:
    return {
        "lang": ui.lang,
        "title": page_text(title),
        "description": page_text(description or title),
        "button": page_text(ui.button),
        "idle": page_text(ui.idle),
    }


def _script(ui: Ui) -> str:
    return template("page/script.js").replace("COUNT_TEXT", ui.count_js)
