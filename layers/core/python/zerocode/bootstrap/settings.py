"""Settings from the environment (prefix ``ZEROCODE_``); one object wires every adapter."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from zerocode.apps.assets import AssetLimits
from zerocode.apps.guards import MAX_MESSAGE
from zerocode.apps.image_intake import ImageLimits
from zerocode.data.backend import DataLimits
from zerocode.engine.chat_images import ChatImageRules
from zerocode.engine.window_budget import check_window_budget
from zerocode.memory.window import DEFAULT_MAX_MESSAGES, WindowPolicy
from zerocode.publishing.pointers import SiteUrls, site_urls

API_GATEWAY_BODY = 10 * 1024 * 1024  # a REST API's request payload limit


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ZEROCODE_", extra="ignore")

    mode: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".zerocode")
    # Free space (MB) the data directory must keep: below it `zerocode serve` does not start
    # and /api/health says "degraded" (local mode; 0: no minimum; docs/operations.md,
    # "Storage health, and a data directory that cannot be written").
    min_free_mb: int = Field(64, ge=0)
    # /api/health's storage probe (a real write; locally also the free space) runs at most
    # once per this many seconds; between probes health repeats the last answer.
    health_probe_seconds: float = Field(5, ge=0)
    # Redis/Valkey for the window cache; rediss:// for ElastiCache TLS. None: in-process LRU.
    redis_url: str | None = None
    cache_ttl_seconds: int = Field(900, ge=1)
    cache_max_apps: int = Field(512, ge=1)
    # The in-process cache's memory bound (payload text, roughly): LRU apps go past it.
    cache_max_mb: int = Field(128, ge=1)

    aws_region: str = "us-east-1"
    transcript_table: str = "zerocode-transcript"
    display_table: str = "zerocode-display"
    apps_table: str = "zerocode-apps"
    users_table: str = "zerocode-users"
    builds_table: str = "zerocode-builds"
    # Leases (turn:{appId}) and, without Redis, rate-limit logs ({action}:{userId}) share it.
    leases_table: str = "zerocode-leases"
    # Turns' event logs where there is no cache (the cheap profile); with ZEROCODE_REDIS_URL
    # they live in Redis Streams instead.
    turn_events_table: str = "zerocode-turn-events"
    deletions_table: str = "zerocode-deletions"
    # Each app's acceptance checks, their runs (screenshots too) and deploy stamps (issue 25).
    checks_table: str = "zerocode-checks"
    # The apps' own data (issue 39): records, end users, sessions, build models.
    app_data_table: str = "zerocode-app-data"
    # The data function (AWS): the secret CloudFront sends it as an origin header, without
    # which it believes no viewer host or address (entrypoints/lambda_data_api.py).
    data_origin_secret_arn: str | None = None
    # CodeBuild project for Vue builds, and the bucket holding sources/ and builds/ (AWS).
    codebuild_project: str | None = None
    builds_bucket: str | None = None
    # The role whose credentials, scoped per build by a session policy, a Vue build uses to
    # read its own source and write its own output (AWS; docs/security.md).
    build_data_role_arn: str | None = None
    # The unique id (AROA…) of the CodeBuild project's role: a run's source goes under its
    # session's ``aws:userid``, ``{this}:AWSCodeBuild-{uuid}`` (AWS; docs/builds.md).
    build_role_id: str | None = None
    # DynamoDB table of the usage ledger: each model request and the days of each app and
    # account (AWS; accounts/usage.py). Unset: turns count their own tokens only.
    usage_table: str | None = None
    # DynamoDB table of the published sites' visits, per app and day (AWS; issue 44,
    # publishing/visits.py), written from CloudFront's logs. Unset: none are counted.
    visits_table: str | None = None
    # Token budgets (input and output) per account per UTC day and month (issue 43; unset:
    # no limit): a turn that would start over one is refused with 429 quota_exceeded, one
    # that crosses it mid-way ends after its current step, interrupted, saying why.
    tokens_per_day: int | None = Field(default=None, ge=1)
    tokens_per_month: int | None = Field(default=None, ge=1)
    # What each model costs, US dollars per million tokens, by model name, as JSON:
    # {"gpt-4o": {"input": 2.5, "output": 10, "cached": 1.25}} ("cached" optional: the
    # input rate). A model without a price gets no cost, never an invented one (issue 43).
    model_prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    # CloudFront KeyValueStore holding the site and preview pointers (AWS mode).
    sites_kvs_arn: str | None = None
    # DynamoDB table holding every site and preview pointer (AWS at scale: the truth, with
    # the KeyValueStore as its hot set; docs/operations.md, "Routing a million sites").
    pointers_table: str | None = None
    # S3 bucket for workspaces (workspaces/{appId}/...).
    workspace_bucket: str | None = None
    # Cognito user pool and its app client (USER_PASSWORD_AUTH, no secret).
    cognito_user_pool_id: str | None = None
    cognito_client_id: str | None = None
    # Believe API Gateway's authorizer claims in x-amzn-request-context. Set by the
    # infrastructure on the API function only, and heeded only under Lambda
    # (AWS_LAMBDA_FUNCTION_NAME set); elsewhere the header is ignored (gateway.py).
    trust_gateway_claims: bool = False
    # A preview pointer whose build is older than this many days is removed from the site
    # pointer store by the preview sweep (AWS: the KeyValueStore's 5 MB; docs/operations.md);
    # opening the app or its next turn puts it back.
    preview_idle_days: int = Field(30, ge=1)
    # AWS: a preview build's output expires this many days after it was written (the builds
    # bucket's lifecycle rule on its tag); opening the app then no longer puts back a
    # pointer to it. None: outputs never expire (locally).
    preview_output_days: int | None = Field(None, ge=1)
    # S3 bucket for transcript items too large for DynamoDB even compressed.
    payload_bucket: str | None = None
    # Days after an item is written until storage may expire it; 0 keeps forever.
    retention_days: int = Field(90, ge=0)

    # The local platform: API on one port, previews and sites on another (another origin).
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    sites_port: int = Field(8001, ge=1, le=65535)
    # `zerocode serve` logs a line per turn, not per request; on: a JSON line per request
    # too (method, path, status, duration). The Lambda API always logs them.
    access_log: bool = False
    # Public base URL of the sites server (covers; AWS without a custom domain: every app
    # under /sites/ and /preview/); default http://{host}:{sites_port}.
    sites_url: str | None = None
    # Each preview and site on its own origin, {label}.{sites_domain} (publish.py). Default:
    # localhost:{sites_port} locally; on AWS the custom domain when one is configured, else
    # unset (the shared-origin path scheme; docs/security.md).
    sites_domain: str | None = None
    # The console's static files, served at /console/ by `zerocode serve` (default: web/ of
    # this checkout). On AWS the console is in its own bucket behind CloudFront.
    console_dir: Path | None = None
    # Origins (comma-separated) of consoles served elsewhere that may call the API with
    # credentials (AWS: the console's CloudFront domain). Empty: same origin only.
    cors_origins: str = ""

    # Model endpoint; unset = the offline scripted model.
    model_base_url: str | None = None
    model_api_key: str | None = None
    # AWS: the key lives in Secrets Manager; read once per container (cold start), cached.
    model_api_key_secret_arn: str | None = None
    model_routing: str = "gpt-4o-mini"
    model_code: str = "gpt-4o"
    model_vue: str = "gpt-4o"
    model_timeout_seconds: float = Field(120, gt=0)
    model_max_retries: int = Field(2, ge=0, le=10)
    # Whether the endpoint's models see images (a message's attached images, issue 41).
    # Unset: the offline model does; a configured endpoint is sent none unless this says
    # so (a model without vision would fail the turn, or worse, ignore the picture).
    model_vision: bool | None = None
    # A message's images: how many, and how large each (decoded; four at the default, as
    # base64 with the text, stay under API Gateway's 10 MB request limit).
    chat_images_max: int = Field(4, ge=0, le=8)
    chat_image_max_bytes: int = Field(1_572_864, ge=16 * 1024, le=1_800_000)
    # Without an endpoint: the offline scripted model, or its flawed mode, where creations
    # make a seeded first-try mistake and repair it on feedback (for `zerocode eval`).
    offline_model: Literal["scripted", "flawed"] = "scripted"
    offline_model_seed: int = 7

    # Cover screenshots of published sites (needs Playwright's package and a Chromium).
    covers: bool = True
    chromium_path: str | None = None  # default: its headless shell, else chromium, on PATH
    # Load each successful preview build in headless Chromium after a turn, and show the
    # model what fails there (best effort: no Chromium, no check; off when covers are).
    runtime_check: bool = True
    # Render a deployed Vue site's routes to static HTML in the same browser before the
    # build is placed (publishing/prerender.py; best effort; off when covers are).
    prerender: bool = True
    # Apps with no deploy cover get a private one from their latest preview (owner and
    # admins only; publishing/preview_covers.py): locally a screenshot by the covers'
    # browser, at most one per app per preview_cover_seconds (off when covers are); on AWS
    # each preview build takes its own, and this setting is not read.
    preview_covers: bool = True
    preview_cover_seconds: float = Field(120, ge=0)
    # The publish report of each published deploy (issue 44, point 5): its files' checks,
    # and, where covers are on, the browser's look at its home page (console, links, axe).
    publish_report: bool = True

    # npm's download cache for installing the platform's toolchain (default
    # ~/.cache/zerocode/npm); builds themselves never install anything.
    npm_cache_dir: Path | None = None
    # Local Vue builds run in bubblewrap; without it they are refused. This development-only
    # override builds without the sandbox, as the platform's user (docs/security.md).
    dangerously_unsandboxed_builds: bool = False
    # Where the platform's toolchain is installed (default {data_dir}/toolchain); read-only
    # to builds, so several platforms on one machine may share it.
    toolchain_dir: Path | None = None
    # Limits of one sandboxed build.
    build_timeout_seconds: float = Field(180, gt=0, le=900)
    build_memory_mb: int = Field(2048, ge=256)
    build_max_processes: int = Field(256, ge=16)
    # What one build may write (its work directory is a tmpfs of this size when root;
    # adapters/local/build_quota.py), and the build slots shared per user (build_shares.py):
    # at most build_slots at once (0: sized from the machine), build_per_user of one user,
    # each build waiting build_queue_seconds at most for a slot, then failing saying why.
    build_disk_mb: int = Field(512, ge=16)
    build_slots: int = Field(0, ge=0, le=256)
    build_per_user: int = Field(2, ge=1, le=64)
    build_queue_seconds: float = Field(120, gt=0, le=900)
    # Vue build boxes prepared ahead (docs/builds.md, "Builds start warm"): at most this many
    # wait at a time (0: none; every build starts its own box), each unused one killed after
    # build_prepared_seconds.
    build_prepared_boxes: int = Field(2, ge=0, le=16)
    build_prepared_seconds: float = Field(120, gt=0, le=900)
    # The local build sweep (publishing/output_sweep.py): every build_sweep_seconds (and a
    # minute after start) the server removes preview outputs no preview shows and no
    # rollback can name; 0: never. Builds asked for less than build_sweep_keep_seconds ago
    # stay whatever they are (keep it longer than a turn: turn_timeout_seconds).
    build_sweep_seconds: float = Field(3600, ge=0)
    build_sweep_keep_seconds: float = Field(3600, ge=0)
    # On SIGINT/SIGTERM the running turns get this long to end by themselves, their checks
    # included (the previews and the checking browser stay up); then they are stopped.
    shutdown_seconds: float = Field(30, ge=0, le=600)

    # Per-user quotas: requests allowed in any window of rate_window_seconds.
    rate_chat: int = Field(5, ge=1)
    rate_create: int = Field(10, ge=1)
    rate_deploy: int = Field(10, ge=1)
    rate_window_seconds: float = Field(60, gt=0)
    # The front door (accounts/throttle.py): failed sign-ins per account, and sign-in and
    # registration attempts per client address, in any window of rate_login_window_seconds.
    rate_login: int = Field(5, ge=1)
    rate_login_address: int = Field(20, ge=1)
    rate_login_window_seconds: float = Field(15 * 60, gt=0)
    # The apps' own data (docs/data.md): records per collection and end users per app
    # space; requests of the data API per visitor address and per site in any window of
    # data_window_seconds (429 past them).
    data_max_records: int = Field(10_000, ge=1, le=1_000_000)
    data_max_users: int = Field(10_000, ge=1, le=1_000_000)
    data_rate_visitor: int = Field(300, ge=1)
    data_rate_site: int = Field(3000, ge=1)
    data_window_seconds: float = Field(60, gt=0)
    # A request body larger than this is refused with 413 before it is read (http/limits.py).
    max_body_bytes: int = Field(1 << 20, ge=16 * 1024)
    # The public featured-apps page is cached per process for this long.
    featured_cache_seconds: float = Field(120, ge=0)

    max_message_chars: int = Field(MAX_MESSAGE, ge=1)
    max_tool_calls: int = Field(20, ge=1, le=100)
    # Tool calls one model step may ask for; a step over it runs none. At most 64: a step
    # and its results are one transcript write, and DynamoDB's transaction holds 100 items.
    max_tool_calls_per_step: int = Field(32, ge=1, le=64)
    # The app's turn lease: renewed every third of this while the turn runs, so a server
    # that died mid-turn frees the app this long after its last renewal.
    turn_lease_seconds: float = Field(30, ge=3, le=300)
    # Tries a turn's model gets to fix a preview that fails to build or fails in the browser.
    repair_rounds: int = Field(2, ge=0, le=5)
    # A Vue turn's preview build starts as soon as a tool step changed files, beside the
    # model's next call (engine/build_ahead.py). None: on locally; off on AWS, where each
    # superseded build would be a CodeBuild run of its own (docs/engine.md).
    build_ahead: bool | None = None
    # AWS: a turn waiting for its CodeBuild run hears its end from build_events; should the
    # event be lost, it asks CodeBuild itself this often (publishing/build_signals.py).
    build_fallback_seconds: float = Field(30, ge=1, le=600)
    max_turns_per_app: int = Field(1000, ge=1)
    # Space (MB) kept back on the data directory's disk so a turn that meets a full disk
    # can still record its end; a turn starts only while it is in place with as much again
    # free (local mode; adapters/local/disk_reserve.py). 0: none.
    disk_reserve_mb: float = Field(8, ge=0)
    # A turn is cut off after this long (API Gateway streams end at 15 minutes).
    turn_timeout_seconds: float = Field(14 * 60, gt=0, le=15 * 60)
    max_file_bytes: int = Field(512 * 1024, ge=1024)
    max_files: int = Field(200, ge=1)
    # The builder's images (apps/assets.py): a file (uploaded and kept), a side in pixels,
    # an animation's frames, and every file of an app together.
    asset_max_bytes: int = Field(5 * 1024 * 1024, ge=16 * 1024, le=8 * 1024 * 1024)
    asset_max_side: int = Field(4096, ge=16, le=8192)
    asset_max_frames: int = Field(300, ge=1, le=2000)
    app_max_bytes: int = Field(50 * 1024 * 1024, ge=1024 * 1024)

    # The window's budget is tokens; its message bound is a safety bound that ordinary
    # sessions do not reach, and also the entries a window rebuild reads (docs/memory.md).
    window_max_messages: int = Field(DEFAULT_MAX_MESSAGES, ge=3)
    # At least the largest system prompt plus the longest request (checked below).
    window_max_tokens: int = 24_000
    window_elide_min_chars: int = Field(512, ge=64)
    window_full_turns: int = Field(1, ge=1)
    window_summary: bool = False
    # A stored running summary is cut to this many tokens.
    window_summary_max_tokens: int = Field(400, ge=16)

    @model_validator(mode="after")
    def _window_holds_what_it_pins(self) -> Settings:
        """Every window keeps the system prompt and the current request (and the summary's
        room, with it on): a budget below them is refused at start, saying the minimum."""
        check_window_budget(
            self.window_max_tokens,
            self.max_message_chars,
            self.window_summary_max_tokens if self.window_summary else None,
            images=self.chat_images_max,
        )
        return self

    @model_validator(mode="after")
    def _chat_fits_the_gateway(self) -> Settings:
        """On AWS a chat request passes API Gateway, which refuses bodies over 10 MB with an
        answer of its own: the platform's bound (images as base64, and the rest) is kept
        under it, so the platform's 413 names the limit."""
        most = self.max_body_bytes + self.chat_image_rules().body_bytes()
        if self.mode == "aws" and most > API_GATEWAY_BODY:
            raise ValueError(
                f"a chat request may be {most:,} bytes with these settings, over API "
                f"Gateway's {API_GATEWAY_BODY:,}: lower ZEROCODE_CHAT_IMAGES_MAX or "
                "ZEROCODE_CHAT_IMAGE_MAX_BYTES"
            )
        return self

    @property
    def npm_cache(self) -> Path:
        return self.npm_cache_dir or Path.home() / ".cache" / "zerocode" / "npm"

    @property
    def public_sites_url(self) -> str:
        return (self.sites_url or f"http://{self.host}:{self.sites_port}").rstrip("/")

    def chat_image_rules(self) -> ChatImageRules:
        """What a message's images may be (engine/chat_images.py)."""
        offline = self.model_base_url is None
        vision = self.model_vision if self.model_vision is not None else offline
        limits = ImageLimits(self.chat_image_max_bytes, self.asset_max_side, max_frames=1)
        model = "the offline scripted model" if offline else self.model_code
        return ChatImageRules(self.chat_images_max, limits, vision, model)

    def asset_limits(self) -> AssetLimits:
        """What the builder's uploads may be (apps/assets.py)."""
        image = ImageLimits(self.asset_max_bytes, self.asset_max_side, self.asset_max_frames)
        return AssetLimits(image=image, max_app_bytes=self.app_max_bytes)

    def data_limits(self) -> DataLimits:
        """The data API's rate limits, as the data API takes them (http/app_api.py)."""
        return DataLimits(
            rate_visitor=self.data_rate_visitor,
            rate_site=self.data_rate_site,
            window_seconds=self.data_window_seconds,
        )

    def site_urls(self) -> SiteUrls:
        """Where visitors find previews and sites (the domain defaults as ``sites_domain``
        says)."""
        local_port = self.sites_port if self.mode == "local" else None
        return site_urls(self.public_sites_url, self.sites_domain, local_port)

    @property
    def console_path(self) -> Path | None:
        found = self.console_dir or Path(__file__).resolve().parents[5] / "web"
        return found if (found / "index.html").is_file() else None

    @property
    def allowed_origins(self) -> list[str]:
        return [o.strip().rstrip("/") for o in self.cors_origins.split(",") if o.strip()]

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "zerocode.sqlite3"

    def window_policy(self) -> WindowPolicy:
        return WindowPolicy(
            max_messages=self.window_max_messages,
            max_tokens=self.window_max_tokens,
            elide_min_chars=self.window_elide_min_chars,
            full_turns=self.window_full_turns,
            summary=self.window_summary,
            summary_max_tokens=self.window_summary_max_tokens,
        )


def settings_errors(exc: ValidationError) -> list[str]:
    """One line per bad setting, naming its environment variable (for start-up errors)."""
    lines = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        names = [str(part) for part in error["loc"]]
        lines.append(f"ZEROCODE_{'_'.join(names).upper()}: {message}" if names else message)
    return lines
