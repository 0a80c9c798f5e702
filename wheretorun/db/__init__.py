"""The database kernel shared by every package: the declarative `Base` and its naming convention,
column types that behave alike on PostgreSQL and SQLite, engine and session factories, and running
the migrations. It knows no table of its own; each owner (`pricing`, `security`, `scenarios`,
`idempotency`, `ratelimit`) declares its tables on `Base`.
"""

from wheretorun.db.base import NAMING_CONVENTION, Base
from wheretorun.db.connect import SQLITE_BUSY_TIMEOUT_S, begin_write, create_db_engine, make_session_factory
from wheretorun.db.migrate import alembic_config, upgrade_to_head
from wheretorun.db.types import Money, UTCDateTime

__all__ = [
    "NAMING_CONVENTION",
    "SQLITE_BUSY_TIMEOUT_S",
    "Base",
    "Money",
    "UTCDateTime",
    "alembic_config",
    "begin_write",
    "create_db_engine",
    "make_session_factory",
    "upgrade_to_head",
]
