"""Input guards for what people type: length, and known prompt-override phrases.

The guard is a tripwire, not a wall: the model's instructions and the tool
sandbox are what keep a turn safe. It refuses the well-known phrasings that try
to make the model drop its instructions, with a 400 that names what matched,
so a person who tripped it by accident can rephrase.

Phrases are matched on a folded copy of the text (:func:`fold`), so the look of a phrase
is what counts, not its code points: NFKC (fullwidth and other compatibility forms),
invisible format characters dropped (zero-width spaces and joiners, the soft hyphen, bidi
controls, variation selectors, tag characters), combining marks dropped, common Cyrillic
and Greek look-alikes read as the Latin letters they imitate, case folded, whitespace
collapsed. Invisible characters are tried both dropped and read as spaces (a zero-width
space between two words). What is stored is the text as typed; only bidi controls are
refused outright (:func:`refuse_bidi`), in every text that is stored and shown again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from zerocode.errors import InvalidInput

# Bidirectional controls: they make stored text display in another order than it is
# stored (and than the model reads it), so no stored text may hold one.
MAX_MESSAGE = 8_000  # characters of a prompt or a chat message (ZEROCODE_MAX_MESSAGE_CHARS)
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
# Invisible, yet not in category Cf: the combining grapheme joiner, Hangul fillers and
# Mongolian variation selectors (variation selectors proper: _variation_selector).
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u3164\uffa0\u180b\u180c\u180d\u180f")
# Letters of other scripts that look like Latin ones, read before and after case folding
# (accented ones are bare by then). Unicode's confusables list is far longer; these are the
# ones that pass for English words.
_CONFUSABLES = str.maketrans(
    "авсԁеһніӏјкмпорԛгѕтуүхԝѡьѵ"  # Cyrillic
    "αβεηικνορτυχωγϲςϳζμ"  # Greek (NFKC makes ϲ a ς)
    "ıȷɡɑǀʟɪᴅᴇᴏʀ",  # Latin look-alikes NFKC keeps
    "abcdehhiljkmnopqrstyyxwwbvabenikvoptuxwyccjzuijgallideor",
)

_OVERRIDES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(rx))
    for name, rx in [
        (
            "ignore previous instructions",
            r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+)*"
            r"(previous|prior|above|earlier|system|original)\s+(instructions|prompts?|rules|messages)",
        ),
        (
            "forget your instructions",
            r"\bforget\s+(all\s+)?(your|the)\s+(instructions|rules|guidelines)",
        ),
        (
            "reveal the system prompt",
            r"\b(reveal|print|show|repeat|output|leak)\s+(me\s+)?(your|the)\s+"
            r"(system\s+prompt|hidden\s+instructions|initial\s+instructions)",
        ),
        (
            "jailbreak persona",
            r"\b(you\s+are\s+now\s+(dan|in\s+developer\s+mode|unrestricted|jailbroken)|"
            r"developer\s+mode\s+enabled|do\s+anything\s+now)\b",
        ),
        (
            "忽略之前的指令",
            r"(忽略|无视|忘记|忘掉)(之前|以上|前面|上面|所有|你的)+的?(所有)?"
            r"(指令|指示|提示词?|规则|设定)",
        ),
        ("输出系统提示词", r"(输出|显示|告诉我|泄露|打印)(你的)?(系统提示词?|系统指令|初始指令)"),
    ]
]


def check_text(text: str, *, field: str, max_chars: int) -> str:
    """The text, stripped; or InvalidInput saying what is wrong with it."""
    clean = text.strip()
    if not clean:
        raise InvalidInput(f"{field} is empty")
    if len(clean) > max_chars:
        raise InvalidInput(f"{field} is longer than {max_chars} characters ({len(clean)})")
    check_characters(clean, field=field)
    check_overrides(clean, field=field)
    return clean


def check_characters(text: str, *, field: str) -> None:
    """InvalidInput for characters no stored text may hold: control characters (but newline
    and tab), lone surrogates and bidi controls."""
    if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in text):
        raise InvalidInput(f"{field} contains control characters")
    if any(unicodedata.category(c) == "Cs" for c in text):  # no store can hold one
        raise InvalidInput(f"{field} contains a lone UTF-16 surrogate, which is not text")
    refuse_bidi(text, field=field)


def refuse_bidi(text: str, *, field: str) -> None:
    """InvalidInput when ``text`` holds a bidirectional control character."""
    found = sorted({f"U+{ord(c):04X}" for c in text if c in BIDI_CONTROLS})
    if found:
        raise InvalidInput(
            f"{field} contains bidirectional control characters ({', '.join(found)}), which "
            "make text display in another order than it is written; remove them"
        )


def check_overrides(text: str, *, field: str) -> None:
    """InvalidInput naming the override phrase ``text`` holds, however it is spelled."""
    for folded in fold(text):
        for name, pattern in _OVERRIDES:
            if pattern.search(folded):
                raise InvalidInput(
                    f"{field} looks like a prompt-injection attempt "
                    f"(“{name}”); please rephrase your request"
                )


def check_element(element: Mapping[str, Any], *, prefix: str = "element") -> None:
    """The picked element's fields go to the model with the message: the same characters
    are refused and the same phrases looked for in each (``element.text`` etc.)."""
    for key, value in element.items():
        if isinstance(value, str):
            check_characters(value, field=f"{prefix}.{key}")
            check_overrides(value, field=f"{prefix}.{key}")


def invisible(c: str) -> bool:
    """Whether ``c`` is an invisible character: a format character (category Cf: zero-width
    spaces and joiners, bidi controls, BOM...), a variation selector or another blank one."""
    return unicodedata.category(c) == "Cf" or c in _INVISIBLE_EXTRA or _variation_selector(c)


def _variation_selector(c: str) -> bool:
    o = ord(c)
    return 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF


def fold(text: str) -> tuple[str, str]:
    """``text`` as the phrases are matched against it: invisible characters dropped, and
    read as spaces (both kinds of spelling hide a phrase, so both are tried)."""
    return _fold(text, ""), _fold(text, " ")


def _fold(text: str, blank: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "".join(blank if invisible(c) else c for c in text)
    # Combining marks off (an accent or a dot stacked on a letter changes no reading).
    text = "".join(
        c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn"
    )
    # Look-alikes read before and after case folding (which makes some into others: ϲ to σ).
    text = unicodedata.normalize("NFKC", text).translate(_CONFUSABLES)
    text = text.casefold().translate(_CONFUSABLES)
    return " ".join(text.split())
