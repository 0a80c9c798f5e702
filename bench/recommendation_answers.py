"""A recommendation answered as the API answers it (`recommend_for`, a session per request, the
answer written as the route writes it), for the benches that drive other checkouts as well as
this one (`instructions.py`, `answer_digest.py`): it uses only what every checkout since issue 14's
work began has, so the code on `PYTHONPATH` is what answers."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.services.recommendation_reads import RecommendationRead
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.recommendations import recommend_for


def answering(database: str, *, settle: bool = False) -> Callable[[RecommendationCreate], bytes]:
    """A function answering a request on the catalog at `database` with JSON bytes; its catalog
    snapshot is kept between calls (`settle`: frozen on the heap once built, as the API keeps it)."""
    sessions = make_session_factory(create_db_engine(database))
    snapshots = SnapshotCache(settle=settle)
    writer = TypeAdapter(RecommendationRead)

    def answer(body: RecommendationCreate) -> bytes:
        with sessions() as session:  # a session per request, as the API opens one
            return writer.dump_json(recommend_for(session, body, snapshots), by_alias=True)

    return answer
