"""Builds inside the server's limits, through the real server (docs/security.md, "Builds
inside the server's limits").

The red team's setup: the server in a 400 MiB memory cgroup, builds at their default 2 GiB
cap, and code of the app's running in the build box. As in the integration tests the
toolchain is a stand-in whose ``vite.js`` is the attacker (what a gap in the real one would
let the model's code do), branching on the app's ``src/main.js``: a hand edit makes the
next preview build allocate without end, or write 256 MiB with fsync. Both fail saying why,
the server lives on in its cgroup, and the data disk keeps its space.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import build_sandbox_or_skip
from tests.e2e.conftest import Server, chat, create, signed_in
from tests.integration.adapters.test_build_limits import SCRIPT, disk_bytes, memory_dir
from zerocode.publishing import toolchain

MIB = 1 << 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    box = build_sandbox_or_skip()
    if os.geteuid() != 0 or not box.cgroups:
        pytest.skip("the builds' cgroup and the disk quota need root and a cgroup hierarchy")
    root = tmp_path_factory.mktemp("zerocode-build-limits")
    vite = root / "tc" / toolchain.digest() / "node_modules" / "vite" / "bin" / "vite.js"
    vite.parent.mkdir(parents=True)
    vite.write_text(SCRIPT)
    for path in (root / "tc", *(root / "tc").rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    here = memory_dir(box).parent  # this process's own memory cgroup
    group = here / f"zc-test-server-{secrets.token_hex(4)}"
    group.mkdir()
    (root / "data").mkdir()
    srv = Server(root / "data", forked=False)  # started in the cgroup below
    srv.env.update({"ZEROCODE_TOOLCHAIN_DIR": str(root / "tc"), "ZEROCODE_BUILD_DISK_MB": "32"})
    try:
        v2 = (group / "memory.max").exists()
        (group / ("memory.max" if v2 else "memory.limit_in_bytes")).write_text(str(400 * MIB))
        # The server is forked from this process while it sits in the 400 MiB cgroup.
        (group / "cgroup.procs").write_text(str(os.getpid()))
        try:
            srv.start()
        finally:
            (here / "cgroup.procs").write_text(str(os.getpid()))
        yield srv
    finally:
        srv.stop()
        for leftover in sorted(group.rglob("*"), key=lambda p: -len(p.parts)):
            if leftover.is_dir():
                leftover.rmdir()
        group.rmdir()


def edit_main(client: httpx.Client, app_id: str, what: str) -> dict[str, object]:
    saved = client.put(f"/api/apps/{app_id}/files/src/main.js", json={"content": what})
    assert saved.status_code == 200, saved.text
    build = saved.json()["build"]
    assert build is not None and build["state"] == "failed", build
    return dict(build)


def test_a_hog_and_a_disk_filler_fail_saying_why_and_the_server_holds(server: Server) -> None:
    client = signed_in(server)
    assert server.log is not None
    banner = server.log.read_text()
    assert "within the server's 400 MiB: 0.2 GiB" in banner, banner[:3000]
    assert "1 build slot(s), at most 2 per user, 32 MiB per build" in banner
    app = create(client, "A Vue todo app with an about page", "vue_project")
    first = chat(client, app["id"], app["initPrompt"])
    assert first.ended == ("succeeded", 1), first.errors  # the stand-in builds the app

    hog = edit_main(client, app["id"], "hog")
    assert "ran out of memory" in str(hog["error"]), hog

    before = disk_bytes(server.data_dir)
    filler = edit_main(client, app["id"], "fill")
    assert "the build wrote more than 32 MiB (its disk quota)" in str(filler["error"]), filler
    assert disk_bytes(server.data_dir) - before < 64 * MIB  # not the 256 MiB it wrote

    assert server.proc is not None and server.proc.poll() is None  # alive in its cgroup
    assert client.get("/api/health").status_code == 200
