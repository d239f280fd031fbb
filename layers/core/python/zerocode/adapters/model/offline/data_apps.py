"""The offline model's apps that keep data (issue 39, point 8; docs/data.md): a guestbook
for an html or multi-file request that asks for one. The page uses the platform's client
(``/_api/client.js``); the answer carries the data model as a ```data block (everyone
reads and signs the guestbook, no one changes or deletes an entry) and states a check that
signs it, reloads, and still sees the entry.
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
