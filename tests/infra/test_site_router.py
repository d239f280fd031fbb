"""The CloudFront site router (infra/functions/site_router.js), run locally under Node.

``cf_function_harness.mjs`` evaluates the function in a bare ``vm`` context with a fake
KeyValueStore, so routing, namespacing and traversal rules are checked without AWS.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "infra" / "functions" / "site_router.js"
HARNESS = Path(__file__).with_name("cf_function_harness.mjs")
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

KVS = {
    "site:deploykey1": "app1/b1",
    "preview:previewkey1": "app1/p7",
    "site:Key_with-dash": "app2/b2",
    "site:novalue01": "app1",
    "site:extrapart1": "app1/b1/x",
    "site:dotdotval1": "../b1",
    "site:emptyapp1": "/b1",
    "site:badchars1": "app 1/b1",
    "site:prerendered": "app3/b3",
    "routes:app3/b3": "about notes/5 关于",
}

NOT_FOUND = {
    "statusCode": 404,
    "statusDescription": "Not Found",
    "headers": {"content-type": {"value": "text/plain"}},
    "body": "not found",
}


def run(uris: list[str], kvs: dict[str, str] = KVS) -> list[dict[str, Any]]:
    """What the function returns for each URI, in order (one Node process for all)."""
    assert NODE is not None
    events = [
        {"request": {"uri": uri, "method": "GET", "headers": {}, "querystring": {}}} for uri in uris
    ]
    proc = subprocess.run(
        [NODE, str(HARNESS), str(FUNCTION)],
        input=json.dumps({"kvs": kvs, "events": events}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    for uri, result in zip(uris, results, strict=True):
        assert "error" not in result, f"{uri}: {result['error']}"
    return results


def route(uri: str) -> dict[str, Any]:
    return run([uri])[0]


@pytest.mark.parametrize(
    ("uri", "origin_uri"),
    [
        # the site root and directories serve their index.html
        ("/sites/deploykey1/", "/builds/app1/b1/index.html"),
        ("/sites/deploykey1/docs/", "/builds/app1/b1/docs/index.html"),
        # files are served as they are
        ("/sites/deploykey1/index.html", "/builds/app1/b1/index.html"),
        ("/sites/deploykey1/assets/index-abc.js", "/builds/app1/b1/assets/index-abc.js"),
        ("/sites/deploykey1/favicon.ico", "/builds/app1/b1/favicon.ico"),
        # a path with no extension is a client-side route: the SPA's index.html
        ("/sites/deploykey1/about", "/builds/app1/b1/index.html"),
        ("/sites/deploykey1/users/42/edit", "/builds/app1/b1/index.html"),
        # keys may use - and _
        ("/sites/Key_with-dash/app.css", "/builds/app2/b2/app.css"),
        # previews read their own namespace
        ("/preview/previewkey1/", "/builds/app1/p7/index.html"),
        ("/preview/previewkey1/assets/index-abc.js", "/builds/app1/p7/assets/index-abc.js"),
        ("/preview/previewkey1/about", "/builds/app1/p7/index.html"),
    ],
)
def test_rewrites_to_the_pointed_build(uri: str, origin_uri: str) -> None:
    result = route(uri)
    assert result == {"uri": origin_uri, "method": "GET", "headers": {}, "querystring": {}}


@pytest.mark.parametrize(
    ("uri", "origin_uri"),
    [
        # a prerendered route is served its own page; the home page is index.html
        ("/sites/prerendered/", "/builds/app3/b3/index.html"),
        ("/sites/prerendered/about", "/builds/app3/b3/about/index.html"),
        ("/sites/prerendered/about/", "/builds/app3/b3/about/index.html"),
        ("/sites/prerendered/notes/5", "/builds/app3/b3/notes/5/index.html"),
        ("/sites/prerendered/%E5%85%B3%E4%BA%8E", "/builds/app3/b3/%E5%85%B3%E4%BA%8E/index.html"),
        # any other route gets the app's page as built, never another route's
        ("/sites/prerendered/notes/6", "/builds/app3/b3/.shell.html"),
        ("/sites/prerendered/abou", "/builds/app3/b3/.shell.html"),
        ("/sites/prerendered/notes", "/builds/app3/b3/.shell.html"),
        # files are files
        ("/sites/prerendered/assets/index-abc.js", "/builds/app3/b3/assets/index-abc.js"),
    ],
)
def test_a_prerendered_deploys_routes_get_their_own_pages(uri: str, origin_uri: str) -> None:
    """Issue 44, point 3: the build's routes key says which routes have a page."""
    result = route(uri)
    assert result == {"uri": origin_uri, "method": "GET", "headers": {}, "querystring": {}}


