"""Shared fixtures: one parametrised fixture per port, so each contract runs on every adapter."""

from __future__ import annotations

import gc
import os
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tests.properties  # noqa: F401 (loads the Hypothesis profile: ci or dev)

# Under pytest-xdist each worker has a Redis database of its own (15, 14, …), so one worker's
# keys and flushes never meet another's.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
REDIS_URL = os.environ.get("ZEROCODE_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{15 - _WORKER}")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadgroup`` (``make test``) a module's tests stay on one worker (its
    module-scoped servers and moto start once), and tests/infra shares one worker (its
    synths). A scheduler of our own, because xdist's loadgroup cannot group on pytest 9.2:
    it renames ``item._nodeid``, which pytest no longer reads, so every test went wherever a
    worker was free (``tests/integration/test_scheduling.py``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    # Units go out in collection order, which the workers sort longest first (below);
    # xdist's own reorder would put them by number of tests, a long single test last.
    config.option.loadscopereorder = False

    class ByModule(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByModule(config, log)


def work_unit(nodeid: str) -> str:
    """The unit a test is scheduled with: its module, or all of tests/infra together."""
    module = nodeid.split("::", 1)[0]
    return "tests/infra" if module.startswith("tests/infra/") else module


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the longest work units first (tests/module_seconds.py): every worker
    sorts the same way, so they still agree on the collection."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    from tests.module_seconds import load

    seconds = load()
    weight: dict[str, float] = defaultdict(float)
    for module in {item.nodeid.split("::", 1)[0] for item in items}:
        weight[work_unit(module)] += seconds.get(module, 1.0)
    items.sort(key=lambda item: (-weight[work_unit(item.nodeid)], work_unit(item.nodeid)))


def pytest_configure(config: pytest.Config) -> None:
    from tests import aws_models, module_cpu

    module_cpu.register(config)
    aws_models.share_service_models()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (every test module and the libraries they use: boto3, moto,
    aws_cdk, Playwright, the package) lives for the whole run: frozen out of the garbage
    collector's way, so its full collections stop walking it again and again (alone,
    tests/unit with tests/integration/memory: 11.4 -> 8.3 s in the collector, 39.7 -> 33.7
    CPU-s; docs/benchmarks.md, "Where the suite's time goes"). Objects the tests make are
    collected as before."""
    gc.collect()
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Build quotas (tmpfs mounts, adapters/local/build_quota.py) that servers of this run
    left mounted are unmounted: a server killed on purpose (the crash tests) or stopped
    before its boxes prepared ahead were closed is never started again on its data
    directory, where a server's next start would release them, so without this each run
    would leave mounts under the basetemp that pytest can no longer remove. Run once, by
    the process that owns the whole basetemp (the controller under xdist, after its workers)."""
    if "PYTEST_XDIST_WORKER" in os.environ or not sys.platform.startswith("linux"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    from zerocode.adapters.local import build_quota

    build_quota.release_under(factory.getbasetemp())


def redis_client_or_skip() -> Any:
    """A real Redis client; skip when Redis is absent unless ZEROCODE_REQUIRE_REDIS is set."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("ZEROCODE_REQUIRE_REDIS"):
            raise RuntimeError(
                f"ZEROCODE_REQUIRE_REDIS is set but Redis at {REDIS_URL} does not answer: {exc}"
            ) from exc
        pytest.skip(f"no Redis at {REDIS_URL}")
    return client


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Any]:
    from zerocode.adapters.sqlite.database import SqliteDatabase

    db = SqliteDatabase(tmp_path / "zc.sqlite3")
    yield db
    db.close()


@pytest.fixture
def aws() -> Iterator[None]:
    """moto's in-process AWS with fake credentials; nothing leaves the machine."""
    from moto import mock_aws

    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_SESSION_TOKEN": "testing",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from zerocode.bootstrap import aws_parts

    aws_parts.client.cache_clear()  # clients made under another mock must not be reused
    try:
        with mock_aws():
            yield
        aws_parts.client.cache_clear()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(params=["sqlite", "dynamodb"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from tests.integration.backends import dynamodb_backend, sqlite_backend

    if request.param == "sqlite":
        yield sqlite_backend(tmp_path)
    else:
        request.getfixturevalue("aws")
        yield dynamodb_backend()


def require_bwrap() -> bool:
    """Whether sandboxed-build tests must run (CI installs bubblewrap and sets this)."""
    return bool(os.environ.get("ZEROCODE_REQUIRE_BWRAP"))


def build_sandbox_or_skip() -> Any:
    """The real bubblewrap sandbox; skip when bwrap is absent unless ZEROCODE_REQUIRE_BWRAP."""
    from zerocode.adapters.local.sandbox import Bubblewrap, sandbox

    box = sandbox(override=False)
    if not isinstance(box, Bubblewrap):
        if require_bwrap():
            raise RuntimeError(f"ZEROCODE_REQUIRE_BWRAP is set but: {box.refusal}")
        pytest.skip(box.refusal or "no bubblewrap")
    return box


def any_build_sandbox() -> Any:
    """bubblewrap when installed; otherwise (a developer's machine without it, never CI) the
    loudly named development override, so tests of other things can still build."""
    from zerocode.adapters.local.sandbox import sandbox

    return sandbox(override=not require_bwrap())


@pytest.fixture(scope="session")
def toolchain_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One installed toolchain for the whole run (it is read-only to every build), shared by
    the xdist workers (the store installs under a lock, so one of them installs it)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        shared = tmp_path_factory.getbasetemp().parent / "toolchain"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("toolchain")


@pytest.fixture
def local_builder(tmp_path: Path, toolchain_dir: Path) -> Any:
    from zerocode.adapters.local.builder import LocalBuilder
    from zerocode.adapters.local.toolchain_store import ToolchainStore
    from zerocode.bootstrap.settings import Settings

    return LocalBuilder(
        tmp_path, any_build_sandbox(), ToolchainStore(toolchain_dir, Settings().npm_cache)
    )


@pytest.fixture(scope="session", autouse=True)
def _build_environment(toolchain_dir: Path) -> Iterator[None]:
    """Every platform a test starts (in-process or a server subprocess) shares one installed
    toolchain; without bubblewrap (a developer's machine, never CI) builds use the override."""
    saved = {
        k: os.environ.get(k)
        for k in ("ZEROCODE_TOOLCHAIN_DIR", "ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS")
    }
    os.environ["ZEROCODE_TOOLCHAIN_DIR"] = str(toolchain_dir)
    if not require_bwrap():
        from zerocode.adapters.local.sandbox import Bubblewrap, sandbox

        if not isinstance(sandbox(override=False), Bubblewrap):
            os.environ["ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS"] = "1"
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
