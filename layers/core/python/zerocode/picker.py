"""The console's element picker in preview pages (never in published sites).

Locally the sites origin adds it when it serves a preview page; on AWS the builder adds it
to a preview build's pages, since CloudFront serves them from S3 as they are.
"""

from __future__ import annotations

from pathlib import Path

PICKER = Path(__file__).parent / "static" / "picker.js"
PICKER_PATH = "/__zerocode/picker.js"  # on the local sites origin
PICKER_FILE = "__zerocode/picker.js"  # inside a preview build's output


def with_picker(page: bytes, relative: bool = False) -> bytes:
    """``page`` with a script tag loading the picker, before ``</body>`` if there is one."""
    src = PICKER_FILE if relative else PICKER_PATH
    tag = f'<script src="{src}" defer></script>'.encode()
    at = page.lower().rfind(b"</body>")
    return page[:at] + tag + page[at:] if at >= 0 else page + tag
