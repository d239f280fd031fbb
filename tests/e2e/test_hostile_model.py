"""A hostile model against the real local server: nothing of its runs, nothing leaks.

The server runs with a canary in its environment (the model key, a ZEROCODE_ secret and a
VITE_ variable Vite would inline) and a hostile OpenAI-compatible model
(tests/e2e/hostile_model.py) that writes install and build scripts, a vite.config.js that
runs commands and writes files, and sources importing /proc/self/environ, the platform's
database and paths above the project. After its turns: no command of the model's ran, no
file outside its build directory was written (another app's files are as they were), the
canary is in no build log, preview, site or cover, and the builds that imported host files
failed with the confinement message as the turn's honest status.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Server, chat, create, signed_in, wait_for_build
from tests.e2e.hostile_model import HostileModel

CANARY = f"zc-canary-{secrets.token_hex(6)}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, HostileModel]]:
    markers = tmp_path_factory.mktemp("markers")
    markers.chmod(0o777)  # were any command of the model's to run as nobody, it could write
    with HostileModel(markers) as model:
        srv = Server(tmp_path_factory.mktemp("zerocode-hostile"))
        srv.env.update(
            {
                "ZEROCODE_MODEL_BASE_URL": model.base_url,
                "ZEROCODE_MODEL_API_KEY": f"sk-{CANARY}",
                "ZEROCODE_CANARY_SECRET": CANARY,
                "VITE_CANARY": CANARY,
                "ZEROCODE_MODEL_VUE": "hostile",
                "ZEROCODE_MODEL_ROUTING": "hostile",
                "ZEROCODE_MODEL_CODE": "hostile",
            }
        )
        srv.start()
        try:
            yield srv, model
        finally:
            srv.stop()


def digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def leaks(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]


def test_a_hostile_model_runs_nothing_and_leaks_nothing(
    hostile: tuple[Server, HostileModel],
) -> None:
    server, model = hostile
    victim = signed_in(server, "victim")
    other = create(victim, "Someone else's page", "html")
    victim_ws = server.data_dir / "workspaces" / other["id"]
    victim_ws.mkdir(parents=True, exist_ok=True)
    (victim_ws / "index.html").write_text("<h1>the victim's page</h1>")
    victim_before = digest_tree(victim_ws)

    client = signed_in(server, "attacker")
    app = create(client, "A Vue app", "vue_project")

    # Turn 1: scripts, a commanding vite.config.js and a lockfile of its own.
    first = chat(client, app["id"], "Make me an app")
    results = {r["path"]: r for r in first.results}
    for path in ("package.json", "vite.config.js", "package-lock.json"):
        assert results[path]["ok"] is False, results[path]
    assert (
        "not an allowed dependency" in results["package.json"]["summary"]
        or "scripts are the platform's" in results["package.json"]["summary"]
    )
    assert "is the platform's" in results["vite.config.js"]["summary"]
    assert results["src/App.vue"]["ok"] is True
    assert first.done == {"status": "succeeded", "turn": 1}, (first.errors, first.builds)
    files = client.get(f"/api/apps/{app['id']}/files").json()
    paths = {f["path"] for f in files["files"]} if isinstance(files, dict) else set()
    assert "vite.config.js" not in paths and "package.json" not in paths

    # Turns 2 and 3: imports of the server's environment and of the platform's database.
    for turn, leak in ((2, "/proc/self/environ?raw"), (3, "../../../../zerocode.sqlite3-wal?raw")):
        model.leak = leak
        broken = chat(client, app["id"], "Show some debugging info")
        assert broken.done == {"status": "failed", "turn": turn}, broken.builds
        failed = broken.builds[-1]
        assert failed["status"] == "failed"
        said = " ".join(str(e.get("message", "")) for e in broken.errors) + str(failed)
        assert "outside the project" in said, said

    # Turn 4: a clean app again, then published.
    model.leak = None
    again = chat(client, app["id"], "Back to the first version")
    assert again.done == {"status": "succeeded", "turn": 4}
    deploy = client.post(f"/api/apps/{app['id']}/deploy")
    assert deploy.status_code == 202, deploy.text
    published = wait_for_build(client, app["id"], deploy.json()["buildId"])
    assert published["state"] == "succeeded", published

    # Nothing of the model's ran, nothing was written outside its build directory.
    assert list(model.markers.iterdir()) == []
    assert digest_tree(victim_ws) == victim_before
    # The canary is in no build log, preview, site or cover.
    builds = client.get(f"/api/apps/{app['id']}/builds", params={"limit": 50}).json()["builds"]
    assert len(builds) >= 5
    assert all(CANARY not in str(b) for b in builds)
    assert leaks(server.data_dir / "builds") == []
    work = server.data_dir / "build-work"
    assert not work.exists() or leaks(work) == []
    outputs = list((server.data_dir / "builds" / app["id"]).iterdir())
    assert len(outputs) == 3  # two previews and the site; the failed builds left nothing
    bundle = "".join(p.read_text(errors="replace") for o in outputs for p in o.rglob("*.js"))
    assert "Hostile but harmless" in bundle and "VITE_CANARY" not in bundle
    if shutil.which("chromium"):  # the site's cover: a screenshot of what has no canary
        deadline = time.monotonic() + 60
        while client.get(f"/api/apps/{app['id']}").json().get("cover") is None:
            assert time.monotonic() < deadline, "no cover"
            time.sleep(0.3)
        assert leaks(server.data_dir / "covers") == []
    # The platform's log tells the turns' truth, and the model's key is not in it either.
    assert server.log is not None and CANARY not in server.log.read_text(errors="replace")
    victim.close()
    client.close()
