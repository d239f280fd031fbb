"""Source and diffs as highlighted HTML for the console's code view (Pygments).

The HTML is Pygments' own: every character of the file is escaped, and the markup holds
only ``<div>``, ``<pre>`` and ``<span class>`` elements, so the console may insert it.
Lexers are chosen by file name only (guessing from content could run any lexer on
anything); an unknown or too large file is shown as plain text.
"""

from __future__ import annotations

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import DiffLexer, TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

MAX_HIGHLIGHT_BYTES = 256 * 1024  # past it, plain text: highlighting costs time per byte
_FORMATTER = HtmlFormatter(cssclass="hl")


def code_html(path: str, data: bytes) -> tuple[str, str]:
    """(language name, highlighted HTML) of a file; binary files get a placeholder."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary", highlight(f"(binary file, {len(data)} bytes)", TextLexer(), _FORMATTER)
    lexer = _lexer(path) if len(data) <= MAX_HIGHLIGHT_BYTES else TextLexer()
    return lexer.name, highlight(text, lexer, _FORMATTER)


def diff_html(diff: str) -> str:
    return highlight(diff, DiffLexer(), _FORMATTER) if diff else ""


def _lexer(path: str) -> Lexer:
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".vue"):  # no Vue lexer in Pygments: templates read well as HTML
        name = name[:-4] + ".html"
    try:
        lexer: Lexer = get_lexer_for_filename(name, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    return lexer
