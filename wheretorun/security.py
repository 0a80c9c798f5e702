"""API keys, scopes and the audit log, with their tables (`api_keys`, `audit_log`).

A key is a random token (`wtr_` + 43 URL-safe characters, 256 bits) shown once when it is
created; the database keeps only its SHA-256, so a leaked database does not leak keys, and a
presented token is looked up by its hash and compared in constant time. Keys are never deleted,
only revoked, so the audit log can always name them.

Scopes are ordered: `read` < `write` < `admin`. A key allows everything its scope and the scopes
below it allow: reads (when reads need a key at all), catalog writes (imports, overrides), and
reading the audit log.

Every write records an `AuditEntry`: who (the key, or the CLI user), when, the action, and what it
changed. Nothing here commits: the caller owns the transaction.
"""

from __future__ import annotations

import datetime as dt
import getpass
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from wheretorun.db import Base, UTCDateTime
from wheretorun.errors import Forbidden, InvalidInput, NotFound, Unauthorized
from wheretorun.scopes import Scope

__all__ = [
    "Actor",
    "ApiKey",
    "AuditEntry",
    "Scope",
    "authenticate",
    "cli_actor",
    "create_api_key",
    "hash_token",
    "key_id_for_token",
    "list_api_keys",
    "list_audit_entries",
    "record_audit",
    "require_scope",
    "revoke_api_key",
]

TOKEN_PREFIX = "wtr_"
_PREFIX_SHOWN = 12  # characters of the token kept to recognise a key in listings


class ApiKey(Base):
    """A key for the write API. Only the SHA-256 of the token is stored; the token is shown once."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    prefix: Mapped[str] = mapped_column(String(16))  # the token's first characters, to recognise it
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    scope: Mapped[str] = mapped_column(String(10))  # read | write | admin
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class AuditEntry(Base):
    """One write: who (key id, or the CLI user), when, what, and what changed."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)
    api_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id"), index=True)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(60))  # import.apply, override.create, key.revoke, ...
    target: Mapped[str] = mapped_column(String(200))  # import:12, override:3, key:5
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is acting: an API key, or a person at the command line."""

    label: str  # "key 3 (ci-importer)" or "cli:alice"
    key_id: int | None = None
    scope: Scope = Scope.ADMIN  # the CLI runs with the database's own rights


def cli_actor() -> Actor:
    return Actor(label=f"cli:{getpass.getuser()}")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_api_key(
    session: Session, name: str, scope: Scope, actor: Actor, now: dt.datetime
) -> tuple[ApiKey, str]:
    """A new key and its token. The token is not stored: show it to the user now or never."""
    if not name.strip():
        raise InvalidInput("name", "a key needs a name that says who or what uses it")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        name=name.strip(),
        prefix=token[:_PREFIX_SHOWN],
        token_sha256=hash_token(token),
        scope=scope.value,
        created_at=now,
    )
    session.add(key)
    session.flush()
    record_audit(session, actor, "key.create", f"key:{key.id}", {"name": key.name, "scope": key.scope}, now)
    return key, token


def authenticate(session: Session, token: str) -> Actor:
    """The actor a bearer token stands for; `Unauthorized` when it is unknown or revoked."""
    digest = hash_token(token)
    key = session.scalars(select(ApiKey).where(ApiKey.token_sha256 == digest)).first()
    # The lookup is by hash already; the comparison below keeps the check constant-time as well.
    if key is None or not hmac.compare_digest(key.token_sha256, digest):
        raise Unauthorized("the API key is not valid", token_given=True)
    if key.revoked_at is not None:
        raise Unauthorized("the API key has been revoked", token_given=True)
    return Actor(label=f"key {key.id} ({key.name})", key_id=key.id, scope=Scope(key.scope))


def key_id_for_token(session: Session, token: str) -> int | None:
    """The id of the live key a token stands for, or None (unknown or revoked); never raises."""
    return session.scalar(
        select(ApiKey.id).where(ApiKey.token_sha256 == hash_token(token), ApiKey.revoked_at.is_(None))
    )


def require_scope(actor: Actor, needed: Scope) -> None:
    if not actor.scope.allows(needed):
        raise Forbidden(
            f"this needs a key with scope {needed.value!r} or higher; the key has {actor.scope.value!r}"
        )


def revoke_api_key(session: Session, key_id: int, actor: Actor, now: dt.datetime) -> ApiKey:
    key = session.get(ApiKey, key_id)
    if key is None:
        raise NotFound("API key", key_id)
    if key.revoked_at is None:
        key.revoked_at = now
        record_audit(session, actor, "key.revoke", f"key:{key.id}", {"name": key.name}, now)
    return key


def list_api_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.id)))


def record_audit(
    session: Session, actor: Actor, action: str, target: str, detail: dict[str, Any], now: dt.datetime
) -> AuditEntry:
    entry = AuditEntry(
        at=now, api_key_id=actor.key_id, actor=actor.label, action=action, target=target, detail=detail
    )
    session.add(entry)
    return entry


def list_audit_entries(
    session: Session, limit: int, offset: int, action: str | None = None
) -> tuple[list[AuditEntry], int]:
    """Newest first, with the total count."""
    query = select(AuditEntry)
    if action:
        query = query.where(AuditEntry.action == action)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(AuditEntry.id.desc()).limit(limit).offset(offset))
    return list(rows), total
