"""The name the offline model gives an app: its answer to the naming prompt, and the heading
and title of the page it writes.

The name is what the prompt asks for, not how it asks: the request phrasing ("Make a",
"Build me a simple", "做一个", "帮我做一个", "我想要一个", "…を作って") is left out, and so
are the words naming how it is built (Vue, router, single-page, 单页应用, 多文件的) and a
trailing "page / app / website / 网页 / 应用 / 网站" when what is left is still a name (two
English words, three CJK characters: "Landing Page" and "待办应用" keep theirs). Only the
prompt's first clause is read (it ends at a comma, a colon, "with", "that", "for", "，", "带",
"可以" …; a clause that names nothing, as in "A page about newts", passes on to the next).
"called X" / "叫 X" names it X. English words are title-cased (words already capitalised
inside, like "iPhone", are kept), and the name is cut at a word (CJK: a character) to at most
:data:`NAME_LIMIT` characters, the naming prompt's bound. A prompt that names nothing gets
"My App" in its language.
"""

from __future__ import annotations

import re

from zerocode.adapters.model.offline.language import ui_for

NAME_LIMIT = 30  # engine/prompts/naming.md: "at most 30 characters"

_FLAGS = re.IGNORECASE | re.VERBOSE
_CALLED = re.compile(
    r"""(?:(?<![A-Za-z])(?:called|named|titled)\s+|叫做?|名为|名叫|名字叫|标题为|标题是)\s*
    ["“「《']?([^"”」》',.;:!?，。；：！？\n]+)""",
    _FLAGS,
)
# Where the first clause ends: what follows says what the app does or has, not what it is.
_CLAUSE = re.compile(
    r"""[,;:!?()\[\]{}<>"“”|]|\.(?!\w)|\s[-–—]\s|[–—]
    |\s(?:with|that|which|where|who|whose|using|showing|including|featuring|containing
        |allowing|letting)\s
    |[，。；：！？、（）【】「」《》]|带有|带着|带|包含|包括|支持|可以|能够|用来|用于|里面|其中|并且|以及""",
    _FLAGS,
)
# Inside the first clause: what the app is about, its name when the rest names nothing ("A
# page about newts", "A landing page for a bakery").
_SUBJECT = re.compile(r"(?:^|\s)(?:about|for|to)\s", _FLAGS)
# How it is built, anywhere in the clause (Latin words bounded by "no Latin letter or digit":
# there is no \b between a CJK character and a Latin one).
_HOW = re.compile(
    r"""(?<![A-Za-z0-9])(?:vue(?:\.?js)?\s*\d*(?:[\s-]router)?|react(?:\.?js)?|svelte|angular
        |vite|html5?|css3?|javascript|typescript|js|tailwind(?:\s*css)?|router|spa
        |single[\s-]page(?:\s+(?:app|application))?|one[\s-]page|multi[\s-]?page
        |multi[\s-]?file|three[\s-]file)(?![A-Za-z0-9])
    |单页面?应用|单页面?的?|多页面的?|多文件的?|单文件的?|带路由的?|路由|静态的?|响应式的?""",
    _FLAGS,
)
# The request phrasing before the name, one piece at a time (stripped until none is left).
_LEAD = re.compile(
    r"""^(?:(?:please|pls|hey|hi|hello|ok|okay|so|now|(?:can|could|would|will)\s+you
        |i(?:'d|\s+would)\s+like(?:\s+you)?(?:\s+to)?|i\s+(?:want|need|wanna)(?:\s+you)?(?:\s+to)?
        |help\s+me(?:\s+to)?|let'?s|let\s+me|put\s+together|set\s+up|whip\s+up
        |(?:make|build|create|generate|write|design|code|develop|give|draft|produce|implement
           |craft)(?:\s+(?:me|us))?
        |a|an|the|some|my|our|your|one
        |simple|small|little|basic|tiny|quick|nice|cool|new|beautiful|modern|clean|minimal
        |minimalist|pretty|fancy|fun|interactive|responsive|static|lightweight
        )(?![A-Za-z0-9_'-])
     |请你?|麻烦你?|帮我|帮忙|给我|为我|替我|你能不能|能不能|能否|可不可以|你可以|可以|我想要?
     |我要|我需要|想要|希望|需要|来(?=一|个)|使?用\s*[A-Za-z][\w.+-]*(?:\s*(?:和|\+|加)\s*[A-Za-z][\w.+-]*)*
     |(?:创建|新建|生成|开发|设计|搭建|制作|实现|编写|构建)(?:一下)?
     |(?:做|写|建|弄|整)(?:一下)?\s*(?=一|个|款|张|份|套)
     |一个|一款|一份|一张|一套|一页|个(?![人性体])|款
     |简单的?|简易的?|漂亮的|好看的|精美的|基本的|基础的|小巧的)[\s,，]*""",
    _FLAGS,
)
_TAIL = re.compile(
    r"""(?:\s+(?:please|for\s+me|for\s+us|thanks|thank\s+you)|吧|吗|呢|谢谢|，?谢谢你?
    |(?:を|が)?(?:作って|作成して|作りたい|作る|ください|下さい|ほしい|欲しい|お願いします?)
    )\s*$""",
    _FLAGS,
)
_CONNECTOR = re.compile(
    r"""^(?:(?:in|on|with|using|built|made|written|by|and|of|a|an|the|for|to|via|from|as)
        (?![A-Za-z0-9_'-])|的|用|和|来|关于)\s*
    |(?<![A-Za-z0-9_'-])(?:in|on|with|using|built|made|written|by|and|of|a|an|the|for|to|via
        |from|as)\s*$|的\s*$""",
    _FLAGS,
)
_NOISE = re.compile(
    r"""(?:(?<![A-Za-z0-9])(?:(?:landing|home|web)\s*page|webpage|page|web\s*app|webapp|app|application|website
        |web\s*site|site|project)|网页|页面|网站|应用程序|应用|小程序|程序|项目|工程
        |ウェブアプリ|アプリ|ページ|サイト)\s*$""",
    _FLAGS,
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_SMALL = frozenset(
    {"a", "an", "the", "and", "or", "of", "in", "on", "at", "for", "to", "with", "by"}
)


def app_name(description: str, limit: int = NAME_LIMIT) -> str:
    """The app's name for this prompt (see the module), at most ``limit`` characters."""
    text = " ".join(description.split())
    called = _CALLED.search(text)
    if called is not None:
        named = _tidy(called.group(1))
        if named:
            return _fit(_title_case(named), limit)
    clauses = _CLAUSE.split(_strip(_HOW.sub(" ", text), _LEAD))
    head, *subjects = _SUBJECT.split(next((c for c in clauses if c and c.strip()), ""))
    name = _name_of(head) or next(filter(None, map(_name_of, subjects)), "") or _kind(head)
    return _fit(name, limit) if name else ui_for(text).unnamed


def _name_of(clause: str) -> str:
    """The name a clause gives, "" when it names nothing (request words and noise only)."""
    text = _tidy(clause)
    noise = _NOISE.search(text)
    if noise is None:
        return _title_case(text)
    rest = _tidy(text[: noise.start()])
    if not rest:
        return ""
    if _substantial(rest):
        return _title_case(rest)
    joint = "" if _CJK.match(noise.group(0)) or _CJK.search(rest[-1:]) else " "
    return _title_case(f"{rest}{joint}{noise.group(0).strip()}")


def _kind(clause: str) -> str:
    """The kind of app a clause names, when it is all it names and is enough to name an app
    ("Landing Page"; not "Page")."""
    text = _tidy(clause)
    return _title_case(text) if _substantial(text) else ""


def _tidy(text: str) -> str:
    """The text without request phrasing or connectors at either end."""
    while True:
        before = text
        text = _strip(text, _LEAD)
        text = _strip(_TAIL.sub("", text), _CONNECTOR)
        if text == before:
            return text


def _strip(text: str, pattern: re.Pattern[str]) -> str:
    while True:
        stripped = " ".join(pattern.sub("", text.strip(), count=1).split())
        if stripped == text:
            return text
        text = stripped


def _substantial(text: str) -> bool:
    """Whether a name is enough without its "app": two words, or three CJK characters."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text)) / 1.5 >= 2


def _title_case(text: str) -> str:
    seen = 0

    def cap(found: re.Match[str]) -> str:
        nonlocal seen
        word, seen = found.group(0), seen + 1
        if word != word.lower() or (seen > 1 and word in _SMALL):
            return word
        return word[:1].upper() + word[1:]

    return _WORD.sub(cap, text)


def _fit(name: str, limit: int) -> str:
    """The name cut at a word to ``limit`` characters (at a character when no word fits)."""
    if len(name) <= limit:
        return name
    words = name.split(" ")
    fitted = ""
    for word in words:
        candidate = f"{fitted} {word}".strip()
        if len(candidate) > limit:
            break
        fitted = candidate
    return fitted or name[:limit].rstrip()
