"""The suite follows the files, whoever changed them (issue 38), in-process on the real
local platform (SQLite, the real builder): a hand edit, a text edit, a restore and a rebuild
each run the app's checks against their new preview in the background, the run recorded
under the note that told the model; a deploy that requires passing checks follows those
verdicts; and ``POST /api/apps/{id}/checks/run`` runs them on demand (409 while the files
are being changed). The browser is a runner that reads the page's heading from its source
(the real runner in Chromium: tests/e2e/test_console_checks.py)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.integration.engine.test_acceptance_turns import Scripted, page, run
from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine import suite_follow
from zerocode.engine.acceptance import parse_check
from zerocode.engine.check_suite import CheckResult, Evidence, RunOutcome, StoredCheck
from zerocode.engine.rebuild import rebuild_preview
from zerocode.engine.restore import restore
from zerocode.engine.suite_update import rewrite_of, update_by_user
from zerocode.engine.suite_view import ChecksFailed, gate_deploy
from zerocode.engine.user_edit import Edit, How, save, save_text
from zerocode.errors import InvalidInput
from zerocode.http.app import create_app
from zerocode.publishing.builds import Build, snapshot

HEADING = {
    "description": "The heading reads Bakery",
    "expect": [{"text": {"css": "h1"}, "equals": "Bakery"}],
}
BAKERY = "<html><body><h1>Bakery</h1><p>Bread daily.</p></body></html>"


class HeadingRunner:
    """Judges each ``text`` expectation of ``h1`` by the heading in the page's source."""

    def __init__(self, p: Platform, path: str = "index.html") -> None:
        self.p, self.path, self.runs = p, path, 0

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: object = None,  # told nothing: every verdict comes with the outcome
    ) -> RunOutcome:
        self.runs += 1
        source = self.p.workspace.read(app.id, self.path).decode()
        found = re.search(r"<h1>(.*?)</h1>", source)
        heading = found.group(1) if found else ""
        out = []
        for c in checks:
            result = CheckResult(check_id=c.id, status="passed")
            for i, e in enumerate(c.check.expect):
                if e.kind == "text" and e.equals is not None and e.equals != heading:
                    where, expected = f"expect[{i}]", f"the text of css 'h1' equal to {e.equals!r}"
                    evidence = Evidence(where=where, expected=expected, actual=repr(heading))
                    result = CheckResult(check_id=c.id, status="failed", evidence=evidence)
            out.append(result)
        return RunOutcome(tuple(out))


def bakery(tmp_path: Path, *, api: bool = False) -> tuple[Platform, App]:
    """An html app whose first turn wrote the Bakery page and its heading's check (c1)."""
    settings = Settings(data_dir=tmp_path, runtime_check=False, covers=False)
    p = wiring.platform(settings, model=Scripted(page(BAKERY, {"add": [HEADING]})))
    p.engine.acceptance = HeadingRunner(p)
    app = App(
        id=new_app_id(), owner="local", name="Bakery", code_gen_type=CodeGenType.HTML,
        init_prompt="A bakery",
    )  # fmt: skip
    p.apps.put(app)
    run(p, app)
    return p, app


def newest(p: Platform, app: App) -> tuple[int, str, str | None, int]:
    assert p.engine.checks is not None
    found = p.engine.checks.runs(app.id, 1)[0]
    return found.number, found.results[0].status, found.digest, found.turn


def test_hand_and_text_edits_restores_and_rebuilds_run_the_checks(tmp_path: Path) -> None:
    p, app = bakery(tmp_path)
    assert newest(p, app)[:2] == (1, "passed")
    store = p.engine.checks
    assert store is not None

    async def flow() -> None:
        edit = Edit(path="index.html", data=BAKERY.replace("Bakery", "Fresh Bread").encode(),
                    how=How.HAND, what="edited by hand")  # fmt: skip
        done = await save(p.engine, app, edit)
        await suite_follow.settled(app.id)
        number, status, digest, turn = newest(p, app)
        assert (number, status) == (2, "failed")
        assert digest == done.version.digest == snapshot(p.workspace, app.id).digest
        assert turn == done.version.turn  # the note that told the model of the edit
        told = str(p.memory.units(app.id)[-1].messages[0].content)  # and then what it broke
        assert told.startswith("[zerocode checks: the user's own edit (v2) changed what")
        assert "- c1: expect[0]: expected" in told and "never undo it" in told
        units = len(p.memory.units(app.id))
        assert done.build is not None
        await suite_follow.run_checks(p.engine, app, done.build)  # the same files again
        assert len(p.memory.units(app.id)) == units  # told once
        with pytest.raises(ChecksFailed, match="c1 failed"):
            gate_deploy(store, app.id, digest, required=True)

        await save_text(p.engine, app, old="Fresh Bread", new="Bakery", tag="h1", page="/")
        await suite_follow.settled(app.id)
        assert newest(p, app)[:2] == (4, "passed")

        await restore(p.engine, app, done.version.id)  # back to "Fresh Bread"
        await suite_follow.settled(app.id)
        assert newest(p, app)[:2] == (5, "failed")

        p.workspace.write(app.id, "index.html", BAKERY.encode())  # left unbuilt (a dead turn)
        await rebuild_preview(p.engine, app)
        await suite_follow.settled(app.id)
        number, status, digest, _ = newest(p, app)
        assert (number, status) == (6, "passed")
        assert gate_deploy(store, app.id, digest or "", required=True) is not None

    asyncio.run(flow())
    assert not suite_follow.running(app.id)


