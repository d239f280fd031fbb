"""A build's output, handed over as one archive and unpacked by strict rules.

What a build box leaves is untrusted data: the code it ran was the model's. So the host never
walks a box's tree by name (a ``dist`` the box replaced by a link once published another
user's workspace); a tool inside the box writes its output as one tar stream and the host
unpacks that stream here, into a fresh directory of its own, accepting only:

- regular files and directories: links (symbolic or hard), devices, FIFOs, sparse files are
  refused;
- names under the one expected root (``dist/``), relative, with no empty, ``.`` or ``..``
  part, no backslash, no control, bidi or other invisible character, each part at most 255
  bytes, each name at most 1024 (:mod:`zerocode.apps.path_bounds`, the rule of every path),
  none twice;
- at most ``max_files`` entries and ``max_bytes`` of file data, read through a reader that
  never takes more than that (plus headers) from the stream.

Anything else fails the build with a reason for people (:class:`OutputRefused`). Modes,
owners and times in the archive are ignored. The same rules serve every place output leaves
a box (local builds now; the AWS build's uploaded archive later).
"""

from __future__ import annotations

import os
import tarfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol, cast

from zerocode.apps.path_bounds import too_long

MAX_FILES = 5_000
MAX_BYTES = 100 << 20
_HEADER_SLACK = 8 << 20  # tar headers, pax records and padding on top of the file data


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class OutputRefused(Exception):
    """The output broke a rule; the message says which, for people."""


@dataclass(frozen=True)
class Unpacked:
    files: int
    bytes: int


class _Bounded:
    """A read-only stream that refuses to yield more than ``limit`` bytes in all, and keeps
    the last bytes it yielded (where tarfile stopped is checked against them)."""

    KEEP = 64 << 10

    def __init__(self, raw: Readable, limit: int) -> None:
        self.raw, self.left = raw, limit
        self.position = 0
        self.kept = bytearray()  # the bytes before ``position``, at most KEEP

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or size > self.left:
            size = self.left + 1  # one more than allowed tells an overrun from the end
        data = self.raw.read(size)
        self.left -= len(data)
        if self.left < 0:
            raise OutputRefused("the build's output archive is larger than allowed")
        self.position += len(data)
        self.kept += data
        if len(self.kept) > 2 * self.KEEP:
            del self.kept[: len(self.kept) - self.KEEP]
        return data

    def only_zeros_after(self, offset: int) -> bool:
        """Whether everything from ``offset`` to the stream's end is zero, and is at least the
        end marker: tarfile ends at an empty header, but also, silently, at a damaged one or
        at the end of a stream that was cut."""
        back = self.position - offset
        if back < 0 or back > len(self.kept):
            return False
        if any(self.kept[len(self.kept) - back :]):
            return False
        zeros = back
        while chunk := self.read(1 << 16):
            if any(chunk):
                return False
            zeros += len(chunk)
        return zeros >= 1024  # the end marker: two empty blocks, or the archive was cut


def refuse_name(name: str) -> str | None:
    """Why ``name`` cannot be a path of the output, or None: the output rule, for the
    archive's names and for a site's paths alike (a site may hold ``dist/``, which no source
    path may: Vite copies ``public/dist/a.txt`` to the site's ``dist/a.txt``)."""
    if not name or name.startswith("/") or "\\" in name:
        return "an absolute or empty name"
    why = too_long(name)
    if why is not None:
        return why
    for ch in name:
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"a control or invisible character (U+{ord(ch):04X})"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "an empty, '.' or '..' part"
    return None


