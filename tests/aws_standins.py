"""Local stand-ins for the AWS APIs moto does not serve the way the platform uses them.

* The CloudFront KeyValueStore **data plane** (``cloudfront-keyvaluestore``: Describe-
  KeyValueStore, GetKey, PutKey, DeleteKey, ListKeys). moto has the control plane
  (CreateKeyValueStore) but no data plane. The stand-in keeps one ETag per store that every
  write changes, refuses a write whose ``If-Match`` is stale (409 ConflictException), and
  answers in the rest-json shapes of botocore's service model. It refuses requests that are
  not SigV4A-signed, as the real endpoint does, so a client without ``awscrt`` fails here too.
* **CodeBuild** StartBuild, BatchGetBuilds and StopBuild. moto's CodeBuild reports every build
  SUCCEEDED the first time it is asked about it, which would fail (or publish) a build before
  anything ran. Here a build stays IN_PROGRESS until the test, playing CodeBuild, completes
  it (``on_start`` may do that at once, as a fast build would).

Both are one HTTP server that clients reach **as an HTTP proxy**. The KeyValueStore's
endpoint rules put the store's account id in front of any configured endpoint's host
(``https://{account}.cloudfront-kvs.global.api.aws``; with ``AWS_ENDPOINT_URL_CLOUDFRONT_
KEYVALUESTORE=http://kvs.aws-standin.test`` a request goes to
``http://123456789012.kvs.aws-standin.test/...``), a name no resolver here knows. So
:meth:`StandIns.client_environment` sets botocore's ordinary endpoint variables to names
under ``aws-standin.test`` (RFC 2606: never a real host), routes ``http(s)_proxy`` to this
server and exempts only loopback (moto) with ``no_proxy``. The process under test is
unchanged: no code branch, only the environment any boto3 program honours. A request for any
other host (a client that escaped its endpoint and went for real AWS) is refused with 502 and
recorded in :attr:`StandIns.escaped`, which the tests assert is empty.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

DOMAIN = "aws-standin.test"
KVS_HOST = f"kvs.{DOMAIN}"
CODEBUILD_HOST = f"codebuild.{DOMAIN}"
# The real service's limits (CloudFront developer guide, "Key value store quotas").
KVS_MAX_KEY_BYTES = 512
KVS_MAX_VALUE_BYTES = 1024
KVS_MAX_STORE_BYTES = 5 * 1024 * 1024
KVS_PAGE_MAX = 50


class ServiceError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


# -- CloudFront KeyValueStore data plane --------------------------------------------------


@dataclass
class KeyValueStore:
    arn: str
    items: dict[str, str] = field(default_factory=dict)
    # One version for the whole store: any write to any key changes it.
    etag: str = field(default_factory=lambda: f"KV{uuid.uuid4().hex}")
    created: float = field(default_factory=time.time)
    modified: float = field(default_factory=time.time)

    @property
    def size(self) -> int:
        return sum(len(k.encode()) + len(v.encode()) for k, v in self.items.items())

    def sizes(self) -> dict[str, int]:
        return {"ItemCount": len(self.items), "TotalSizeInBytes": self.size}


class KvsDataPlane:
    """Stores by ARN (only the ones :meth:`add_store` made exist), with ETag semantics."""

    def __init__(self) -> None:
        self.stores: dict[str, KeyValueStore] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (operation, key or "")

    def add_store(self, arn: str) -> None:
        with self.lock:
            self.stores.setdefault(arn, KeyValueStore(arn))

    def items(self, arn: str) -> dict[str, str]:
        with self.lock:
            return dict(self._store(arn).items)

    def _store(self, arn: str) -> KeyValueStore:
        store = self.stores.get(arn)
        if store is None:
            raise ServiceError(404, "ResourceNotFoundException", f"no key value store {arn}")
        return store

    def handle(
        self,
        method: str,
        segments: list[str],
        query: dict[str, list[str]],
        headers: Any,
        body: bytes,
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``segments``: the decoded path, ``["key-value-stores", arn, ("keys", (key))]``."""
        if len(segments) < 2 or segments[0] != "key-value-stores":
            raise ServiceError(404, "UnknownOperationException", "not a KeyValueStore path")
        arn, rest = segments[1], segments[2:]
        with self.lock:
            store = self._store(arn)
            if not rest and method == "GET":
                self.requests.append(("DescribeKeyValueStore", ""))
                return self._describe(store)
            if rest == ["keys"] and method == "GET":
                self.requests.append(("ListKeys", ""))
                return self._list(store, query)
            if len(rest) == 2 and rest[0] == "keys":
                key = rest[1]
                if method == "GET":
                    self.requests.append(("GetKey", key))
                    if key not in store.items:
                        raise ServiceError(404, "ResourceNotFoundException", f"no key {key}")
                    return 200, {"Key": key, "Value": store.items[key], **store.sizes()}, {}
                if method in ("PUT", "DELETE"):
                    self.requests.append(("PutKey" if method == "PUT" else "DeleteKey", key))
                    self._check_if_match(store, headers.get("If-Match"))
                    if method == "PUT":
                        self._put(store, key, body)
                    elif key in store.items:
                        del store.items[key]
                    else:
                        raise ServiceError(404, "ResourceNotFoundException", f"no key {key}")
                    store.etag = f"KV{uuid.uuid4().hex}"
                    store.modified = time.time()
                    return 200, store.sizes(), {"ETag": store.etag}
        raise ServiceError(405, "UnknownOperationException", f"{method} {'/'.join(segments)}")

    @staticmethod
    def _describe(store: KeyValueStore) -> tuple[int, dict[str, Any], dict[str, str]]:
        answer = {
            **store.sizes(),
            "KvsARN": store.arn,
            "Created": store.created,
            "LastModified": store.modified,
            "Status": "READY",
        }
        return 200, answer, {"ETag": store.etag}

    @staticmethod
    def _list(
        store: KeyValueStore, query: dict[str, list[str]]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        limit = int(query.get("MaxResults", ["10"])[0])
        if not 1 <= limit <= KVS_PAGE_MAX:
            raise ServiceError(400, "ValidationException", f"MaxResults must be 1..{KVS_PAGE_MAX}")
        keys = sorted(store.items)
        start = int(query.get("NextToken", ["0"])[0])
        page = keys[start : start + limit]
        answer: dict[str, Any] = {"Items": [{"Key": k, "Value": store.items[k]} for k in page]}
        if start + limit < len(keys):
            answer["NextToken"] = str(start + limit)
        return 200, answer, {}

    @staticmethod
    def _check_if_match(store: KeyValueStore, if_match: str | None) -> None:
        if not if_match:
            raise ServiceError(
                400, "ValidationException", "If-Match (the store's ETag) is required"
            )
        if if_match != store.etag:
            raise ServiceError(409, "ConflictException", "the store's ETag does not match If-Match")

    @staticmethod
    def _put(store: KeyValueStore, key: str, body: bytes) -> None:
        value = json.loads(body or b"{}").get("Value")
        if not isinstance(value, str):
            raise ServiceError(400, "ValidationException", "Value is required")
        if not key or len(key.encode()) > KVS_MAX_KEY_BYTES:
            raise ServiceError(400, "ValidationException", "a key is 1 to 512 bytes")
        if len(value.encode()) > KVS_MAX_VALUE_BYTES:
            raise ServiceError(400, "ValidationException", "a value is at most 1 KB")
        old = len(key.encode()) + len(store.items[key].encode()) if key in store.items else 0
        if store.size - old + len(key.encode()) + len(value.encode()) > KVS_MAX_STORE_BYTES:
            raise ServiceError(402, "ServiceQuotaExceededException", "the store holds 5 MB")
        store.items[key] = value


# -- CodeBuild ------------------------------------------------------------------------------


@dataclass
class CodeBuildRun:
    """One StartBuild, as CodeBuild records it; the test moves it to a final status."""

    id: str
    project: str
    request: dict[str, Any]
    status: str = "IN_PROGRESS"
    started: float = field(default_factory=time.time)
    ended: float | None = None

    @property
    def variables(self) -> dict[str, str]:
        return {
            str(v["name"]): str(v["value"])
            for v in self.request.get("environmentVariablesOverride", [])
        }

    @property
    def arn(self) -> str:
        return f"arn:aws:codebuild:us-east-1:123456789012:build/{self.id}"

    def describe(self) -> dict[str, Any]:
        finished = self.status != "IN_PROGRESS"
        answer: dict[str, Any] = {
            "id": self.id,
            "arn": self.arn,
            "projectName": self.project,
            "buildStatus": self.status,
            "currentPhase": "COMPLETED" if finished else "BUILD",
            "buildComplete": finished,
            "startTime": self.started,
            "phases": [{"phaseType": "SUBMITTED", "phaseStatus": "SUCCEEDED"}],
            "environment": {
                "type": "ARM_CONTAINER",
                "environmentVariables": self.request.get("environmentVariablesOverride", []),
            },
            "logs": {"deepLink": f"https://console.aws.example/codebuild/{self.id}"},
        }
        if finished:
            answer["endTime"] = self.ended
            if self.status != "SUCCEEDED":
                answer["phases"].append(
                    {
                        "phaseType": "BUILD",
                        "phaseStatus": self.status,
                        "contexts": [{"message": "the stand-in was told this build failed"}],
                    }
                )
        return answer

    def event(self) -> dict[str, Any]:
        """The EventBridge "CodeBuild Build State Change" event CodeBuild sends now."""
        return {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "CodeBuild Build State Change",
            "source": "aws.codebuild",
            "account": "123456789012",
            "region": "us-east-1",
            "resources": [self.arn],
            "detail": {
                "build-status": self.status,
                "project-name": self.project,
                "build-id": self.arn,
                "current-phase": "COMPLETED" if self.status != "IN_PROGRESS" else "BUILD",
                "version": "1",
                "additional-information": {
                    "build-complete": self.status != "IN_PROGRESS",
                    "environment": {
                        "type": "ARM_CONTAINER",
                        "environment-variables": self.request.get(
                            "environmentVariablesOverride", []
                        ),
                    },
                },
            },
        }


class CodeBuildStandIn:
    def __init__(self) -> None:
        self.projects: dict[str, dict[str, Any]] = {}
        self.builds: dict[str, CodeBuildRun] = {}
        self.lock = threading.Lock()
        # Called (on its own thread) after each StartBuild: a test playing CodeBuild.
        self.on_start: Callable[[CodeBuildRun], object] | None = None
        self.stopped: list[str] = []  # each StopBuild's build id, in order

    def add_project(self, name: str, definition: dict[str, Any]) -> None:
        self.projects[name] = definition

    def runs(self) -> list[CodeBuildRun]:
        with self.lock:
            return list(self.builds.values())

    def finish(self, build_id: str, status: str = "SUCCEEDED") -> CodeBuildRun:
        with self.lock:
            run = self.builds[build_id]
            if run.status == "IN_PROGRESS":  # a stopped build stays stopped
                run.status, run.ended = status, time.time()
            return run

    def handle(self, target: str, body: bytes) -> dict[str, Any]:
        request = json.loads(body or b"{}")
        operation = target.removeprefix("CodeBuild_20161006.")
        if operation == "StartBuild":
            return self._start(request)
        if operation == "BatchGetBuilds":
            with self.lock:
                ids = [str(i) for i in request.get("ids", [])]
                return {
                    "builds": [self.builds[i].describe() for i in ids if i in self.builds],
                    "buildsNotFound": [i for i in ids if i not in self.builds],
                }
        if operation == "StopBuild":  # a final build stays as it is, as CodeBuild's does
            with self.lock:
                run = self.builds.get(str(request.get("id")))
                if run is None:
                    raise ServiceError(400, "ResourceNotFoundException", "Build not found")
                self.stopped.append(run.id)
                if run.status == "IN_PROGRESS":
                    run.status, run.ended = "STOPPED", time.time()
                return {"build": run.describe()}
        raise ServiceError(400, "InvalidInputException", f"the stand-in has no {operation}")

    def _start(self, request: dict[str, Any]) -> dict[str, Any]:
        project = str(request.get("projectName", ""))
        if project not in self.projects:
            raise ServiceError(400, "ResourceNotFoundException", "Project cannot be found")
        with self.lock:
            token = request.get("idempotencyToken")
            for run in self.builds.values():  # the same token starts no second build
                if token and run.request.get("idempotencyToken") == token:
                    return {"build": run.describe()}
            run = CodeBuildRun(f"{project}:{uuid.uuid4()}", project, request)
            self.builds[run.id] = run
        if self.on_start is not None:
            threading.Thread(target=self.on_start, args=(run,), daemon=True).start()
        return {"build": run.describe()}


# -- the HTTP front -------------------------------------------------------------------------


class StandIns:
    """The stand-ins behind one HTTP proxy on a free loopback port (see the module's doc)."""

    def __init__(self) -> None:
        self.kvs = KvsDataPlane()
        self.codebuild = CodeBuildStandIn()
        self.escaped: list[str] = []
        self.unsigned: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> StandIns:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def client_environment(self) -> dict[str, str]:
        """What a boto3 program's environment needs to reach the stand-ins (and, with moto
        on loopback, nothing else)."""
        env = {
            "AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE": f"http://{KVS_HOST}",
            "AWS_ENDPOINT_URL_CODEBUILD": f"http://{CODEBUILD_HOST}",
        }
        for name in ("http_proxy", "https_proxy", "all_proxy"):
            env[name] = env[name.upper()] = self.proxy_url
        env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
        return env


def _handler(standins: StandIns) -> type[BaseHTTPRequestHandler]:
    """A handler class serving these stand-ins (the server makes one handler a request)."""

    class Handler(_Handler):
        pass

    Handler.standins = standins
    return Handler


class _Handler(BaseHTTPRequestHandler):
    """The proxy every AWS client goes through: the KeyValueStore and CodeBuild stand-ins
    answer their hosts; anything else is recorded as an escape and refused."""

    protocol_version = "HTTP/1.1"
    standins: ClassVar[StandIns]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_CONNECT(self) -> None:  # HTTPS through the proxy: a client went for real AWS
        self.standins.escaped.append(f"CONNECT {self.path}")
        self._reply(502, {"message": f"the stand-ins do not reach {self.path}"}, {})

    def do_GET(self) -> None:
        self._dispatch()

    do_PUT = do_DELETE = do_POST = do_HEAD = do_GET

    def _dispatch(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = urlsplit(self.path)
        host = (url.hostname or self.headers.get("Host", "").split(":")[0]).lower()
        try:
            if host.endswith("." + KVS_HOST):
                self._key_value_store(url.path, url.query, body)
            elif host == CODEBUILD_HOST and self.command == "POST":
                target = self.headers.get("X-Amz-Target", "")
                self._reply(200, self.standins.codebuild.handle(target, body), {}, json11=True)
            else:
                self.standins.escaped.append(f"{self.command} {self.path}")
                raise ServiceError(502, "BadGateway", f"the stand-ins do not serve {host}")
        except ServiceError as exc:
            self._reply(
                exc.status,
                {"__type": exc.code, "message": exc.message, "Message": exc.message},
                {"x-amzn-ErrorType": exc.code},
                json11=host == CODEBUILD_HOST,
            )

    def _key_value_store(self, path: str, query: str, body: bytes) -> None:
        self._require_sigv4a()
        raw = path.split("?")[0]
        segments = [unquote(s) for s in raw.strip("/").split("/")]
        status, answer, headers = self.standins.kvs.handle(
            self.command, segments, parse_qs(query), self.headers, body
        )
        self._reply(status, answer, headers)

    def _require_sigv4a(self) -> None:
        authorization = self.headers.get("Authorization", "")
        if not authorization.startswith("AWS4-ECDSA-P256-SHA256 "):
            self.standins.unsigned.append(self.path)
            raise ServiceError(
                403, "AccessDeniedException", "KeyValueStore requests are signed with SigV4A"
            )

    def _reply(
        self,
        status: int,
        answer: dict[str, Any],
        headers: dict[str, str],
        *,
        json11: bool = False,
    ) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/x-amz-json-1.1" if json11 else "application/json"
        )
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


# -- playing CodeBuild ----------------------------------------------------------------------

LAYER = Path(__file__).resolve().parents[1] / "layers" / "core" / "python"
BOX_IMAGE = Path(__file__).resolve().parent / "box_image"  # its sitecustomize.py
DOCKERFILE = LAYER / "zerocode" / "buildbox" / "Dockerfile"


@functools.cache
def image_modules() -> str:
    """The top-level modules the build image's Python can import besides the standard
    library: zerocode, what its Dockerfile pip-installs, and what those require."""
    import importlib.metadata as metadata

    from packaging.requirements import Requirement

    pinned = re.findall(r"\b([A-Za-z0-9_.-]+)==[0-9][^\s\\]*", DOCKERFILE.read_text())
    wanted, seen = [p.lower() for p in pinned], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name.lower())
    modules = {"zerocode"}
    for module, dists in metadata.packages_distributions().items():
        if any(d.lower().replace("_", "-") in {s.replace("_", "-") for s in seen} for d in dists):
            modules.add(module)
    return ",".join(sorted(modules))


