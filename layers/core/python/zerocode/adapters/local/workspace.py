"""Local Workspace: one directory per app under a root directory.

The sandbox does not trust the tree it finds: a build step or a checked-out
project may contain symbolic links. Reads resolve the real path and refuse
anything outside the app directory. Writes and deletes never follow a link at
all: they walk the path one directory file descriptor at a time with
``O_NOFOLLOW``, so a link swapped in between a check and the write cannot
redirect it. Writes go to a temporary file in the same directory and are
renamed over the target, so a reader never sees half a file.

A name the file system itself refuses although the path rules let it through (too long for
it: ``ENAMETOOLONG``, or bytes it does not take: ``EILSEQ``) is :class:`PathRefused`, never
a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from zerocode.adapters.local.private import DIR_MODE, FILE_MODE, private_dir
from zerocode.apps.path_bounds import shown
from zerocode.apps.workspace import (
    DEFAULT_LIMITS,
    NON_SOURCE_DIRS,
    FileInfo,
    FileMissing,
    PathRefused,
    WorkspaceFull,
    WorkspaceLimits,
    check_app_id,
    clean_path,
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_TEMP_PREFIX = ".zc-tmp-"
_NAME_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EILSEQ})


class LocalWorkspace:
    def __init__(self, root: Path, limits: WorkspaceLimits = DEFAULT_LIMITS) -> None:
        private_dir(root)
        self.root = root.resolve()
        self.limits = limits

    def path(self, app_id: str) -> Path:
        """The app's real directory (created if needed), for tools that need one, e.g. npm."""
        app_dir = self._app_dir(app_id)
        app_dir.mkdir(mode=DIR_MODE, exist_ok=True)
        return app_dir

    def read(self, app_id: str, path: str) -> bytes:
        rel = clean_path(path)
        with _names_refused(rel):
            return self._read(app_id, rel)

    def _read(self, app_id: str, rel: str) -> bytes:
        app_dir = self._app_dir(app_id)
        try:
            real = (app_dir / rel).resolve()
        except (RuntimeError, OSError) as exc:  # a link loop: RuntimeError before Python 3.13
            if isinstance(exc, OSError) and exc.errno != errno.ELOOP:
                raise
            raise PathRefused(f"path {rel!r} is a symbolic link loop") from None
        if not real.is_relative_to(app_dir):
            raise PathRefused(f"path {rel!r} is a link that leaves the project")
        try:
            if not stat.S_ISREG(real.stat().st_mode):
                raise PathRefused(f"path {rel!r} is a directory or a special file, not a file")
            return real.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise FileMissing(f"file {rel} does not exist") from None

    def write(self, app_id: str, path: str, data: bytes) -> None:
        rel = clean_path(path)
        if len(data) > self.limits.most(rel):
            raise WorkspaceFull(
                f"file {rel} is {len(data)} bytes; the limit is "
                f"{self.limits.most(rel)} bytes per file"
            )
        with _names_refused(rel):
            _by_its_path(self._app_dir(app_id) / rel)
        with _names_refused(rel), self._parent(app_id, rel, create=True) as (dir_fd, name):
            exists = _lstat(dir_fd, name, rel) is not None
            if not exists and len(self.list(app_id)) >= self.limits.max_files:
                raise WorkspaceFull(
                    f"cannot create {rel}: the project already has "
                    f"{self.limits.max_files} files, the limit"
                )
            _atomic_write(dir_fd, name, data)

    def delete(self, app_id: str, path: str) -> None:
        rel = clean_path(path)
        try:
            with _names_refused(rel), self._parent(app_id, rel, create=False) as (dir_fd, name):
                if _lstat(dir_fd, name, rel) is None:
                    raise FileMissing(f"file {rel} does not exist")
                os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            raise FileMissing(f"file {rel} does not exist") from None

    def list(self, app_id: str) -> list[FileInfo]:
        """Regular files a read can reach: links, build/tooling directories, names the path
        rules refuse (made before a rule, or planted) and files whose whole path the file
        system refuses are not source (as the S3 workspace leaves such keys out), so one such
        file never stops the app's snapshot and builds."""
        app_dir = self._app_dir(app_id)
        out: list[FileInfo] = []
        for dirpath, dirnames, filenames in os.walk(app_dir):
            here = Path(dirpath)
            if here == app_dir:
                dirnames[:] = [d for d in dirnames if d not in NON_SOURCE_DIRS]
            for name in filenames:
                rel = (here / name).relative_to(app_dir).as_posix()
                try:
                    st = os.lstat(here / name)
                except OSError as exc:
                    if exc.errno not in _NAME_ERRNOS:
                        raise
                    continue
                if stat.S_ISREG(st.st_mode) and _is_clean(rel):
                    out.append(FileInfo(rel, st.st_size))
        return sorted(out, key=lambda f: f.path)

    def delete_app(self, app_id: str) -> int:
        """Remove the app's directory; the count includes build output and dependencies."""
        app_dir = self.root / check_app_id(app_id)
        if app_dir.is_symlink():
            app_dir.unlink()
            return 0
        if not app_dir.exists():
            return 0
        count = sum(len(files) for _, _, files in os.walk(app_dir))
        shutil.rmtree(app_dir)  # removes links themselves, never what they point to
        return count

    def _app_dir(self, app_id: str) -> Path:
        app_dir = self.root / check_app_id(app_id)
        if app_dir.is_symlink():
            raise PathRefused(f"workspace of app {app_id!r} is a symbolic link")
        return app_dir

    @contextlib.contextmanager
    def _parent(self, app_id: str, rel: str, *, create: bool) -> Iterator[tuple[int, str]]:
        """An fd of the directory holding ``rel`` and the file name, reached without links."""
        *dirs, name = rel.split("/")
        app_dir = self.path(app_id) if create else self._app_dir(app_id)
        fd = os.open(app_dir, _DIR_FLAGS)
        try:
            for part in dirs:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, DIR_MODE, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    _not_a_directory(fd, part, rel, create=create)
                os.close(fd)
                fd = child
            yield fd, name
        finally:
            os.close(fd)