def unpack(
    stream: Readable,
    dest: Path,
    root: str = "dist",
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
) -> Unpacked:
    """Unpack the tar ``stream`` of the directory ``root`` into ``dest`` (which must not
    exist: it is made here, with everything under it), by the rules above. Raises
    :class:`OutputRefused`; what was written is left for the caller to remove."""
    dest.mkdir()
    reader = _Bounded(stream, max_bytes + _HEADER_SLACK)
    taken = _Unpacking(dest, root, max_files, max_bytes)
    try:
        with tarfile.open(
            fileobj=cast(IO[bytes], reader),  # tarfile's stream mode only calls read()
            mode="r|",
            encoding="utf-8",
            errors="strict",
        ) as archive:
            for member in archive:
                taken.take(archive, member)
            if not reader.only_zeros_after(archive.offset):
                raise OutputRefused(
                    f"the build's output archive is damaged after {taken.entries} entries"
                )
    except (tarfile.TarError, UnicodeError, EOFError) as exc:
        raise OutputRefused(f"the build's output archive could not be read ({exc})") from None
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        raise OutputRefused(
            "the build's output holds a name that is both a file and a directory"
        ) from None
    if not taken.rooted:
        raise OutputRefused(f"the build left no {root}/ directory")
    return Unpacked(taken.files, taken.total)  # what else the output must hold, the caller checks


@dataclass
class _Unpacking:
    """One unpack: its rules' bounds, and what it has taken so far. Each member is checked
    by every rule, in this order, before anything of it is written."""

    dest: Path
    root: str
    max_files: int
    max_bytes: int
    seen: set[str] = field(default_factory=set)
    files: int = 0
    total: int = 0  # bytes of file data
    entries: int = 0  # files and directories under the root
    rooted: bool = False  # the root directory was listed

    def take(self, archive: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        rel = self._under_root(member)
        if rel is None:
            return
        self._admit(member, rel)
        target = self.dest / rel
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            return
        self._write(archive, member, rel, target)

    def _under_root(self, member: tarfile.TarInfo) -> str | None:
        """The rules on names: the member's path under the root, or None for the root
        itself (a directory, listed before what it holds)."""
        name = member.name[:-1] if member.name.endswith("/") else member.name
        if name.startswith("./"):
            name = name[2:]
        shown = repr(name[:120])
        why = refuse_name(name)
        if why is not None:
            raise OutputRefused(f"the build's output holds {shown}: {why}")
        root = self.root
        if name == root:
            if not member.isdir():
                raise OutputRefused(
                    f"the build's {root}/ is not a directory (a link, say): nothing was published"
                )
            self.rooted = True
            return None
        if not self.rooted:  # tar lists a directory before what it holds
            raise OutputRefused(f"the build's output holds {shown}, outside {root}/")
        if not name.startswith(root + "/"):
            raise OutputRefused(f"the build's output holds {shown}, outside {root}/")
        return name[len(root) + 1 :]

    def _admit(self, member: tarfile.TarInfo, rel: str) -> None:
        """The rules on kinds (regular files and directories only) and counts (each name
        once, at most ``max_files``)."""
        if member.issym() or member.islnk():
            raise OutputRefused(
                f"the build's output holds a link ({rel[:120]!r}): only regular files "
                "and directories are published"
            )
        if member.issparse() or not (member.isreg() or member.isdir()):
            raise OutputRefused(
                f"the build's output holds {rel[:120]!r}, which is neither a regular "
                "file nor a directory"
            )
        if rel in self.seen:
            raise OutputRefused(f"the build's output holds {rel[:120]!r} twice")
        self.seen.add(rel)
        self.entries += 1
        if self.entries > self.max_files:
            raise OutputRefused(f"the build's output holds more than {self.max_files} files")

    def _write(
        self, archive: tarfile.TarFile, member: tarfile.TarInfo, rel: str, target: Path
    ) -> None:
        """A regular file's data, within ``max_bytes`` in all, into a new file that no link
        can redirect (``O_EXCL | O_NOFOLLOW``), whole or refused."""
        self.total += member.size
        if self.total > self.max_bytes:
            raise OutputRefused(f"the built site is larger than {self.max_bytes >> 20} MiB")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = archive.extractfile(member)
        assert data is not None  # a regular file always has data
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        written = 0
        with os.fdopen(fd, "wb") as out:
            while chunk := data.read(1 << 16):
                out.write(chunk)
                written += len(chunk)
        if written != member.size:
            raise OutputRefused(f"the build's output archive is cut short ({rel[:120]!r})")
        self.files += 1
