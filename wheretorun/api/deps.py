"""FastAPI dependencies: settings, and the one database session per request that owns its transaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from wheretorun.settings import Settings

__all__ = ["SessionDep", "SettingsDep", "get_session", "get_settings_dep"]


def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    """One session per request: commit when the handler succeeds, roll back when it raises.

    Services and repositories never commit; this is the only place that does.
    """
    session: Session = request.app.state.session_factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
