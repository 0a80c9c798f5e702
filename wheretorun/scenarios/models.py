"""Scenario tables. A scenario is a name and tags; its content lives in immutable versions.

Every update writes a new `scenario_versions` row; old versions stay readable. `current_version`
is the optimistic-concurrency token: an update must name the version it edits (ETag / If-Match).
It is also the mapper's version counter, so every UPDATE or DELETE of a scenario row the ORM emits
says `WHERE id = :id AND current_version = :as_read`, and one that matches no row (another writer
got there first) raises `StaleDataError` instead of overwriting.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from wheretorun.db import Base, UTCDateTime

__all__ = ["ScenarioRecord", "ScenarioVersion"]


class ScenarioRecord(Base):
    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    current_version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())

    versions: Mapped[list[ScenarioVersion]] = relationship(
        back_populates="scenario", cascade="all, delete-orphan", order_by="ScenarioVersion.version"
    )

    # The service sets the next version itself (`version_id_generator: False`); the ORM adds the check.
    __mapper_args__ = {"version_id_col": current_version, "version_id_generator": False}


class ScenarioVersion(Base):
    __tablename__ = "scenario_versions"
    __table_args__ = (UniqueConstraint("scenario_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    body: Mapped[dict[str, Any]] = mapped_column(JSON)
    catalog_version_id: Mapped[int | None] = mapped_column(Integer)
    note: Mapped[str | None] = mapped_column(Text)

    scenario: Mapped[ScenarioRecord] = relationship(back_populates="versions")
