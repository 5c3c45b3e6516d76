"""Settings: one object per process, read from `QUIRE_*` environment variables and `.env` where the
process starts and handed to what needs it (docs/architecture.md, "One bootstrap, nothing on import")."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

PLACEHOLDER_SECRET = "change-me-in-production"  # noqa: S105 - the value production refuses
# 32 random bytes as `secrets.token_urlsafe(32)` writes them; a hex key of 32 bytes is 64 characters.
MIN_SECRET_CHARS = 43
MAKE_SECRET = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"  # noqa: S105 - advice, not a secret
# A random key of 43 characters or more scores 200 bits or more on the estimate below; a few words
# padded to length score less, and a sequence repeated or counted out is refused on its own.
MIN_SECRET_BITS = 128
# 8 characters: a random hex key of 64 repeats some 8-character piece or counts out 8 in a row
# about once in a million keys, a word or pattern typed to fill the length nearly always does.
PATTERN_CHARS = 8
# The languages OCR reads by default: those the invoice reader's labels must know. The Makefile and the Dockerfile
# install the packs of every language the reader knows (`documents/ocr.installed` leaves out any a machine lacks).
# Polish and Portuguese joined the first six: read without them, a Polish scan loses its letters' marks ("Tłumaczeń"
# read as "Tlumaczen"); with them, on 77 real scans (bench/invoices.py: the blind corpus's 46 and 31 receipts), 2 more
# vendors and 2 more totals came out right, one date and one tax fewer, and one of two confidently wrong totals
# went; it cost 6% more time a page on invoices and 16-25% on short receipts (four runs), whose language the quick
# look cannot tell. The first six with all seven other languages installed (these two, Czech and the Nordic ones)
# cost a short receipt a third more time than the six alone (1.8 -> 2.5 s a page).
OCR_LANGUAGES = "eng+deu+fra+nld+spa+ita+pol+por"


def secret_bits(secret: str) -> float:
    """An estimate of a key's entropy from its own character frequencies (Shannon, times length)."""
    if not secret:
        return 0.0
    counts = Counter(secret)
    per_char = -sum(n / len(secret) * math.log2(n / len(secret)) for n in counts.values())
    return per_char * len(secret)


def _has_pattern(secret: str) -> bool:
    """A piece of PATTERN_CHARS characters that appears twice, or a run counting up or down."""
    pieces = [secret[i : i + PATTERN_CHARS] for i in range(len(secret) - PATTERN_CHARS + 1)]
    if len(set(pieces)) < len(pieces):
        return True
    steps = [ord(b) - ord(a) for a, b in itertools.pairwise(secret)]
    run = PATTERN_CHARS - 1
    return any(set(steps[i : i + run]) in ({1}, {-1}) for i in range(len(steps) - run + 1))


def weak_secret(secret: str) -> bool:
    """True for a key that is not random-looking material of at least 32 bytes."""
    return (
        secret == PLACEHOLDER_SECRET
        or len(secret) < MIN_SECRET_CHARS
        or secret_bits(secret) < MIN_SECRET_BITS
        or _has_pattern(secret)
    )


# The personal details redacted before a document goes to a third-party model.
RedactionKind = Literal["email", "phone", "iban", "card"]


class DeadlinePolicy(StrEnum):
    """`QUIRE_DEADLINE_POLICY`: what happens to a running attempt when its job's deadline passes."""

    # The client no longer wants the answer: stop the attempt and dead-letter the job.
    STOP = "stop"
    # The work is paid for and nearly done: let the attempt finish, but start no other.
    FINISH = "finish"