@pytest.mark.parametrize("uri", ["/sites/deploykey1", "/preview/previewkey1"])
def test_site_root_without_slash_redirects(uri: str) -> None:
    result = route(uri)
    assert result["statusCode"] == 301
    assert result["headers"] == {"location": {"value": uri + "/"}}


@pytest.mark.parametrize(
    "uri",
    [
        "/sites/unknownkey1/",
        "/sites/unknownkey1/about",
        "/preview/unknownkey1/",
    ],
    ids=["site", "site-route", "preview"],
)
def test_unknown_key_is_not_found(uri: str) -> None:
    assert route(uri) == NOT_FOUND


@pytest.mark.parametrize(
    "uri",
    [
        "/sites/short/",  # under 8 characters
        "/sites/short",  # ... not even redirected
        "/sites/" + "k" * 65 + "/",  # over 64
        "/sites/deploy.key1/",
        "/sites/deploy%20key/",
        "/sites/deploykey!/",
    ],
    ids=["short", "short-no-slash", "long", "dot", "encoded-space", "punctuation"],
)
def test_badly_shaped_key_is_not_found(uri: str) -> None:
    assert route(uri) == NOT_FOUND


@pytest.mark.parametrize(
    "uri",
    ["/sites/previewkey1/", "/preview/deploykey1/"],
    ids=["preview-key-as-site", "site-key-as-preview"],
)
def test_keys_do_not_cross_namespaces(uri: str) -> None:
    assert route(uri) == NOT_FOUND


@pytest.mark.parametrize(
    "uri",
    [
        "/sites/deploykey1/..",
        "/sites/deploykey1/../b2/index.html",
        "/sites/deploykey1/assets/../../b2/index.html",
        "/sites/deploykey1/./index.html",
        "/sites/deploykey1/%2e%2e/b2/index.html",
        "/sites/deploykey1/%2E%2E/b2/index.html",
        "/sites/deploykey1/.%2e/b2/index.html",
        "/sites/deploykey1/assets%2f..%2f..%2fb2/index.html",
        "/sites/deploykey1//etc/passwd",
        "/sites/deploykey1/assets//index.js",
        "/sites/deploykey1/assets\\index.js",
        "/sites/deploykey1/assets%5cindex.js",
        "/sites/deploykey1/bad%E0%A4%A.js",
        "/sites/deploykey1/_api/data/notes",
        "/sites/deploykey1/%5Fapi/client.js",
    ],
    ids=[
        "dotdot-end",
        "dotdot",
        "dotdot-deep",
        "dot",
        "encoded",
        "encoded-upper",
        "half-encoded",
        "encoded-slash",
        "double-slash-start",
        "double-slash",
        "backslash",
        "encoded-backslash",
        "malformed-encoding",
        "reserved-api",
        "reserved-api-encoded",
    ],
)
def test_traversal_is_not_found(uri: str) -> None:
    assert route(uri) == NOT_FOUND


@pytest.mark.parametrize("key", ["novalue01", "extrapart1", "dotdotval1", "emptyapp1", "badchars1"])
def test_malformed_pointer_value_is_not_found(key: str) -> None:
    assert route(f"/sites/{key}/") == NOT_FOUND


@pytest.mark.parametrize(
    "uri",
    [
        "/",
        "/index.html",
        "/builds/app1/b1/index.html",  # build outputs are reachable only through a pointer
        "/sites/",
        "/sites",
        "/site/deploykey1/",
        "/Sites/deploykey1/",
        "/sitesx/deploykey1/",
        "/previews/previewkey1/",
    ],
)
def test_other_paths_are_not_found(uri: str) -> None:
    assert route(uri) == NOT_FOUND


