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

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in, wait_for_build
from tests.e2e.hostile_model import CONFIG_NAMES, REACH, HostileModel, config_attack
from tests.integration.adapters.test_chromium_covers import Secret

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
                "ZEROCODE_RUNTIME_CHECK": "1",  # the page is loaded in the confined browser
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
    assert first.ended == ("succeeded", 1), (first.errors, first.builds)
    files = client.get(f"/api/apps/{app['id']}/files").json()
    paths = {f["path"] for f in files["files"]} if isinstance(files, dict) else set()
    assert "vite.config.js" not in paths and "package.json" not in paths

    # Turns 2 and 3: imports of the server's environment and of the platform's database.
    for turn, leak in ((2, "/proc/self/environ?raw"), (3, "../../../../zerocode.sqlite3-wal?raw")):
        model.leak = leak
        broken = chat(client, app["id"], "Show some debugging info")
        assert broken.ended == ("failed", turn), broken.builds
        failed = broken.builds[-1]
        assert failed["status"] == "failed"
        said = " ".join(str(e.get("message", "")) for e in broken.errors) + str(failed)
        assert "outside the project" in said, said

    # Turn 4: a clean app again, then published.
    model.leak = None
    again = chat(client, app["id"], "Back to the first version")
    assert again.ended == ("succeeded", 4)
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


def served(url: str, paths: list[str]) -> str:
    """What the sites server serves at ``url`` for each path, joined."""
    with httpx.Client(base_url=url, timeout=10) as site:
        return "".join(site.get(p).text for p in paths)


def test_app_written_build_config_runs_nothing_and_the_browser_reaches_nothing(
    hostile: tuple[Server, HostileModel],
) -> None:
    """The attack that published another user's workspace: a postcss.config.js (and every other
    name a build tool may load) that would replace dist/ by a link to the victim's files. The
    tools refuse each name; planted in the workspace anyway (as an older workspace could hold
    them) the build leaves them out and its config declares everything they would set. And
    the page, loaded by the runtime check and the cover, tries every way to reach a service
    on another port: it sees no connection."""
    server, model = hostile
    victim = signed_in(server, "victim2")
    private = create(victim, "My private notes", "html")
    victim_ws = server.data_dir / "workspaces" / private["id"]
    (victim_ws / "src").mkdir(parents=True, exist_ok=True)
    secret = f"victim-private-{secrets.token_hex(6)}"
    (victim_ws / "src" / "secret.txt").write_text(secret)
    (victim_ws / "index.html").write_text(f"<h1>{secret}</h1>")

    listener = Secret()  # a service on another loopback port: counts every connection
    listener.start()
    try:
        client = signed_in(server, "attacker2")
        app = create(client, "A Vue app", "vue_project")
        model.leak = None
        model.extra = {**config_attack(victim_ws), "src/App.vue": REACH.replace(
            "PORT", str(listener.port))}  # fmt: skip
        first = chat(client, app["id"], "Make me an app")
        results = {r["path"]: r for r in first.results}
        for name in (*CONFIG_NAMES, ".postcssrc.json", ".env", "tsconfig.json"):
            assert results[name]["ok"] is False, results[name]
            assert "build" in results[name]["summary"] or "platform" in results[name]["summary"]
        assert first.builds and first.builds[-1]["status"] == "succeeded", first.builds

        # Planted in the workspace behind the tools' back: the build leaves them out.
        ws = server.data_dir / "workspaces" / app["id"]
        for name, content in config_attack(victim_ws).items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(content)
        model.extra["src/App.vue"] += "<!-- again -->\n"  # a change, so a new preview build
        again = chat(client, app["id"], "Once more")
        assert again.builds and again.builds[-1]["status"] == "succeeded", again.builds
        deploy = client.post(f"/api/apps/{app['id']}/deploy")
        assert deploy.status_code == 202, deploy.text
        published = wait_for_build(client, app["id"], deploy.json()["buildId"])
        assert published["state"] == "succeeded", published
        if shutil.which("chromium"):  # the cover: the page loaded in the confined browser
            deadline = time.monotonic() + 60
            while client.get(f"/api/apps/{app['id']}").json().get("cover") is None:
                assert time.monotonic() < deadline, "no cover"
                time.sleep(0.3)
        time.sleep(3)  # speculative work happens after load
        assert listener.connections == 0
    finally:
        listener.close()

    # No config of the app's ran: no marker in a log or an output, nothing read from .env.
    builds = client.get(f"/api/apps/{app['id']}/builds", params={"limit": 50}).json()["builds"]
    assert all("ZC-MARKER" not in str(b) for b in builds), builds
    outputs = server.data_dir / "builds" / app["id"]
    files = [p for p in outputs.rglob("*") if p.is_file()]
    assert files and not [p for p in files if p.name == "zc-marker.txt"]
    assert all(b"ZC-MARKER" not in p.read_bytes() for p in files)
    # The victim's private files are served by neither the attacker's preview nor its site.
    shown = client.get(f"/api/apps/{app['id']}").json()
    paths = ["/", "/index.html", "/src/secret.txt", "/secret.txt", "/zc-marker.txt"]
    paths += ["/" + str(p.relative_to(o)) for o in outputs.iterdir() for p in o.rglob("*")]
    for url in (shown["previewUrl"], shown["deployUrl"]):
        assert secret not in served(url, paths)
    assert all(secret.encode() not in p.read_bytes() for p in files)
    assert (victim_ws / "src" / "secret.txt").read_text() == secret
    victim.close()
    client.close()