@contextlib.contextmanager
def _names_refused(rel: str) -> Iterator[None]:
    """PathRefused for a name the file system refuses (too long for it, bytes it does not
    take): the path rules let it through, and it is the path's fault, not the server's."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _NAME_ERRNOS:
            raise
        raise PathRefused(
            f"path {shown(rel)} is refused by the server's file system ({os.strerror(exc.errno)})"
        ) from None


def _is_clean(rel: str) -> bool:
    """Whether ``rel`` is a workspace path as the rules make it (the platform's temporary
    names are not)."""
    try:
        return clean_path(rel) == rel
    except PathRefused:
        return False


def _by_its_path(target: Path) -> None:
    """Raises the file system's ENAMETOOLONG or EILSEQ for ``target``'s whole path: a write
    walks one directory at a time, so it would make a file that no read by path can reach."""
    try:
        os.lstat(target)
    except OSError as exc:
        if exc.errno in _NAME_ERRNOS:
            raise
        # absent, or a link on the way: the write's own walk decides


def _not_a_directory(dir_fd: int, part: str, rel: str, *, create: bool) -> NoReturn:
    if stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode):
        raise PathRefused(
            f"path {rel!r}: {part!r} is a symbolic link; links are never written through"
        )
    if create:
        raise PathRefused(f"path {rel!r}: {part!r} is a file, not a directory")
    raise FileMissing(f"file {rel} does not exist")


def _lstat(dir_fd: int, name: str, rel: str) -> os.stat_result | None:
    """The entry itself (None when absent); links and directories are refused."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(f"path {rel!r} is a symbolic link; links are never written through")
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(f"path {rel!r} is a directory or a special file, not a file")
    return st


def _atomic_write(dir_fd: int, name: str, data: bytes) -> None:
    """Write a temporary sibling, fsync, then rename it over ``name`` (never follows links)."""
    temp = f"{_TEMP_PREFIX}{secrets.token_hex(8)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, FILE_MODE, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
