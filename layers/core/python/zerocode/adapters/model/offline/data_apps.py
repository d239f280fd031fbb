"""The offline model's apps that keep data (issue 39, point 8; docs/data.md).

- A guestbook, for an html or multi-file request that asks for one: the page uses the
  platform's client (``/_api/client.js``); the answer carries the data model as a ```data
  block (everyone reads and signs the guestbook, no one changes or deletes an entry) and
  states a check that signs it, reloads, and still sees the entry.
- Notes with sign-in, for a Vue request about notes: the home view signs the app's own
  users up and in and keeps each one's notes (``owner`` rules), ``zerocode.data.json``
  written beside the project; its check signs up, adds a note, reloads and still sees it.
  With ``[[flaw=leaky]]`` its rules let anyone read, change and delete anyone's notes; the
  repair after the platform's access probe writes them as ``owner``.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from zerocode.adapters.model.offline.base import Request, page_text, template
from zerocode.adapters.model.offline.checks import heading
from zerocode.adapters.model.offline.language import language_of
from zerocode.adapters.model.offline.names import app_name

_GUESTBOOK = re.compile(r"guest ?book|visitors'? book|留言板|留言簿|访客簿", re.IGNORECASE)
_NOTES = re.compile(r"(?<![a-z])notes?(?![a-z])|note-taking|笔记|备忘", re.IGNORECASE)
NOTED = "Signing up and adding “{}” keeps the note after a reload"
STRANGER = "A new visitor does not see “{}”, someone else's note, and is asked to sign up"
CHECK_NOTE = "Buy flour"
CHECK_USER, CHECK_PASSWORD = "checker", "a long password"
LEAKY = "[[flaw=leaky]]"
SIGNED = "Signing with “{}” keeps the entry after a reload"
CHECK_MESSAGE = "Hello from the acceptance check"


@dataclass(frozen=True)
class Words:
    message: str
    sign: str
    entries: str
    thanks: str


WORDS = {
    "en": Words("Your message", "Sign the guestbook", "Entries", "Thank you for signing!"),
    "zh": Words("你的留言", "签名留言", "留言", "谢谢你的留言！"),
}

MODEL: dict[str, Any] = {
    "collections": {
        "entries": {
            "fields": {"message": {"type": "text", "required": True, "max": 500}},
            "rules": {
                "list": "public",
                "read": "public",
                "create": "public",
                "update": "nobody",
                "delete": "nobody",
            },
            "seed": [{"message": "Welcome! Leave a message below."}],
        }
    }
}

NOTES_MODEL: dict[str, Any] = {
    "collections": {
        "notes": {
            "fields": {"title": {"type": "text", "required": True, "max": 200}},
            "rules": {
                "list": "owner",
                "read": "owner",
                "create": "signed-in",
                "update": "owner",
                "delete": "owner",
            },
        }
    }
}
NOTES_WORDS = {
    "en": {
        "USERNAME_TEXT": "Username",
        "PASSWORD_TEXT": "Password",
        "SIGN_UP_TEXT": "Sign up",
        "SIGN_IN_TEXT": "Sign in",
        "SIGNED_IN_TEXT": "Signed in as",
        "SIGN_OUT_TEXT": "Sign out",
        "NOTE_TEXT": "New note",
        "ADD_TEXT": "Add note",
        "REMOVE_TEXT": "Delete",
    },
    "zh": {
        "USERNAME_TEXT": "用户名",
        "PASSWORD_TEXT": "密码",
        "SIGN_UP_TEXT": "注册",
        "SIGN_IN_TEXT": "登录",
        "SIGNED_IN_TEXT": "已登录：",
        "SIGN_OUT_TEXT": "退出登录",
        "NOTE_TEXT": "新笔记",
        "ADD_TEXT": "添加笔记",
        "REMOVE_TEXT": "删除",
    },
}
_NOTES_WORD = re.compile(r"\b(?:TITLE|DESCRIPTION|" + "|".join(NOTES_WORDS["en"]) + r")\b")

EXTRA_CSS = """form { display: grid; gap: .5rem; margin: 1rem 0; }
textarea { min-height: 5rem; padding: .5rem; font: inherit; border: 1px solid #6b7280;
  border-radius: .5rem; }
