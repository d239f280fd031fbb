"""The console's element picker in preview pages (never in published sites).

Locally the sites server adds it when it serves a preview page; on AWS the builder adds it
to a preview build's pages, since CloudFront serves them from S3 as they are.

The console frames a preview with ``sandbox="allow-scripts allow-forms"`` (an opaque origin)
and the two talk only by postMessage. The picker obeys commands from its parent window only,
and only from a console origin: the ones written into the script here (a configured value:
``picker_script``), or, where none were written (the copy in AWS preview builds), the one
origin the console names in the frame's name, ``zerocode-console {origin}``. It posts only to
that origin (docs/security.md, "Origins and the console").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

PICKER = Path(__file__).parent / "static" / "picker.js"
PICKER_PATH = "/__zerocode/picker.js"  # on the local sites server, on every app's host
PICKER_FILE = "__zerocode/picker.js"  # inside a preview build's output
CONSOLES_MARK = b"/*zerocode:consoles*/"
ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")


def picker_script(consoles: Iterable[str] = ()) -> bytes:
    """picker.js, obeying only the console origins given (none: the frame's name decides)."""
    listed = [o.rstrip("/") for o in consoles]
    bad = [o for o in listed if not ORIGIN.match(o)]
    if bad:
        raise ValueError(f"not an origin (scheme://host[:port]): {bad[0]!r}")
    source = PICKER.read_bytes()
    assert CONSOLES_MARK in source
    return source.replace(CONSOLES_MARK, json.dumps(listed)[1:-1].encode())


def with_picker(page: bytes, *, relative: bool = False) -> bytes:
    """``page`` with a script tag loading the picker, before ``</body>`` if there is one."""
    src = PICKER_FILE if relative else PICKER_PATH
    tag = f'<script src="{src}" defer></script>'.encode()
    at = page.lower().rfind(b"</body>")
    return page[:at] + tag + page[at:] if at >= 0 else page + tag