def owned(p: Platform, app: App) -> tuple[App, dict[str, str]]:
    """The app given to a new account, and that account's bearer headers."""
    p.accounts.register("baker", "correct horse")
    token, user = p.accounts.login("baker", "correct horse")
    app = App(**{**app.__dict__, "owner": user.id})
    p.apps.put(app)
    return app, {"Authorization": f"Bearer {token}"}


def hand_edit(c: TestClient, base: str, me: dict[str, str], app: App) -> None:
    """Deploys need passing checks; the heading edited by hand; its checks' run awaited."""
    assert c.patch(base, headers=me, json={"requireChecks": True}).status_code == 200
    fresh = BAKERY.replace("Bakery", "Fresh Bread")
    assert c.put(f"{base}/files/index.html", headers=me, json={"content": fresh}).is_success
    c.portal.call(suite_follow.settled, app.id)  # type: ignore[union-attr]


def test_checks_run_now_and_a_deploy_that_requires_them(tmp_path: Path) -> None:
    p, app = bakery(tmp_path)
    app, me = owned(p, app)
    base = f"/api/apps/{app.id}"
    with TestClient(create_app(p)) as c:
        hand_edit(c, base, me, app)
        suite = c.get(f"{base}/checks", headers=me).json()
        assert suite["running"] is False and suite["checks"][0]["status"] == "failed"
        refused = c.post(f"{base}/deploy", headers=me)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "checks_failed"
        assert "Run checks now" in refused.json()["error"]["message"]

        assert p.engine.checks is not None
        p.engine.checks.retire(app.id, "c1", "the heading changed", 2)
        p.engine.checks.add(app.id, parse_check({**HEADING, "expect": [
            {"text": {"css": "h1"}, "equals": "Fresh Bread"}]}), 2)  # fmt: skip
        assert c.post(f"{base}/deploy", headers=me).status_code == 409  # c2 never ran
        ran = c.post(f"{base}/checks/run", headers=me)
        assert ran.status_code == 200, ran.text
        live = [x for x in ran.json()["checks"] if x["status"] != "retired"]
        assert [(x["id"], x["status"]) for x in live] == [("c2", "passed")]
        assert c.post(f"{base}/deploy", headers=me).status_code == 202

        p.engine.lease.acquire(f"turn:{app.id}", "a turn", 30)
        busy = c.post(f"{base}/checks/run", headers=me)
        assert busy.status_code == 409 and "being changed" in busy.json()["error"]["message"]
        p.engine.lease.release(f"turn:{app.id}", "a turn")
        p.accounts.register("stranger", "correct horse")
        theirs, _ = p.accounts.login("stranger", "correct horse")
        stranger = {"Authorization": f"Bearer {theirs}"}
        assert c.post(f"{base}/checks/run", headers=stranger).status_code == 404


def test_a_check_the_builders_edit_broke_is_marked_and_updated(tmp_path: Path) -> None:
    p, app = bakery(tmp_path)
    app, me = owned(p, app)
    base = f"/api/apps/{app.id}"
    with TestClient(create_app(p)) as c:
        hand_edit(c, base, me, app)
        [c1] = c.get(f"{base}/checks", headers=me).json()["checks"]
        assert c1["status"] == "failed"
        assert c1["editChanged"] == {"versionId": "v2", "beforeId": "v1", "updatable": True}

        updated = c.post(f"{base}/checks/c1/update", headers=me)
        assert updated.status_code == 200, updated.text
        assert updated.json()["id"] == "c2"
        assert updated.json()["expect"] == [{"text": {"css": "h1"}, "equals": "Fresh Bread"}]
        assert updated.json()["description"] == "The heading reads Fresh Bread"
        c.portal.call(suite_follow.settled, app.id)  # type: ignore[union-attr]
        suite = {x["id"]: x for x in c.get(f"{base}/checks", headers=me).json()["checks"]}
        assert suite["c2"]["status"] == "passed" and suite["c2"]["editChanged"] is None
        assert suite["c1"]["status"] == "retired"
        assert "after their edit: c2" in suite["c1"]["retired"]["reason"]
        told = str(p.memory.units(app.id)[-1].messages[0].content)
        assert "the edit is deliberate" in told and "c1 is retired and c2 takes its place" in told
        assert c.post(f"{base}/deploy", headers=me).status_code == 202

        again = c.post(f"{base}/checks/c1/update", headers=me)
        assert again.status_code == 409  # retired already
        # Undoing the edit instead: the version before it restored, the checks run again.
        assert c.post(f"{base}/versions/v1/restore", headers=me).is_success
        c.portal.call(suite_follow.settled, app.id)  # type: ignore[union-attr]
        [c2] = [x for x in c.get(f"{base}/checks", headers=me).json()["checks"] if x["id"] == "c2"]
        assert c2["status"] == "failed" and c2["editChanged"] is None  # a restore, not an edit
        assert c.post(f"{base}/checks/c2/update", headers=me).status_code == 200


def test_a_failure_that_names_no_text_cannot_be_updated(tmp_path: Path) -> None:
    p, app = bakery(tmp_path)
    shown = {"description": "A heading shows", "expect": [{"visible": {"role": "heading"}}]}
    assert p.engine.checks is not None
    stored = p.engine.checks.add(app.id, parse_check(shown), 1)
    evidence = Evidence(where="expect[0]", expected="visible", actual="hidden")
    seen = CheckResult(check_id=stored.id, status="failed", evidence=evidence)
    assert rewrite_of(stored, seen) is None
    with pytest.raises(InvalidInput, match="retire it, or undo the edit"):
        asyncio.run(update_by_user(p.engine, app.id, stored.id))