# What a CodeBuild container has besides the build's own variables and its role session's
# credentials (:class:`BuildRole`): the endpoint those come from. Canaries here: no output,
# log or record may ever hold them.
CONTAINER_CANARIES = {
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/container-canary-4f1d",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN": "canary-container-token-4f1d",
}


@dataclass
class BuildRole:
    """The CodeBuild project's role on moto. CodeBuild runs each build under a session of
    it named after the build (``AWSCodeBuild-{uuid}``: CloudTrail shows the principal
    ``{role id}:AWSCodeBuild-{uuid}``); :meth:`environment` gives a run that session's
    credentials as its container has them. ``secrets``: every secret key and token given,
    which no output, log or record may hold."""

    moto_url: str
    arn: str
    secrets: list[str] = field(default_factory=list)

    @classmethod
    def made(cls, moto_url: str, name: str) -> BuildRole:
        """The role, created on moto if it is not there yet."""
        iam = _moto(moto_url, "iam")
        try:
            arn = iam.get_role(RoleName=name)["Role"]["Arn"]
        except iam.exceptions.NoSuchEntityException:
            arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        return cls(moto_url, str(arn))

    @property
    def role_id(self) -> str:
        name = self.arn.rsplit("/", 1)[-1]
        return str(_moto(self.moto_url, "iam").get_role(RoleName=name)["Role"]["RoleId"])

    def environment(self, run: CodeBuildRun) -> dict[str, str]:
        given = _moto(self.moto_url, "sts").assume_role(
            RoleArn=self.arn, RoleSessionName=f"AWSCodeBuild-{run.id.rsplit(':', 1)[-1]}"
        )["Credentials"]
        self.secrets += [given["SecretAccessKey"], given["SessionToken"]]
        return {
            "CODEBUILD_BUILD_ID": run.id,
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": self.moto_url,  # what reaches "AWS" here
            "AWS_ACCESS_KEY_ID": given["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": given["SecretAccessKey"],
            "AWS_SESSION_TOKEN": given["SessionToken"],
        }


def _moto(moto_url: str, service: str) -> Any:
    import boto3

    return boto3.client(
        service,
        region_name="us-east-1",
        endpoint_url=moto_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def buildspec_environment(
    run: CodeBuildRun,
    *,
    role: BuildRole,
    toolchain: Path,
    chromium: str,
    workdir: Path,
    path: str | None = None,
) -> dict[str, str]:
    """The environment the buildspec's command gets: the build's variables, the image's
    settings (the toolchain, Chromium, the in-box program on the path) and the container's
    own additions (CodeBuild's, the role session's). Checks the buildspec is the platform's
    one command."""
    spec = yaml.safe_load(run.request["buildspecOverride"])
    (command,) = spec["phases"]["build"]["commands"]
    assert command == "python3 -m zerocode.buildbox", command
    workdir.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": path or os.environ["PATH"],
        "PYTHONPATH": f"{BOX_IMAGE}{os.pathsep}{LAYER}",
        "BOX_IMAGE_MODULES": image_modules(),
        "HOME": str(workdir),
        "ZEROCODE_TOOLCHAIN": str(toolchain),
        "ZEROCODE_CHROMIUM": chromium,
        **run.variables,
        **CONTAINER_CANARIES,
        **role.environment(run),
    }


def run_the_buildspec(run: CodeBuildRun, **where: Any) -> subprocess.CompletedProcess[str]:
    """Do what CodeBuild does with the platform's buildspec: run its one command,
    ``python3 -m zerocode.buildbox``, in :func:`buildspec_environment` (``where``: its
    keywords). The real toolchain, Vite and Chromium run; S3 and STS are moto's."""
    env = buildspec_environment(run, **where)
    workdir = where["workdir"]
    return subprocess.run(
        [sys.executable, "-m", "zerocode.buildbox"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def decode_jwt(token: str) -> dict[str, Any]:
    """A JWT's claims, unverified (what the test reads from the tokens Cognito issued)."""
    payload = token.split(".")[1]
    claims: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return claims
