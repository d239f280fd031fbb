"""The local build sweep wired (publishing/output_sweep.py): the data directory's build
outputs, its builds table and its site pointers. On AWS the builds bucket's lifecycle rule
does the same (docs/operations.md, "Preview outputs expire")."""

from __future__ import annotations

from zerocode.bootstrap.settings import Settings
from zerocode.publishing.output_sweep import OutputSweep


def build_sweep(settings: Settings) -> OutputSweep:
    """Its own connection to the database: the sweep runs in a thread of its own."""
    if settings.mode != "local":
        raise RuntimeError("the build sweep runs locally; on AWS a lifecycle rule does it")
    from zerocode.adapters.local.outputs import LocalOutputs
    from zerocode.adapters.sqlite.builds import SqliteBuildStore
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.publisher import SqlitePublisher

    db = SqliteDatabase(settings.sqlite_path)
    return OutputSweep(
        LocalOutputs(settings.data_dir.resolve() / "builds"),
        SqliteBuildStore(db),
        SqlitePublisher(db),
        keep_seconds=settings.build_sweep_keep_seconds,
    )
