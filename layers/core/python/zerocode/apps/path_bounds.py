"""How long a path may be: one rule for every place a path is taken.

Source paths (tools, hand edits, reads: :func:`zerocode.apps.workspace.clean_path`) and output
paths (a build's hand-over: :mod:`zerocode.publishing.output_archive`, the AWS site) are held
to the same byte bounds, counted in UTF-8 as file systems and S3 count them: at most
:data:`MAX_PART_BYTES` per name part (what Linux file systems hold; a longer one is
``ENAMETOOLONG``, once a 500 and a reset connection) and :data:`MAX_PATH_BYTES` in all (S3's
key limit, and well within ``PATH_MAX``). A path over either is refused with this reason
before any storage sees it.
"""

from __future__ import annotations

MAX_PART_BYTES = 255
MAX_PATH_BYTES = 1024
BOUNDS = f"at most {MAX_PART_BYTES} bytes per name and {MAX_PATH_BYTES} bytes per path, in UTF-8"


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8; a lone surrogate counts its three bytes instead of failing."""
    return len(text.encode("utf-8", "surrogatepass"))


def shown(path: str) -> str:
    """``path`` quoted for a message, its first 80 characters: a refused path may be long."""
    return repr(path[:80]) + ("…" if len(path) > 80 else "")


def too_long(path: str) -> str | None:
    """Why ``path`` (``/``-separated) is too long, for people, or None when it is not."""
    size = utf8_size(path)
    if size > MAX_PATH_BYTES:
        return f"a path longer than {MAX_PATH_BYTES} bytes ({size} bytes in UTF-8)"
    longest = max((utf8_size(part) for part in path.split("/")), default=0)
    if longest > MAX_PART_BYTES:
        return f"a part longer than {MAX_PART_BYTES} bytes ({longest} bytes in UTF-8)"
    return None
