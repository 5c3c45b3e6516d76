"""Settings: one object, read once from `QUIRE_*` environment variables and `.env`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRET = "change-me-in-production"  # noqa: S105 - the value production refuses


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
    retry_base_s: float = Field(default=2.0, ge=0)
    retry_max_s: float = Field(default=300.0, ge=0)

    max_upload_mb: float = Field(default=25.0, gt=0)

    # Accounts and abuse limits.
    signup_enabled: bool = True
    session_days: int = Field(default=14, ge=1)
    login_attempts_per_minute: int = Field(default=10, ge=1)
    submissions_per_minute: int = Field(default=120, ge=1)
    # Admission control: refuse new jobs (429) while the oldest queued job has waited this long.
    admission_max_queue_age_s: float = Field(default=900.0, gt=0)
    # Extraction limits: documents beyond them end in invalid_input with a clear message.
    max_pages: int = Field(default=500, ge=1)
    max_text_chars: int = Field(default=2_000_000, ge=1000)
    # OCR of scans and photos: the Tesseract languages tried (`+`-separated), and the time an
    # attempt gets for each page read by OCR on top of its timeout.
    ocr_languages: str = Field(default="eng+deu+fra+nld+spa+ita", pattern=r"^[a-z_]{3,16}(\+[a-z_]{3,16})*$")
    ocr_seconds_per_page: float = Field(default=10.0, ge=0)

    # The `openai` provider: any OpenAI-compatible chat completions endpoint.
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    openai_model: str = "gpt-4o-mini"
    # The most document text sent to the model in one request.
    openai_max_input_chars: int = Field(default=60_000, ge=1000)

    # Retention and alerting.
    retention_days: float = Field(default=30.0, ge=0)  # 0 keeps files forever
    alert_webhook_url: str | None = None
    alert_threshold: int = Field(default=10, ge=1)
    alert_window_s: float = Field(default=900.0, gt=0)
    log_json: bool | None = None  # default: JSON logs in production only
    metrics_dir: Path | None = None  # default: <data dir>/metrics

    # Adaptive status polling in the browser (DESIGN section 6), decided by the server.
    poll_fast_s: float = Field(default=2.0, gt=0)
    poll_fast_for_s: float = Field(default=10.0, ge=0)
    poll_slow_s: float = Field(default=5.0, gt=0)
    poll_stop_after_s: float = Field(default=120.0, gt=0)

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> Settings:
        if self.env == "production" and self.secret_key == PLACEHOLDER_SECRET:
            raise ValueError("QUIRE_SECRET_KEY must be set to a real secret when QUIRE_ENV=production")
        return self

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'quire.db').resolve()}"

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
