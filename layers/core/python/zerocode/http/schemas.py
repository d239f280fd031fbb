"""The API's request and response bodies (their field names are the wire names), and the
mappings from domain records to them: here the rules on text every body shares, the element
picked in the preview, errors, apps, builds and deploys, users and health; by domain beside
it, a turn's (turn_schemas.py), files' and versions' (version_schemas.py) and the checks'
(check_schemas.py, suite_schemas.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from zerocode.accounts.service import ACCOUNT_PATTERN, MAX_PASSWORD, MIN_PASSWORD, User
from zerocode.apps.guards import MAX_MESSAGE
from zerocode.apps.records import MAX_NAME, MAX_PRIORITY, App, CodeGenType
from zerocode.http.report_schemas import BuildReportOut
from zerocode.publishing.builds import BUILD_ID_PATTERN, Build, BuildPurpose, BuildState
from zerocode.publishing.pointers import SiteUrls

# What the API enforces on text, declared in the OpenAPI document (issue 26) so a client or a
# fuzzer knows it before it is refused: at least one visible character, no control character
# but newline and tab, no bidirectional control (apps/guards.py refuses them with its own
# message, which is what a client reads; the schema only says it).
_BIDI = "\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069"  # bidirectional controls
_LONE = "\\ud800-\\udfff"  # a lone surrogate half is not text
_BANNED = "\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f" + _BIDI + _LONE  # tab, newline: allowed
TEXT_PATTERN = f"^[^{_BANNED}]*[^\\s{_BANNED}][^{_BANNED}]*$"
_FIELD: dict[str, Any] = {"pattern": f"^[^{_BANNED}]*$"}  # a picked element's field
_LINE_BANNED = "\\u0000-\\u001f\\u007f-\\u009f" + _BIDI + _LONE  # one line: no tab, no newline
LINE_PATTERN = f"^[^{_LINE_BANNED}]*[^\\s{_LINE_BANNED}][^{_LINE_BANNED}]*$"


def text_rule(most: int) -> dict[str, Any]:
    """A text field's documented rule (the domain's check enforces it)."""
    return {"minLength": 1, "maxLength": most, "pattern": TEXT_PATTERN}


class ElementIn(BaseModel):
    """The element picked in the preview, with the preview build it was picked in
    (required); the other fields are optional but bounded."""

    model_config = ConfigDict(extra="forbid")
    # camelCase: the wire names. The pattern is documented; apps/guards.py enforces it with
    # its own message (check_element).
    pagePath: str | None = Field(None, max_length=300, json_schema_extra=_FIELD)
    tag: str | None = Field(None, max_length=40, json_schema_extra=_FIELD)
    selector: str | None = Field(None, max_length=500, json_schema_extra=_FIELD)
    text: str | None = Field(None, max_length=500, json_schema_extra=_FIELD)
    # An image's source as the page writes it (its src attribute): which asset it shows.
    src: str | None = Field(None, max_length=500, json_schema_extra=_FIELD)
    # Issue 24: an element names what one preview showed. Refused (409 preview_out_of_date)
    # unless it is the preview shown now, built from the files as they are now.
    buildId: str = Field(
        max_length=40,
        description="the preview build the element was picked in: GET …/preview's buildId, "
        "or a build event's; 409 preview_out_of_date unless the preview shows it now",
        json_schema_extra={"pattern": BUILD_ID_PATTERN},
    )


class TextElementIn(ElementIn):
    """A picked element whose text is to change: it has some."""

    text: str = Field(max_length=500, json_schema_extra=text_rule(500))


class CreateAppIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    initPrompt: str = Field(min_length=1, json_schema_extra=text_rule(MAX_MESSAGE))
    codeGenType: CodeGenType | None = None

    @field_validator("initPrompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():  # its own type, so a client can say "describe your app"
            raise PydanticCustomError("string_blank", "initPrompt is blank")
        return value


def _at_least_one_value(schema: dict[str, Any]) -> None:
    """PATCH's documented body: one field at least, each a value (null changes nothing)."""
    schema["minProperties"] = 1
    schema["properties"]["name"] = {"type": "string", "title": "Name", **text_rule(MAX_NAME)}
    schema["properties"]["requireChecks"] = {"type": "boolean", "title": "Requirechecks"}


