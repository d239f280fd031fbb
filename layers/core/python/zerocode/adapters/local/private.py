"""The data directory and what the platform keeps in it are private to the platform's user.

The data directory holds password hashes, tokens' hashes, every app's conversation and
files: no other user of the machine may read it. Directories the platform makes are 0700
and its files 0600; ``zerocode serve`` also runs with umask 077, so what any part of it
creates (SQLite's -wal and -shm, workspaces, builds, covers) is private too. The sandbox
is unaffected: bubblewrap bind-mounts a build's own directory (chowned to the box's user,
see ``sandbox.py``) and the toolchain (sealed world-readable, ``toolchain_store.py``) into
the box, so no path above them needs to be open to it.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE, FILE_MODE, UMASK = 0o700, 0o600, 0o077


def private_dir(path: Path) -> Path:
    """``path`` as a directory, each component this call creates 0700 (existing ones are
    left as they are: see :func:`private_data_dir`)."""
    missing = []
    for part in (path, *path.parents):
        if part.exists():
            break
        missing.append(part)
    for part in reversed(missing):
        try:
            os.mkdir(part, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(part, DIR_MODE)  # whatever the umask took away
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a directory")
    return path


def private_data_dir(path: Path) -> Path:
    """The data directory, made if missing and closed (0700) if it is open to others and
    this process owns it. A directory others may write into (sticky, like /tmp) is never
    changed; it gets a warning instead, as does one this process does not own."""
    private_dir(path)
    info = path.stat()
    if not info.st_mode & 0o077:
        return path
    if info.st_uid != os.geteuid() or info.st_mode & stat.S_ISVTX:
        log.warning(
            "the data directory %s is open to other users (mode %o); make it 0700",
            path.resolve(),
            stat.S_IMODE(info.st_mode),
        )
        return path
    os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty with 0600 if missing; close an existing one this process owns
    to 0600."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE))
    except FileExistsError:
        info = path.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
            os.chmod(path, FILE_MODE)
    return path


def write_whole(target: Path, data: bytes) -> None:
    """``data`` as the private file ``target``, whole or not at all: a temporary name in its
    (private) directory, then a rename over it."""
    private_dir(target.parent)
    partial = target.with_name(f".{secrets.token_hex(6)}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