class Settings(BaseSettings):
    """Everything configurable about Quire. Defaults suit one developer machine."""

    model_config = SettingsConfigDict(env_prefix="QUIRE_", env_file=".env", extra="ignore")

    env: Literal["development", "production", "test"] = "development"
    secret_key: str = PLACEHOLDER_SECRET
    data_dir: Path = Path("./var")
    database_url: str | None = None
    redis_url: str | None = None
    model_provider: Literal["local", "openai", "fake"] = "local"

    # Worker execution control.
    lease_seconds: float = Field(default=30.0, gt=0)
    recovery_interval_seconds: float = Field(default=5.0, gt=0)
    # A queued job whose message has been missing from Redis this long is republished.
    republish_after_seconds: float = Field(default=2.0, ge=0)
    worker_threads: int = Field(default=4, ge=1, le=64)
    # Each worker process on one processor of its own (processors.py); unset: when they are at least as many.
    worker_pin_cpus: bool | None = None
    # How long an idle worker waits between polls of Redis (Dramatiq's worker_timeout), in ms.
    worker_idle_poll_ms: int = Field(default=25, ge=1, le=10_000)
    # Dramatiq's own redelivery of a dead worker's unacknowledged messages.
    broker_heartbeat_timeout_ms: int = Field(default=15_000, ge=1_000)
    broker_maintenance_chance: int = Field(default=10_000, ge=0, le=1_000_000)
    # On SIGTERM a worker lets running attempts finish this long, then releases them.
    shutdown_grace_s: float = Field(default=30.0, ge=0)
    # A worker process that has abandoned this many timed-out attempts restarts itself.
    max_abandoned_attempts: int = Field(default=8, ge=1)

    # Per-job limits: defaults, and the maxima a request is clamped to.
    default_timeout_s: float = Field(default=120.0, gt=0)
    default_max_attempts: int = Field(default=3, ge=1)
    default_deadline_s: float = Field(default=3600.0, gt=0)
    max_timeout_s: float = Field(default=900.0, gt=0)
    max_max_attempts: int = Field(default=10, ge=1)
    max_deadline_s: float = Field(default=7 * 86400.0, gt=0)
    # A running attempt at its job's deadline: stopped (the job ends deadline_exceeded) or let finish.
    deadline_policy: DeadlinePolicy = DeadlinePolicy.STOP
    retry_base_s: float = Field(default=2.0, ge=0)
    retry_max_s: float = Field(default=300.0, ge=0)

    # Where uploads and artifacts are kept: `file:///path` (default: `files` under the data dir) or
    # `s3://bucket/prefix`, an S3-compatible bucket (credentials and region from the AWS_* variables).
    storage_url: str | None = Field(default=None, pattern=r"^(file:///|s3://[^/]+)")
    # The S3 server when it is not AWS (MinIO, Ceph, Garage, ...).
    s3_endpoint_url: str | None = None
    # Downloads of artifacts answered with a redirect to a short-lived presigned URL (after the same
    # authorization check) instead of streamed through the web process.
    s3_presigned_downloads: bool = False
    s3_presigned_expiry_s: int = Field(default=60, ge=1, le=3600)

    max_upload_mb: float = Field(default=25.0, gt=0)
    # Per-person upload quotas: a burst of uploads or one person's files cannot fill the disk. The
    # per-minute defaults let one batch of the largest size below through (a month of invoices
    # dropped at once must not be cut at the 61st file); the stored-MB quota bounds the disk.
    uploads_per_minute: int = Field(default=1000, ge=1)
    upload_mb_per_minute: float = Field(default=500.0, gt=0)
    storage_quota_mb: float = Field(default=2048.0, gt=0)
    # An upload no job has used is deleted this long after it arrived (0 keeps it).
    upload_expiry_hours: float = Field(default=24.0, ge=0)
    # Batches (POST /batches): the most documents in one, the largest request and the most bytes
    # its ZIP archives may unpack to, and the highest compression ratio a ZIP entry may have.
    batch_max_files: int = Field(default=1000, ge=1)
    batch_max_mb: float = Field(default=500.0, gt=0)
    archive_max_ratio: float = Field(default=100.0, gt=1)

    # Accounts and abuse limits.
    signup_enabled: bool = True
    session_days: int = Field(default=14, ge=1)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    # Sign-in attempts for one account, from any address: guessing spread over many addresses.
    account_login_attempts_per_minute: int = Field(default=5, ge=1)
    submissions_per_minute: int = Field(default=120, ge=1)
    # Admission control: refuse new jobs (429) while the oldest queued job has waited this long.
    admission_max_queue_age_s: float = Field(default=900.0, gt=0)
    # Extraction limits: documents beyond them end in invalid_input with a clear message.
    max_pages: int = Field(default=500, ge=1)
    max_text_chars: int = Field(default=2_000_000, ge=1000)
    # OCR of scans and photos: the Tesseract languages tried (`+`-separated), and the time an
    # attempt gets for each page read by OCR on top of its timeout.
    ocr_languages: str = Field(default=OCR_LANGUAGES, pattern=r"^[a-z_]{3,16}(\+[a-z_]{3,16})*$")
    ocr_seconds_per_page: float = Field(default=10.0, ge=0)

    # The `openai` provider: any OpenAI-compatible chat completions endpoint.
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    openai_model: str = "gpt-4o-mini"
    # The most document text sent to the model in one request.
    openai_max_input_chars: int = Field(default=60_000, ge=1000)
    # What the `openai` provider replaces by placeholders before sending (comma-separated; empty: nothing).
    redact: Annotated[list[RedactionKind], NoDecode] = ["email", "phone", "iban", "card"]
    # Where phone numbers written without a country code are read as national numbers (ISO 3166 codes):
    # the countries of the languages the invoice reader knows, and the US.
    redact_phone_regions: Annotated[list[str], NoDecode] = ["US", "GB", "DE", "FR", "NL", "ES", "IT", "PL", "PT"]

    # Retention and alerting.
    retention_days: float = Field(default=30.0, ge=0)  # 0 keeps files forever
    alert_webhook_url: str | None = None
    alert_threshold: int = Field(default=10, ge=1)
    alert_window_s: float = Field(default=900.0, gt=0)

    # Signed webhooks (README, "Webhooks"): each attempt's time limit, the attempts a delivery
    # gets, its backoff, and the sending threads of each worker process (apart from the job threads).
    webhook_timeout_s: float = Field(default=10.0, gt=0, le=60)
    # The defaults spread 15 attempts over up to 17 hours (about half that on average, with the
    # jitter): Standard Webhooks recommends retrying for hours to days while a receiver is down.
    webhook_max_attempts: int = Field(default=15, ge=1, le=30)
    webhook_retry_base_s: float = Field(default=5.0, ge=0)
    webhook_retry_max_s: float = Field(default=21600.0, ge=0)
    webhook_threads: int = Field(default=2, ge=1, le=32)
    # Loopback, private, link-local and metadata addresses are refused as targets unless this is on.
    webhook_allow_private: bool = False
    log_json: bool | None = None  # default: JSON logs in production only
    # `debug` adds a line when each attempt starts and completes (off by default: it costs the hot path).
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # A line for each request from `quire web` (off: writing it cost about 7 % of a poll).
    access_log: bool = False
    metrics_dir: Path | None = None  # default: <data dir>/metrics
    # `GET /metrics` wants `Authorization: Bearer <this>` when set; in production it is off without it.
    metrics_token: SecretStr | None = None
    # The interactive API docs under /schema (the OpenAPI JSON is always served); default: off in production.
    api_docs: bool | None = None

    # `quire web`: proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (comma-separated
    # addresses or networks, or "*"); none by default, so the client address is the peer's.
    forwarded_allow_ips: str = ""
    # A client must finish sending its request headers within this long, and each part of a body
    # must arrive within this long of the previous one (slow clients cannot hold connections).
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=30.0, gt=0)
    # ... and a whole body must come at this rate at least (or within body_timeout_s, if longer).
    body_min_rate_kb_s: float = Field(default=50.0, gt=0)
    keep_alive_s: int = Field(default=5, ge=1)
    # `quire web` processes serving one port (uvicorn's own multi-process mode); unset: one per
    # CPU this process may run on, at most 8.
    web_workers: int | None = Field(default=None, ge=1, le=64)
    # Each web process on one processor of its own (processors.py); unset: when they are at least as many.
    web_pin_cpus: bool | None = None

    # Adaptive status polling in the browser (docs/api.md, "Pages"), decided by the server.
    poll_fast_s: float = Field(default=2.0, gt=0)
    poll_fast_for_s: float = Field(default=10.0, ge=0)
    poll_slow_s: float = Field(default=5.0, gt=0)
    poll_stop_after_s: float = Field(default=120.0, gt=0)
    # Live updates (README, "Live updates"): streams and `Prefer: wait` requests one web process
    # holds at once, the longest pause between two lines of a stream, and how long a stream lasts
    # before the server ends it (the page reconnects and gets a fresh snapshot).
    live_max_watchers: int = Field(default=2000, ge=1)
    stream_keepalive_s: float = Field(default=15.0, gt=0, le=15.0)
    stream_max_s: float = Field(default=3600.0, gt=0)

    @field_validator("log_level", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("redact", "redact_phone_regions", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("redact_phone_regions")
    @classmethod
    def _region_codes(cls, value: list[str]) -> list[str]:
        return [region.upper() for region in value]

    @model_validator(mode="after")
    def _refuse_weak_secret(self) -> Settings:
        if self.env != "production":
            return self
        if weak_secret(self.secret_key):
            raise ValueError(
                f"QUIRE_SECRET_KEY must be at least {MIN_SECRET_CHARS} characters of random material (32 random "
                f"bytes) when QUIRE_ENV=production; make one with: {MAKE_SECRET}"
            )
        return self

    @property
    def production(self) -> bool:
        return self.env == "production"

    @property
    def api_docs_enabled(self) -> bool:
        return self.api_docs if self.api_docs is not None else not self.production

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'quire.db').resolve()}"

    @property
    def resolved_storage_url(self) -> str:
        if self.storage_url:
            return self.storage_url
        return (self.data_dir / "files").resolve().as_uri()

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def batch_max_bytes(self) -> int:
        return int(self.batch_max_mb * 1024 * 1024)

    @property
    def upload_bytes_per_minute(self) -> int:
        return int(self.upload_mb_per_minute * 1024 * 1024)

    @property
    def storage_quota_bytes(self) -> int:
        return int(self.storage_quota_mb * 1024 * 1024)