class AppPatchIn(BaseModel):
    """What an owner may change of an app: its name, and whether a deploy needs its
    acceptance checks to pass."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_at_least_one_value)
    name: str | None = None
    requireChecks: bool | None = None


class DeployIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    requireChecks: bool | None = None  # None: the app's setting
    # Deploy even if the new data model hides live records (409 data_hidden otherwise).
    confirmDataChanges: bool = False


class TallyOut(BaseModel):
    passed: int
    failed: int
    notRun: int


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


class AppOut(BaseModel):
    id: str
    name: str
    codeGenType: CodeGenType
    initPrompt: str
    previewUrl: str
    deployKey: str | None
    deployUrl: str | None
    deployBuildId: str | None
    deployedAt: float | None
    cover: str | None
    priority: int
    createdAt: float
    updatedAt: float
    requireChecks: bool = False
    # The app's private cover while it has no deploy cover (`cover`): a screenshot of its
    # latest preview, at this API path for the owner and admins (their credentials needed);
    # never in public lists.
    previewCover: str | None = None


class BuildOut(BaseModel):
    id: str
    appId: str
    purpose: BuildPurpose
    state: BuildState
    sourceDigest: str
    createdAt: float
    startedAt: float | None
    finishedAt: float | None
    seconds: float | None
    logTail: str
    error: str | None
    published: bool  # the build the app's site serves now
    versionId: str | None = None  # the version whose files the build was made from, if known
    checks: TallyOut | None = None  # a deploy's: the acceptance checks on its files
    # A deploy's publish report, in short (issue 44; GET …/deploys/{buildId}/report: whole).
    report: BuildReportOut | None = None


class BuildListOut(BaseModel):
    builds: list[BuildOut]
    nextCursor: str | None


class DeployOut(BaseModel):
    buildId: str
    state: BuildState


class RollbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    buildId: str = Field(json_schema_extra={"pattern": BUILD_ID_PATTERN})


class AppListOut(BaseModel):
    apps: list[AppOut]
    nextCursor: str | None


class AdminAppOut(AppOut):
    owner: str
    ownerAccount: str | None  # None when the owner's account is gone


class AdminAppListOut(BaseModel):
    apps: list[AdminAppOut]
    nextCursor: str | None


class AdminAppIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    cover: str | None = Field(None, max_length=2000)
    priority: int | None = Field(None, ge=0, le=MAX_PRIORITY)


class AdminUserOut(BaseModel):
    id: str
    account: str
    name: str
    role: str
    createdAt: float
    failedLogins: int


class AdminUserListOut(BaseModel):
    users: list[AdminUserOut]
    nextCursor: str | None


class RegisterIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: str = Field(json_schema_extra={"pattern": ACCOUNT_PATTERN})
    password: str = Field(json_schema_extra={"minLength": MIN_PASSWORD, "maxLength": MAX_PASSWORD})
    name: str | None = None


class LoginIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: str
    password: str


class UserOut(BaseModel):
    id: str
    account: str
    name: str
    role: str
    createdAt: float


class LoginOut(BaseModel):
    token: str
    user: UserOut


class HealthOut(BaseModel):
    # "degraded": storage cannot take a write now, or the data directory is below
    # ZEROCODE_MIN_FREE_MB; reads still work, writes may be refused.
    status: Literal["ok", "degraded"]
    version: str
    mode: str
    offlineModel: bool  # the offline scripted model answers: the console says so
    # Admins only (left out for everyone else): which model endpoint answers, and how
    # untrusted builds are isolated ("UNSANDBOXED ..." under the override), and how the
    # headless browser of covers and the runtime check is confined (or why it is off).
    model: str | None = None
    builds: str | None = None
    browser: str | None = None
    # Admins only, when degraded: why (which path and how much free space against the
    # minimum, or the store's error kind).
    reason: str | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422, 429, 503)
}


def app_out(a: App, urls: SiteUrls, *, public: bool = False) -> AppOut:
    """The app as the API shows it; ``public`` (a list anyone may read) leaves out what only
    its owner and admins may see."""
    return AppOut(
        id=a.id,
        name=a.name,
        codeGenType=a.code_gen_type,
        initPrompt=a.init_prompt,
        previewUrl=urls.preview(a.preview_key),
        deployKey=a.deploy_key,
        deployUrl=urls.site(a.deploy_key) if a.deploy_key else None,
        deployBuildId=a.deploy_build_id,
        deployedAt=a.deployed_at,
        cover=a.cover,
        priority=a.priority,
        createdAt=a.created_at,
        updatedAt=a.updated_at,
        requireChecks=a.require_checks,
        previewCover=None if public else preview_cover_path(a),
    )


def preview_cover_path(a: App) -> str | None:
    """The API path of the app's preview cover, naming its build (a new cover, a new URL)."""
    if a.cover or not a.preview_cover:
        return None
    return f"/api/apps/{a.id}/cover?build={a.preview_cover}"


def admin_app_out(a: App, urls: SiteUrls, owner_account: str | None = None) -> AdminAppOut:
    return AdminAppOut(**app_out(a, urls).model_dump(), owner=a.owner, ownerAccount=owner_account)


def user_out(u: User) -> UserOut:
    return UserOut(
        id=u.id, account=u.account, name=u.name, role=u.role.value, createdAt=u.created_at
    )


def admin_user_out(u: User) -> AdminUserOut:
    return AdminUserOut(
        id=u.id,
        account=u.account,
        name=u.name,
        role=u.role.value,
        createdAt=u.created_at,
        failedLogins=u.failed_logins,
    )


def build_out(
    b: Build,
    a: App,
    version: str | None = None,
    checks: dict[str, int] | None = None,
    report: BuildReportOut | None = None,
) -> BuildOut:
    return BuildOut(
        id=b.id,
        appId=b.app_id,
        purpose=b.purpose,
        state=b.state,
        sourceDigest=b.source_digest,
        createdAt=b.created_at,
        startedAt=b.started_at,
        finishedAt=b.finished_at,
        seconds=b.seconds,
        logTail=b.log_tail,
        error=b.error,
        published=b.id == a.deploy_build_id,
        versionId=version,
        checks=TallyOut(**checks) if checks is not None else None,
        report=report,
    )


class PreviewOut(BaseModel):
    buildId: str | None = Field(description="the build the preview shows; null before the first")
    upToDate: bool = Field(description="the preview was built from the files as they are now")
    build: RestoreBuildOut | None = Field(
        default=None, description="the rebuild this answer made (POST only)"
    )


class RestoreBuildOut(BaseModel):
    id: str
    state: BuildState
    error: str | None