def connection_port(response: httpx.Response) -> int:
    """The client's local port of the connection ``response`` came on."""
    return int(response.extensions["network_stream"].get_extra_info("client_addr")[1])


def test_a_300_byte_name_is_path_refused_and_the_connection_holds(
    hostile: tuple[Server, HostileModel],
) -> None:
    """Issue 37: a 300-byte file name was a 500 (PUT), a 500 then a reset connection (GET),
    and a traceback that ended the model's turn with an error. Now the model's write_file
    with one is a failed result the model reads and the turn goes on; PUT and GET answer 400
    path_refused, and the next request comes on the same connection."""
    server, model = hostile
    client = signed_in(server, "long-names")
    app = create(client, "A Vue app", "vue_project")
    long_name = "src/" + "n" * 297 + ".js"  # a name part of 300 bytes
    model.leak = None
    model.extra = {long_name: "export default 1\n"}
    turn = chat(client, app["id"], "Make me an app")
    refused = [r for r in turn.results if "longer than 255 bytes" in r["summary"]]
    assert len(refused) == 1 and refused[0]["ok"] is False, turn.results
    told = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("a part longer than 255 bytes (300 bytes in UTF-8)" in t for t in told), told
    # The turn went on (the model answered after reading it), no error, the preview built; it
    # says failed because its last write was refused (engine/turn_state.py), which is true.
    assert turn.text == "Done: I changed the files you asked for." and not turn.errors
    assert turn.builds[-1]["status"] == "succeeded", turn.builds
    assert turn.ended == ("failed", 1)

    files = f"/api/apps/{app['id']}/files"
    first = client.get(f"{files}/src/main.js")
    assert first.status_code == 200
    too_deep = "/".join(["d" * 200] * 5) + "/" + "x" * 20  # 1,025 bytes, each part within
    for method, path, why in [
        ("PUT", long_name, "a part longer than 255 bytes (300 bytes in UTF-8)"),
        ("GET", long_name, "a part longer than 255 bytes (300 bytes in UTF-8)"),
        ("GET", too_deep, "a path longer than 1024 bytes (1025 bytes in UTF-8)"),
    ]:
        answer = client.request(method, f"{files}/{path}", json={"content": "x"})
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "path_refused", answer.text
        assert why in answer.json()["error"]["message"]
        assert connection_port(answer) == connection_port(first)  # not closed, not reset
    code = client.get(f"/api/apps/{app['id']}/code/{long_name}")
    assert code.status_code == 400 and code.json()["error"]["code"] == "path_refused"
    after = client.get(f"{files}/src/main.js")
    assert after.status_code == 200 and connection_port(after) == connection_port(first)
    listed = {f["path"] for f in client.get(files).json()["files"]}
    assert long_name not in listed and "src/main.js" in listed
    client.close()