def test_many_requests_share_one_function_instance() -> None:
    """The KVS handle is created once at load; requests must not leak state into each other."""
    uris = ["/sites/deploykey1/about", "/sites/unknownkey1/", "/preview/previewkey1/a.js"]
    results = run(uris)
    assert [r.get("uri", r.get("statusCode")) for r in results] == [
        "/builds/app1/b1/index.html",
        404,
        "/builds/app1/p7/a.js",
    ]


def test_function_fits_cloudfront_limits() -> None:
    """CloudFront Functions cap code at 10 KB and load it as a script with no exports."""
    source = FUNCTION.read_text()
    assert len(source.encode()) <= 10 * 1024
    assert source.startswith("import cf from 'cloudfront';\n")
    assert "export " not in source
    assert "async function handler(event)" in source


# -- each app its own origin: the key in the Host (context value sitesDomain) -------------

DOMAIN = "apps.example.net"
HOST_KVS = {
    "site:deploykey1": "app1/b1",
    "preview:previewkey1": "app1/p7",
    "site:previewkey1x": "app2/b2",
}


def route_hosts(
    tmp_path: Path, requests: list[tuple[str, str]], kvs: dict[str, str] = HOST_KVS
) -> list[dict[str, Any]]:
    """What the router built for ``DOMAIN`` returns for each (Host, URI)."""
    from zerocode_infra.hosting import router_code

    return run_code(router_code(DOMAIN), tmp_path, requests, kvs)


