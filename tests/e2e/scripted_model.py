"""A scripted OpenAI-compatible model for an html app that repairs naively: it makes a
failing check pass by putting back what the check expects, as a model that never heard of
the builder's edit would (issue 38). A real HTTP server speaking the streaming wire format
(tests/e2e/replay_model.py), so the platform's own ``openai`` client talks to it.

It answers from what it is sent, never from a queue:

- the first request (no page anywhere in the conversation): the Bakery page and its check
  c1, "The heading reads Bakery";
- a repair request ("[zerocode repair …": a check expected the text E and found F): the
  newest page it was shown, with F turned back into E — for a heading the builder edited,
  this undoes the edit;
- the platform saying that answer was not saved ("[zerocode: your last answer was not
  saved …"): the failing check updated instead (retired, and one expecting F added);
- any other request: the newest page it was shown, with a footer added.

Every request and answer is recorded, so a test can tell the revert was really sent.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from tests.e2e.replay_model import SIDE_JOBS, Canned, ReplayModel, text_stream

# A line per element, as models write pages: the builder's edit of the heading is one line.
BAKERY = """<!DOCTYPE html>
<html>
<head>
  <meta charset="UTF-8">
  <title>Our shop</title>
</head>
<body>
  <h1>Bakery</h1>
  <p>Bread from the oven every morning.</p>
</body>
</html>"""
HEADING = {
    "description": "The heading reads Bakery",
    "expect": [{"text": {"css": "h1"}, "equals": "Bakery"}],
}
FOOTER = "  <footer>Open daily</footer>\n</body>"
REPAIR = "[zerocode repair"
REFUSED = "[zerocode: your last answer was not saved"
_PAGE = re.compile(r"```html\n(.*?)\n```", re.S)
# "- c1 "The heading reads Bakery": expect[0]: expected the text of css 'h1' equal to
# 'Bakery', found 'Fresh Bread'" (engine/suite_step.py, adapters/local/chromium_acceptance.py)
_FAILED = re.compile(
    r"- (c\d+) \"([^\"]*)\": expect\[\d+\]: expected the text of css '([^']+)' "
    r"equal to '([^']*)', found '([^']*)'"
)


@dataclass(frozen=True)
class Answered:
    """One request of a turn's work, and what the model answered."""

    kind: str  # first | repair | update | change
    asked: str  # the last user message: what it answered
    answer: str


class RevertingModel(ReplayModel):
    """The naive repairer above; ``answers`` in the order given."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[Answered] = []
        self._mine = threading.Lock()

    def _answer(self, body: dict[str, Any]) -> Canned:
        canned = super()._answer(body)  # records the request; answers the side jobs
        if self.requests[-1].kind in SIDE_JOBS:
            return canned
        messages = body["messages"]
        asked = next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")
        kind, answer = self._reply(messages, asked)
        with self._mine:
            self.answers.append(Answered(kind, asked, answer))
        return text_stream(answer)

    @staticmethod
    def _reply(messages: list[dict[str, Any]], asked: str) -> tuple[str, str]:
        said = [str(m.get("content") or "") for m in messages if m["role"] != "system"]
        pages = [page for text in said for page in _PAGE.findall(text)]
        failed = _FAILED.search(asked)
        if not pages:
            checks = json.dumps({"add": [HEADING]})
            return "first", f"Here is the page.\n```html\n{BAKERY}\n```\n```checks\n{checks}\n```\n"
        if asked.startswith(REFUSED) and failed:
            check, description, css, _, found = failed.groups()
            new = {
                "description": description.replace(failed.group(4), found),
                "expect": [{"text": {"css": css}, "equals": found}],
            }
            update = {"retire": [{"id": check, "reason": "the user changed it"}], "add": [new]}
            why = "The heading is the user's own: I update its check."
            return "update", f"{why}\n```checks\n{json.dumps(update)}\n```\n"
        if asked.startswith(REPAIR) and failed:
            expected, found = failed.group(4), failed.group(5)
            page = pages[-1].replace(f">{found}<", f">{expected}<")
            return "repair", f"Fixed: the check passes again.\n```html\n{page}\n```\n"
        page = pages[-1] if "<footer>" in pages[-1] else pages[-1].replace("</body>", FOOTER)
        return "change", f"Added a footer.\n```html\n{page}\n```\n"
