"""Input guards for what people type: length, and known prompt-override phrases.

The guard is a tripwire, not a wall: the model's instructions and the tool
sandbox are what keep a turn safe. It refuses the well-known phrasings that try
to make the model drop its instructions, with a 400 that names what matched,
so a person who tripped it by accident can rephrase.
"""

from __future__ import annotations

import re
import unicodedata

from zerocode.errors import InvalidInput

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
    if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in clean):
        raise InvalidInput(f"{field} contains control characters")
    if any(unicodedata.category(c) == "Cs" for c in clean):  # no store can hold one
        raise InvalidInput(f"{field} contains a lone UTF-16 surrogate, which is not text")
    folded = " ".join(unicodedata.normalize("NFKC", clean).lower().split())
    for name, pattern in _OVERRIDES:
        if pattern.search(folded):
            raise InvalidInput(
                f"{field} looks like a prompt-injection attempt "
                f"(“{name}”); please rephrase your request"
            )
    return clean
