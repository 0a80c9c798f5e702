"""Service settings, read from the environment (prefix `WHERETORUN_`) and injected where needed."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

__all__ = ["Settings", "default_sqlite_path", "get_settings"]


def default_sqlite_path() -> Path:
    """Where the embedded database lives unless `DATABASE_URL` says otherwise.

    `$XDG_DATA_HOME/wheretorun/catalog.db`, or `~/.local/share/wheretorun/catalog.db`.
    """
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "wheretorun" / "catalog.db"


class Settings(BaseSettings):
    """Everything the service reads from its environment; validated at start-up."""

    model_config = SettingsConfigDict(env_prefix="WHERETORUN_", extra="ignore")

    database_url: str = Field(
        default="",
        validation_alias="DATABASE_URL",
        description="SQLAlchemy URL. Empty: the embedded SQLite file at `default_sqlite_path()`.",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    auto_seed: bool = Field(
        default=True, description="Migrate and seed an empty database on start (the embedded default)."
    )
    max_page_size: int = Field(default=500, ge=1, le=10_000)

    # Security and price imports (README: "Price imports, API keys, as-of").
    require_key_for_reads: bool = Field(
        default=False, description="Catalog reads need an API key too (any scope). Writes always do."
    )
    max_upload_bytes: int = Field(
        default=64 * 1024 * 1024, ge=1024, description="Largest import request body; above it, HTTP 413."
    )
    import_allowed_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=("raw.githubusercontent.com",),
        description="Hosts price files may come from, comma-separated; `.example.com` allows subdomains.",
    )
    import_allow_private_addresses: bool = Field(
        default=False,
        description="Allow URL imports from hosts that resolve to private or loopback addresses.",
    )
    import_fetch_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    import_fetch_retries: int = Field(default=3, ge=0, le=10, description="Retries after the first attempt.")
    import_fetch_backoff_seconds: float = Field(default=0.5, ge=0, le=60, description="First wait; doubles.")
    import_max_fetch_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    import_lock_timeout_seconds: float = Field(
        default=30.0, gt=0, le=600, description="How long an import waits for a running one before HTTP 409."
    )

    # Observability, limits and shared state (README: "Operating it: observability, limits, scale-out").
    log_format: Literal["json", "text"] = Field(
        default="json", description="Log lines as one JSON object each, or as plain text."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body (except price imports: `max_upload_bytes`); above it, HTTP 413.",
    )
    max_concurrent_requests: int = Field(
        default=2,
        ge=1,
        le=7,
        description=(
            "Handlers running at once per worker process; more wait in line, 503 after 30 s (health "
            "probes and price imports never wait). "
            "At most 7: a request may hold two database connections (its session and an API-key "
            "lookup), and the pool has 15."
        ),
    )
    max_requests_per_connection: int = Field(
        default=100,
        ge=0,
        description=(
            "Requests answered on one keep-alive connection before the answer says `Connection: "
            "close`, so that long-lived client connections spread over the worker processes; 0: "
            "never (neither by count nor by age)."
        ),
    )
    max_connection_seconds: float = Field(
        default=1.0,
        gt=0,
        le=3600,
        description=(
            "Age of a keep-alive connection after which the next answer says `Connection: close` "
            "(see `max_requests_per_connection`)."
        ),
    )
    rate_limit_per_minute: int = Field(
        default=0,
        ge=0,
        description="Requests per minute per API key (or per client IP without one); 0 switches it off.",
    )
    idempotency_ttl_seconds: int = Field(
        default=24 * 3600, ge=60, description="How long a stored Idempotency-Key response is replayed."
    )
    redis_url: str = Field(
        default="",
        description="Redis for rate-limit counters and idempotency records; empty: the database.",
    )
    redis_key_prefix: str = Field(default="wheretorun:", description="Prefix of every Redis key written.")

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, url: str) -> str:
        if url and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("WHERETORUN_REDIS_URL must be a redis://, rediss:// or unix:// URL")
        return url

    @field_validator("database_url")
    @classmethod
    def _known_driver(cls, url: str) -> str:
        if url and not url.startswith(("sqlite", "postgres")):
            raise ValueError("DATABASE_URL must be a sqlite:// or postgresql:// URL")
        return url

    @field_validator("import_allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(host.strip() for host in value.split(",") if host.strip())
        return value

    def resolved_database_url(self) -> str:
        """The URL to connect to, with the psycopg (v3) driver for PostgreSQL."""
        url = self.database_url or f"sqlite:///{default_sqlite_path()}"
        if url.startswith("postgres://"):
            url = "postgresql://" + url.removeprefix("postgres://")
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
        return url


@lru_cache
def get_settings() -> Settings:
    return Settings()
