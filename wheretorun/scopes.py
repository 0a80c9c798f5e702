"""What an API key may do: read < write < admin (each allows what the ones before it allow).

Apart from `security.py` (which holds the keys themselves, ORM and all) so that the CLI can offer
the scopes as choices without importing SQLAlchemy on every command.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Scope"]


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return list(Scope).index(self)

    def allows(self, needed: Scope) -> bool:
        return self.rank >= needed.rank
