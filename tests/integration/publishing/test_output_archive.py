"""The hand-over's rules against archives no honest ``tar`` writes: crafted streams.

The box's own tar is a tool the attacker cannot change, but the host's rules must not depend
on that (on AWS the archive is uploaded by the build itself): every kind of member, name and
size that is not a plain file or directory under ``dist/`` is refused, and nothing is read
past the limit.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from zerocode.publishing.output_archive import OutputRefused, unpack

Member = tuple[str, bytes, bytes, dict[str, object]]


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **extra: object) -> Member:
    return (name, kind, data, extra)


def archive(*members: Member, fmt: int = tarfile.PAX_FORMAT) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, kind, data, extra in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            for key, value in extra.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    buf.seek(0)
    return buf


DIST = member("dist", tarfile.DIRTYPE)
INDEX = member("dist/index.html", data=b"<h1>ok</h1>")


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_files_and_directories_under_dist_are_unpacked(tmp_path: Path) -> None:
    got = unpack(
        archive(
            DIST,
            INDEX,
            member("dist/assets", tarfile.DIRTYPE),
            member("dist/assets/app.js", data=b"x" * 5000),
            member("dist/深/页.html", data="页".encode()),  # names in any script are fine
        ),
        tmp_path / "out",
    )
    assert got.files == 3 and got.bytes == 11 + 5000 + 3
    assert files(tmp_path / "out") == {
        "index.html": b"<h1>ok</h1>",
        "assets/app.js": b"x" * 5000,
        "深/页.html": "页".encode(),
    }


@pytest.mark.parametrize(
    ("members", "said"),
    [
        ([member("dist", tarfile.SYMTYPE, linkname="/victim")], "not a directory"),
        ([DIST, member("dist/x", tarfile.SYMTYPE, linkname="/etc/passwd")], "link"),
        ([DIST, INDEX, member("dist/y", tarfile.LNKTYPE, linkname="dist/index.html")], "link"),
        ([DIST, member("dist/dev", tarfile.CHRTYPE, devmajor=1, devminor=3)], "neither"),
        ([DIST, member("dist/blk", tarfile.BLKTYPE)], "neither"),
        ([DIST, member("dist/fifo", tarfile.FIFOTYPE)], "neither"),
        ([DIST, member("dist/../../etc/cron.d/x", data=b"x")], "'..'"),
        ([DIST, member("/etc/passwd", data=b"x")], "absolute"),
        ([DIST, member("dist/./x", data=b"x")], "'.'"),
        ([DIST, member("dist//x", data=b"x")], "empty"),
        ([DIST, member("dist/a\\b", data=b"x")], "absolute or empty"),
        ([DIST, member("dist/evil\u202egnp.js", data=b"x")], "U+202E"),
        ([DIST, member("dist/zero\u200bwidth", data=b"x")], "U+200B"),
        ([DIST, member("dist/new\nline", data=b"x")], "U+000A"),
        ([DIST, member("dist/" + "a" * 256, data=b"x")], "longer than 255"),
        ([DIST, member("dist/" + "/".join(["d" * 200] * 6), data=b"x")], "longer than 1024"),
        ([DIST, member("elsewhere/x", data=b"x")], "outside dist/"),
        ([member("dist/x", data=b"x")], "outside dist/"),  # no dist entry first
        ([DIST, INDEX, member("dist/index.html", data=b"again")], "twice"),
        ([DIST, member("dist/a", data=b"x"), member("dist/a/b", data=b"y")], "both a file"),
        ([member("other", tarfile.DIRTYPE)], "outside dist/"),
        ([], "no dist/"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_what_is_not_a_plain_file_or_directory_under_dist_is_refused(
    tmp_path: Path, members: list[Member], said: str
) -> None:
    with pytest.raises(OutputRefused) as refused:
        unpack(archive(*members), tmp_path / "out")
    assert said in str(refused.value), str(refused.value)
    assert not (tmp_path / "etc").exists()


def test_a_sparse_file_is_refused(tmp_path: Path) -> None:
    buf = archive(DIST, member("dist/sparse", tarfile.GNUTYPE_SPARSE), fmt=tarfile.GNU_FORMAT)
    with pytest.raises(OutputRefused, match="neither"):
        unpack(buf, tmp_path / "out")


def test_counts_and_bytes_are_bounded(tmp_path: Path) -> None:
    many = [DIST, *(member(f"dist/f{i}", data=b"") for i in range(11))]
    with pytest.raises(OutputRefused, match="more than 10 files"):
        unpack(archive(*many), tmp_path / "a", max_files=10)
    big = [DIST, member("dist/a", data=b"x" * 600), member("dist/b", data=b"x" * 600)]
    with pytest.raises(OutputRefused, match="larger than"):
        unpack(archive(*big), tmp_path / "b", max_bytes=1000)


class Counting:
    """A stream that says how much was taken from it."""

    def __init__(self, data: bytes) -> None:
        self.raw, self.taken = io.BytesIO(data), 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.raw.read(size)
        self.taken += len(chunk)
        return chunk


def test_a_huge_pax_header_is_never_read_whole(tmp_path: Path) -> None:
    """A header claiming gigabytes (or a stream without end) is cut at the limit plus the
    headers' allowance: the reader refuses, it does not buffer the claim."""
    header = tarfile.TarInfo("dist/x")
    header.type = tarfile.XHDTYPE
    header.size = 4 << 30
    stream = Counting(header.tobuf(tarfile.USTAR_FORMAT) + b"1 x=" + b"y" * (12 << 20))
    with pytest.raises(OutputRefused):
        unpack(stream, tmp_path / "out", max_bytes=1 << 20)
    assert stream.taken <= (1 << 20) + (8 << 20) + (1 << 16) + 1


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda data: data[:2500],  # cut inside a file
        lambda data: data[:5120],  # cut after the last file: no end marker
        lambda data: data[:512] + b"\xff" * 512 + data[1024:],  # a header torn up
        lambda data: b"not a tar at all" * 100,
    ],
    ids=["cut-in-a-file", "no-end-marker", "torn-header", "garbage"],
)
def test_a_broken_archive_fails_with_a_reason(
    tmp_path: Path, corrupt: Callable[[bytes], bytes]
) -> None:
    data = archive(DIST, INDEX, member("dist/a.js", data=b"x" * 3000)).getvalue()
    with pytest.raises(
        OutputRefused, match=r"could not be read|outside|no dist|holds|cut short|damaged"
    ):
        unpack(io.BytesIO(corrupt(data)), tmp_path / "out")