def run_code(
    code: str, tmp_path: Path, requests: list[tuple[str, str]], kvs: dict[str, str]
) -> list[dict[str, Any]]:
    """What the function ``code`` returns for each (Host, URI) ("": no Host header)."""
    assert NODE is not None
    function = tmp_path / "site_router.js"
    function.write_text(code)
    events = [
        {
            "request": {
                "uri": uri,
                "method": "GET",
                "querystring": {},
                "headers": {"host": {"value": host}} if host else {},
            }
        }
        for host, uri in requests
    ]
    proc = subprocess.run(
        [NODE, str(HARNESS), str(function)],
        input=json.dumps({"kvs": kvs, "events": events}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    assert all("error" not in r for r in results), results
    return results


@pytest.mark.parametrize(
    ("host", "uri", "origin_uri"),
    [
        (f"deploykey1.{DOMAIN}", "/", "/builds/app1/b1/index.html"),
        (f"deploykey1.{DOMAIN}", "/assets/index-abc.js", "/builds/app1/b1/assets/index-abc.js"),
        (f"deploykey1.{DOMAIN}", "/about", "/builds/app1/b1/index.html"),
        (f"deploykey1.{DOMAIN}", "/docs/", "/builds/app1/b1/docs/index.html"),
        ("DeployKey1.Apps.Example.NET", "/", "/builds/app1/b1/index.html"),  # any case
        (f"deploykey1.{DOMAIN}:443", "/", "/builds/app1/b1/index.html"),
        (f"p-previewkey1.{DOMAIN}", "/", "/builds/app1/p7/index.html"),
        (f"p-previewkey1.{DOMAIN}", "/assets/a.js", "/builds/app1/p7/assets/a.js"),
    ],
)
def test_a_host_of_the_sites_domain_names_its_build(
    tmp_path: Path, host: str, uri: str, origin_uri: str
) -> None:
    (result,) = route_hosts(tmp_path, [(host, uri)])
    assert result["uri"] == origin_uri


@pytest.mark.parametrize(
    "host",
    [
        "d111111abcdef8.cloudfront.net",  # the shared domain serves nothing once apps have hosts
        DOMAIN,
        f"x.deploykey1.{DOMAIN}",
        f"deploykey1.{DOMAIN}.evil.example",
        f"deploykey1.other{DOMAIN}",
        f"previewkey1.{DOMAIN}",  # a preview key without its p- names no site
        f"p-deploykey1.{DOMAIN}",  # ... and a deploy key with one no preview
        f"p-previewkey1x.{DOMAIN}",
        f"unknownkey1.{DOMAIN}",
        f"key_with-dash.{DOMAIN}",  # keys made before: no host can carry them
        f"short.{DOMAIN}",
        "",
    ],
)
def test_any_other_host_is_not_found(tmp_path: Path, host: str) -> None:
    assert route_hosts(tmp_path, [(host, "/")]) == [NOT_FOUND]


def test_the_path_scheme_is_gone_with_a_sites_domain(tmp_path: Path) -> None:
    results = route_hosts(
        tmp_path,
        [
            ("d111111abcdef8.cloudfront.net", "/sites/deploykey1/"),
            ("d111111abcdef8.cloudfront.net", "/preview/previewkey1/"),
        ],
    )
    assert results == [NOT_FOUND, NOT_FOUND]


@pytest.mark.parametrize(
    "uri",
    [
        "/..",
        "/../b2/index.html",
        "/%2e%2e/b2/index.html",
        "//etc/passwd",
        "/assets\\index.js",
        "/bad%E0%A4%A.js",
        "/_api/data/notes",  # reaches here only spelled so that /_api/* does not match
        "/%5Fapi/client.js",
        "/%5fapi/auth/me",
    ],
)
def test_traversal_is_not_found_on_hosts_too(tmp_path: Path, uri: str) -> None:
    assert route_hosts(tmp_path, [(f"deploykey1.{DOMAIN}", uri)]) == [NOT_FOUND]


def test_the_file_on_disk_is_the_path_scheme_and_fits_with_any_domain() -> None:
    from zerocode_infra.hosting import router_code

    assert router_code("") == FUNCTION.read_text()
    assert "const SITES_DOMAIN = '';" in FUNCTION.read_text()
    built = router_code("a-very-long-subdomain.of-a-very-long-domain.example.com")
    assert "const SITES_DOMAIN = 'a-very-long-subdomain." in built
    assert len(built.encode()) <= 10 * 1024


# -- the preview sweep, seen from the edge ------------------------------------------------


def test_a_swept_preview_is_not_found_at_the_edge_and_its_site_still_is(tmp_path: Path) -> None:
    """Pointers as the platform makes them (keys, app and build ids), in a store the preview
    sweep (zerocode.publishing.eviction) ran over: the swept preview answers 404 on both URL
    schemes, the app's site is untouched, and once restored the preview routes again."""
    from zerocode.apps.records import new_app_id, new_deploy_key, new_preview_key
    from zerocode.publishing.builds import new_build_id
    from zerocode.publishing.eviction import DAY, PreviewSweep
    from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer

    app_id, deploy_key, preview_key = new_app_id(), new_deploy_key(), new_preview_key()
    now = 1_800_000_000.0
    site = SiteTarget(app_id, new_build_id(now - 90 * DAY))
    preview = SiteTarget(app_id, new_build_id(now - 31 * DAY))

    class Store(dict[str, str]):
        def pointers(self, prefix: str) -> Any:
            return [(k, SiteTarget.decode(v)) for k, v in self.items() if k.startswith(prefix)]

        def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
            return expected is not None and self.pop(pointer, None) == expected.encode()

    store = Store({site_pointer(deploy_key): site.encode()})
    store[preview_pointer(preview_key)] = preview.encode()
    before = run([f"/sites/{deploy_key}/", f"/preview/{preview_key}/a.js"], dict(store))
    assert [r["uri"] for r in before] == [
        f"/builds/{app_id}/{site.build_id}/index.html",
        f"/builds/{app_id}/{preview.build_id}/a.js",
    ]

    report = PreviewSweep(store, apps=None, idle_seconds=30 * DAY).run(now)  # type: ignore[arg-type]
    assert report.idle == 1 and list(store) == [site_pointer(deploy_key)]
    after = run([f"/sites/{deploy_key}/", f"/preview/{preview_key}/a.js"], dict(store))
    assert after[0]["uri"] == f"/builds/{app_id}/{site.build_id}/index.html"
    assert after[1] == NOT_FOUND
    host = route_hosts(tmp_path, [(f"p-{preview_key}.{DOMAIN}", "/")], dict(store))
    assert host == [NOT_FOUND]

    store[preview_pointer(preview_key)] = preview.encode()  # Publishing.restore_preview
    (restored,) = run([f"/preview/{preview_key}/"], dict(store))
    assert restored["uri"] == f"/builds/{app_id}/{preview.build_id}/index.html"
