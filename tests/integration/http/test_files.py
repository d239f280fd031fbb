"""/api/apps/{id}/files and download in process."""

from __future__ import annotations

from tests.integration.http.conftest import Api
from tests.unit.publishing.test_download import unzipped


def test_list_read_and_download_the_files(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner, "A page about newts")
    assert c.get(f"/api/apps/{app['id']}/files", headers=owner).json() == {"files": []}
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Newts</h1>")
    api.platform.workspace.write(app["id"], "css/site.css", b"h1 { color: green }")
    listing = c.get(f"/api/apps/{app['id']}/files", headers=owner).json()["files"]
    assert sorted(f["path"] for f in listing) == ["css/site.css", "index.html"]
    one = c.get(f"/api/apps/{app['id']}/files/css/site.css", headers=owner)
    assert one.status_code == 200 and one.text == "h1 { color: green }"
    assert one.headers["content-type"].startswith("text/plain")
    c.patch(f"/api/apps/{app['id']}", headers=owner, json={"name": "Newts & co"})
    download = c.get(f"/api/apps/{app['id']}/download", headers=owner)
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/zip"
    assert download.headers["content-disposition"] == (
        "attachment; filename=\"Newts & co.zip\"; filename*=UTF-8''Newts%20%26%20co.zip"
    )
    top, zipped = unzipped(download.content)
    assert top == "newts-co"  # one folder, named after the app
    # An html app is its index.html: anything else its workspace holds is named, not zipped.
    assert sorted(zipped) == ["README.md", "index.html"]
    assert zipped["index.html"] == b"<h1>Newts</h1>"
    assert "- `css/site.css`" in zipped["README.md"].decode()


def test_refusals(api: Api) -> None:
    c, owner, other = api.client, api.user(), api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Newts</h1>")
    for path in ("files", "files/index.html", "download"):
        assert c.get(f"/api/apps/{app['id']}/{path}").status_code == 401
        assert c.get(f"/api/apps/{app['id']}/{path}", headers=other).status_code == 404
    assert c.get(f"/api/apps/{app['id']}/files/missing.html", headers=owner).status_code == 404
    escape = c.get(f"/api/apps/{app['id']}/files/..%2F..%2Fetc%2Fpasswd", headers=owner)
    assert escape.status_code in (400, 404)


def test_reserved_and_invisible_paths_are_400_with_a_json_error(api: Api) -> None:
    """The platform's temporary names and paths with bidi or invisible characters are refused
    by clean_path at every file route: a 400 with the reason as JSON, never a 500."""
    from urllib.parse import quote

    c, owner = api.client, api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Newts</h1>")
    for path, why in [
        ("src/.zc-tmp-0123abcd", "temporary files"),
        (".zc-tmp-0123abcd", "temporary files"),
        ("index\u202e.html", "bidirectional control characters (U+202E)"),
        ("in\u200bdex.html", "invisible or non-printing characters (U+200B)"),
        ("\ufeffindex.html", "invisible or non-printing characters (U+FEFF)"),
    ]:
        for route in ("files", "code"):
            response = c.get(f"/api/apps/{app['id']}/{route}/{quote(path)}", headers=owner)
            assert response.status_code == 400, (route, path, response.text)
            error = response.json()["error"]
            assert error["code"] == "path_refused" and why in error["message"], error