#entries { padding-left: 1.2rem; }
"""


def is_guestbook(req: Request) -> bool:
    return bool(_GUESTBOOK.search(req.description))


def guestbook_files(req: Request, *, multi: bool) -> tuple[str, ...]:
    """(index.html,) or (index.html, style.css, script.js), in the request's language."""
    title = app_name(req.description)
    lang = language_of(req.description)
    words = WORDS["zh" if lang == "zh" else "en"]
    css = template("page/style.css") + EXTRA_CSS
    script = template("page/guestbook.js").replace("THANKS", words.thanks)
    if multi:
        style = '<link rel="stylesheet" href="style.css">'
        tag = '<script type="module" src="script.js"></script>'
    else:
        style = "<style>\n" + textwrap.indent(css, "    ") + "  </style>"
        tag = '<script type="module">\n' + textwrap.indent(script, "    ") + "  </script>"
    page = template("page/guestbook.html").format(
        lang={"zh": "zh-CN"}.get(lang, lang),
        title=page_text(title),
        description=page_text(req.description or title),
        message=page_text(words.message),
        sign=page_text(words.sign),
        entries=page_text(words.entries),
        style=style,
        script=tag,
    )
    return (page, css, script) if multi else (page,)


def data_block() -> str:
    return "```data\n" + json.dumps(MODEL, indent=2, ensure_ascii=False) + "\n```"


def guestbook_checks(req: Request) -> list[dict[str, Any]]:
    """The heading, and that an entry signed is still listed after a reload."""
    lang = language_of(req.description)
    words = WORDS["zh" if lang == "zh" else "en"]
    signed = {
        "description": SIGNED.format(CHECK_MESSAGE),
        "steps": [
            {"goto": "/"},
            {"fill": {"label": words.message}, "value": CHECK_MESSAGE},
            {"click": {"role": "button", "name": words.sign}},
            {"wait": 500},
            {"goto": "/"},
            {"wait": 500},
        ],
        "expect": [
            {"visible": {"text": CHECK_MESSAGE}},
            {"noConsoleErrors": True},
        ],
    }
    title = heading(app_name(req.description))
    return [c for c in (title, signed) if c is not None]


def is_notes(req: Request) -> bool:
    return bool(_NOTES.search(req.description))


def _words(description: str) -> dict[str, str]:
    return NOTES_WORDS["zh" if language_of(description) == "zh" else "en"]


def notes_view(title: str, description: str, raw: str) -> str:
    """The notes home view; ``title`` and ``description`` already as Vue template text,
    ``raw`` the request (its language)."""
    values = {**_words(raw), "TITLE": title, "DESCRIPTION": description}
    return _NOTES_WORD.sub(lambda found: values[found.group(0)], template("vue/NotesView.vue"))


def notes_model(*, leaky: bool = False) -> str:
    """The notes' data model; ``leaky`` (the ``[[flaw=leaky]]`` trigger): each user lists
    only their own notes, but anyone reads, changes and deletes anyone's, which the
    platform's access probe catches and the repair makes ``owner``."""
    model = json.loads(json.dumps(NOTES_MODEL))
    if leaky:
        rules = model["collections"]["notes"]["rules"]
        rules.update({"read": "public", "update": "public", "delete": "public"})
    return json.dumps(model, indent=2) + "\n"


def is_leaky(req: Request) -> bool:
    return LEAKY in req.triggers and is_notes(req)


def _signed_up_with_a_note(words: dict[str, str]) -> list[dict[str, Any]]:
    """The steps of a visitor who signs up and adds the check's note."""
    return [
        {"goto": "/"},
        {"fill": {"label": words["USERNAME_TEXT"]}, "value": CHECK_USER},
        {"fill": {"label": words["PASSWORD_TEXT"]}, "value": CHECK_PASSWORD},
        {"click": {"role": "button", "name": words["SIGN_UP_TEXT"]}},
        {"wait": 500},
        {"fill": {"label": words["NOTE_TEXT"]}, "value": CHECK_NOTE},
        {"click": {"role": "button", "name": words["ADD_TEXT"]}},
        {"wait": 500},
    ]


def new_visitor_check(req: Request) -> dict[str, Any]:
    """Sign up, add a note, come back as a new visitor: the note is nobody else's."""
    words = _words(req.description)
    return {
        "description": STRANGER.format(CHECK_NOTE),
        "steps": [
            *_signed_up_with_a_note(words),
            {"newVisitor": True},
            {"wait": 500},
        ],
        "expect": [
            {"hidden": {"text": CHECK_NOTE}},
            {"visible": {"role": "button", "name": words["SIGN_UP_TEXT"]}},
            {"noConsoleErrors": True},
        ],
    }


def notes_check(req: Request) -> dict[str, Any]:
    """Sign up, add a note, reload: the note is still there (the session and the data)."""
    words = _words(req.description)
    return {
        "description": NOTED.format(CHECK_NOTE),
        "steps": [
            *_signed_up_with_a_note(words),
            {"reload": True},
            {"wait": 500},
        ],
        "expect": [{"visible": {"text": CHECK_NOTE}}, {"noConsoleErrors": True}],
    }
