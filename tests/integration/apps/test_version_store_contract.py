"""One contract for every VersionStore adapter: SQLite and an S3 prefix (moto); and the
Versions operations over them (record, page, diff, files)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from zerocode.apps.versions import Version, VersionKind, Versions, VersionStore, sha256
from zerocode.apps.workspace import Snapshot
from zerocode.errors import Conflict, InvalidInput, NotFound


@pytest.fixture(params=["sqlite", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> VersionStore:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.database import SqliteDatabase
        from zerocode.adapters.sqlite.versions import SqliteVersionStore

        return SqliteVersionStore(SqliteDatabase(tmp_path / "zc.sqlite3"))
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.aws.s3_versions import S3VersionStore

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="zc-workspaces")
    return S3VersionStore(client, "zc-workspaces")


def version(app_id: str, number: int, files: dict[str, bytes]) -> Version:
    return Version(
        app_id=app_id,
        number=number,
        turn=number,
        kind=VersionKind.TURN,
        summary=f"turn {number}",
        digest=Snapshot.of(files).digest,
        manifest={p: sha256(d) for p, d in files.items()},
        created_at=1000.0 + number,
    )


def test_add_get_latest_and_blobs(store: VersionStore) -> None:
    assert store.latest("a1") is None and store.get("a1", 1) is None
    files = {"index.html": b"<h1>one</h1>", "style.css": b"h1{}"}
    v1 = version("a1", 1, files)
    store.add(v1, {sha256(d): d for d in files.values()})
    assert store.get("a1", 1) == v1 and store.latest("a1") == v1
    assert store.blob("a1", sha256(b"h1{}")) == b"h1{}"
    with pytest.raises(NotFound):
        store.blob("a1", sha256(b"never stored"))
    with pytest.raises(NotFound):
        store.blob("other-app", sha256(b"h1{}"))  # contents are per app


def test_a_taken_number_is_a_conflict_and_changes_nothing(store: VersionStore) -> None:
    files = {"index.html": b"<h1>one</h1>"}
    store.add(version("a1", 1, files), {sha256(b"<h1>one</h1>"): b"<h1>one</h1>"})
    rival = version("a1", 1, {"index.html": b"<h1>rival</h1>"})
    with pytest.raises(Conflict):
        store.add(rival, {sha256(b"<h1>rival</h1>"): b"<h1>rival</h1>"})
    got = store.get("a1", 1)
    assert got is not None and got.manifest == {"index.html": sha256(b"<h1>one</h1>")}


def test_list_pages_newest_first(store: VersionStore) -> None:
    for n in range(1, 13):
        data = f"<h1>{n}</h1>".encode()
        store.add(version("a1", n, {"index.html": data}), {sha256(data): data})
    store.add(version("a2", 1, {"x.html": b"x"}), {sha256(b"x"): b"x"})
    assert [v.number for v in store.list("a1", None, 5)] == [12, 11, 10, 9, 8]
    assert [v.number for v in store.list("a1", 8, 5)] == [7, 6, 5, 4, 3]
    assert [v.number for v in store.list("a1", 3, 5)] == [2, 1]
    assert [v.number for v in store.list("a2")] == [1]
    latest = store.latest("a1")
    assert latest is not None and latest.number == 12


def test_delete_app_removes_versions_and_contents(store: VersionStore) -> None:
    for n in (1, 2):
        data = f"<h1>{n}</h1>".encode()
        store.add(version("a1", n, {"index.html": data}), {sha256(data): data})
    store.add(version("a2", 1, {"x.html": b"x"}), {sha256(b"x"): b"x"})
    assert store.delete_app("a1") == 2
    assert store.list("a1") == [] and store.latest("a1") is None
    with pytest.raises(NotFound):
        store.blob("a1", sha256(b"<h1>1</h1>"))
    assert [v.number for v in store.list("a2")] == [1]
    assert store.delete_app("a1") == 0


class Spy:
    """The store, with the contents each add was given."""

    def __init__(self, store: VersionStore) -> None:
        self.store = store
        self.added: list[list[str]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def add(self, v: Version, blobs: Mapping[str, bytes]) -> None:
        self.added.append(sorted(blobs))
        self.store.add(v, blobs)


def test_versions_record_only_changes_and_store_each_content_once(store: VersionStore) -> None:
    spy = Spy(store)
    versions = Versions(spy)  # type: ignore[arg-type]  # a VersionStore by delegation
    files = {"index.html": b"<h1>one</h1>", "big.js": b"x" * 5000}
    v1 = versions.record("a1", files, turn=1, summary="make   it\nnow")
    assert v1 is not None and v1.id == "v1" and v1.summary == "make it now"
    assert versions.record("a1", dict(files), turn=2, summary="nothing changed") is None
    changed = {**files, "index.html": b"<h1>two</h1>"}
    v2 = versions.record("a1", changed, turn=3, summary="two", build_id="b1")
    assert v2 is not None and v2.number == 2 and v2.build_id == "b1"
    assert versions.files(v2) == changed and versions.files(v1) == files
    assert spy.added == [sorted(sha256(d) for d in files.values()), [sha256(b"<h1>two</h1>")]]
    assert versions.previous(v2) == v1 and versions.previous(v1) is None

    (diff,) = versions.diff(v2, v1)
    assert (diff.path, diff.status) == ("index.html", "modified")
    assert "-<h1>one</h1>\n+<h1>two</h1>\n" in diff.diff
    assert diff.diff.startswith("--- a/index.html\n+++ b/index.html\n")
    assert {d.status for d in versions.diff(v1, None)} == {"added"}
    assert {d.status for d in versions.diff(v1, v2)} == {"modified"}

    page = versions.page("a1", None, 1)
    assert [v.id for v in page.versions] == ["v2"] and page.next_cursor == "v2"
    rest = versions.page("a1", page.next_cursor, 1)
    assert [v.id for v in rest.versions] == ["v1"] and rest.next_cursor is None
    with pytest.raises(InvalidInput):
        versions.page("a1", "b123", 1)
    with pytest.raises(NotFound):
        versions.get("a1", "v3")
