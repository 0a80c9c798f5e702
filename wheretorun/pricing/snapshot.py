"""Catalog rows turned into the engine's immutable values.

The engine never sees the database: the service layer looks rows up here and hands the engine
`ModelArchitecture` and `AcceleratorSpec` values. A row that lacks a fact the engine needs is an
`InvalidInput` naming the field, not a guess.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine, String, cast, func, select
from sqlalchemy.orm import Session

from wheretorun.engine import AcceleratorSpec, AttentionKind, InvalidSpec, MemoryKind, ModelArchitecture
from wheretorun.engine.catalog import AcceleratorEntry, ApiPriceOffer, CatalogSnapshot, ModelEntry
from wheretorun.engine.catalog import CloudOffer as EngineCloudOffer
from wheretorun.engine.catalog import CommitmentTerm as EngineCommitmentTerm
from wheretorun.engine.catalog import HardwarePrice as EngineHardwarePrice
from wheretorun.errors import InvalidInput, Unavailable, WheretorunError
from wheretorun.heap import settle_once
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.commit_counter import CommitCounter, commit_counter_for
from wheretorun.pricing.models import (
    Accelerator,
    ApiPrice,
    CatalogVersion,
    CloudOffer,
    CommitmentTerm,
    HardwarePrice,
    Model,
    PriceOverride,
)
from wheretorun.pricing.overrides import (
    OverrideIndex,
    adjusted_token_price,
    effective_on_demand_usd_per_hour,
    overrides_in_force,
)
from wheretorun.pricing.snapshot_files import SnapshotFiles
from wheretorun.pricing.sources.precisions import precision_support_table

__all__ = [
    "CatalogKey",
    "CatalogSpecs",
    "NotInMemory",
    "accelerator_spec",
    "SnapshotCache",
    "build_snapshot",
    "catalog_version_in_force",
    "load_accelerator_spec",
    "load_model_architecture",
    "model_architecture",
]


def model_architecture(model: Model, field: str = "model") -> ModelArchitecture:
    """The architecture of a catalog model; proprietary models have none."""
    required = {
        "total_params_b": model.total_params_b,
        "layers": model.layers,
        "hidden_size": model.hidden_size,
        "attention_heads": model.attention_heads,
        "kv_heads": model.kv_heads,
        "head_dim": model.head_dim,
        "vocab_size": model.vocab_size,
        "max_context": model.max_context,
    }
    missing = [name for name, value in required.items() if value is None]
    if missing:
        reason = "has no published architecture" if not model.open_weights else f"lacks {', '.join(missing)}"
        raise InvalidInput(field, f"catalog model {model.id!r} {reason}; pass an architecture object instead")
    mla = model.attention == "MLA"
    try:
        return ModelArchitecture(
            name=model.id,
            total_params_b=float(model.total_params_b or 0),
            active_params_b=model.active_params_b,
            layers=int(model.layers or 0),
            hidden_size=int(model.hidden_size or 0),
            intermediate_size=model.intermediate_size,
            attention_heads=int(model.attention_heads or 0),
            kv_heads=int(model.kv_heads or 0),
            head_dim=int(model.head_dim or 0),
            vocab_size=int(model.vocab_size or 0),
            max_context=int(model.max_context or 0),
            experts=model.experts or 1,
            experts_per_token=model.experts_per_token or 1,
            attention=AttentionKind.MLA if mla else AttentionKind.STANDARD,
            kv_elements_per_layer=_mla_elements_per_layer(model) if mla else None,
            sliding_window=model.sliding_window,
            sliding_window_layers=model.sliding_window_layers or 0,
        )
    except InvalidSpec as error:
        raise InvalidInput(f"{field}.{error.field}", f"catalog model {model.id!r}: {error.reason}") from error


def _mla_elements_per_layer(model: Model) -> int | None:
    """MLA caches one latent per layer: bytes per token at 16 bits / (2 bytes x layers)."""
    if model.kv_cache_bytes_per_token_16bit is None or not model.layers:
        return None
    return model.kv_cache_bytes_per_token_16bit // (2 * model.layers)


def accelerator_spec(accelerator: Accelerator, field: str = "accelerator") -> AcceleratorSpec:
    """The spec of a catalog accelerator; memory, bandwidth and memory technology are required.
    The precisions its chip family runs come from `precision_support.csv` (by `family`)."""
    required = {
        "memory_gb": accelerator.memory_gb,
        "memory_bandwidth_gb_s": accelerator.memory_bandwidth_gb_s,
        "memory_kind": accelerator.memory_kind,
    }
    missing = [name for name, value in required.items() if value is None]
    if missing:
        raise InvalidInput(
            field,
            f"catalog accelerator {accelerator.id!r} has no published {', '.join(missing)}; "
            "pass a spec object instead",
        )
    try:
        return AcceleratorSpec(
            name=accelerator.id,
            memory_gb=float(accelerator.memory_gb or 0),
            memory_bandwidth_gb_s=float(accelerator.memory_bandwidth_gb_s or 0),
            family=accelerator.family or "unknown",
            memory_kind=MemoryKind(accelerator.memory_kind or ""),
            bf16_tflops=accelerator.bf16_tflops,
            fp16_accumulate_tflops=accelerator.fp16_accumulate_tflops,
            fp8_tflops=accelerator.fp8_tflops,
            int8_tops=accelerator.int8_tops,
            fp32_tflops=accelerator.fp32_tflops,
            tdp_w=accelerator.tdp_w,
            interconnect_gb_s=accelerator.interconnect_gb_s,
            usable_memory_fraction=_usable_memory_fraction(accelerator),
            precision_support=precision_support_table().get(accelerator.family or ""),
        )
    except InvalidSpec as error:
        raise InvalidInput(
            f"{field}.{error.field}", f"catalog accelerator {accelerator.id!r}: {error.reason}"
        ) from error


def _usable_memory_fraction(accelerator: Accelerator) -> float:
    # Apple Silicon wires ~75% of unified memory to the GPU by default (calibration gpus.csv,
    # M2 Ultra row note, citing XiongjieDai/GPU-Benchmarks-on-LLM-Inference).
    return 0.75 if accelerator.vendor == "Apple" else 1.0


def load_model_architecture(session: Session, model_id: str, field: str = "model") -> ModelArchitecture:
    return model_architecture(repo.get_model(session, model_id), field)


def load_accelerator_spec(session: Session, name_or_id: str, field: str = "accelerator") -> AcceleratorSpec:
    return accelerator_spec(repo.get_accelerator(session, name_or_id), field)


# --- the whole catalog at one moment ---------------------------------------------------------


def catalog_version_in_force(session: Session, as_of: dt.datetime | None) -> int:
    """The newest catalog version at `as_of` (now when None); before the first load, the first."""
    return _or_first_version(session, repo.catalog_version_id_at(session, as_of or dt.datetime.now(dt.UTC)))


def _or_first_version(session: Session, version_id: int | None) -> int:
    if version_id is None:
        # a moment before the first load: the seed's prices start at their sources' dates
        version_id = session.scalar(select(CatalogVersion.id).order_by(CatalogVersion.id).limit(1))
    if version_id is None:
        raise Unavailable("the catalog is empty: run `wheretorun db seed`")
    return version_id


def build_snapshot(session: Session, as_of: dt.datetime | None = None) -> CatalogSnapshot:
    """Every accelerator, model and price in force at `as_of`, as immutable engine values.

    Suspect prices (a `suspect_reason`, or a hosted model past its deprecation date at `as_of`)
    are kept apart in `suspect_cloud_offers` / `suspect_api_prices`; cloud offers whose
    accelerator is unknown to the catalog are left out. Each offer carries the commitment terms
    that apply to it. Negotiated price overrides in force are applied.
    """
    moment = as_of or dt.datetime.now(dt.UTC)
    accelerators = {a.id: _accelerator_entry(a) for a in session.scalars(select(Accelerator))}
    models = {m.id: _model_entry(m) for m in session.scalars(select(Model))}
    overrides = overrides_in_force(session, moment)
    terms = _commitment_terms(session, moment)
    offers = _cloud_offers(session, moment, overrides, terms)
    prices = _api_prices(session, moment, overrides)
    return CatalogSnapshot(
        version=catalog_version_in_force(session, as_of),
        as_of=moment,
        accelerators=accelerators,
        models=models,
        cloud_offers=tuple(o for o in offers if o.suspect_reason is None),
        api_prices=tuple(p for p in prices if p.suspect_reason is None),
        hardware_prices=_hardware_prices(session, moment),
        commitment_terms=terms,
        suspect_cloud_offers=tuple(o for o in offers if o.suspect_reason is not None),
        suspect_api_prices=tuple(p for p in prices if p.suspect_reason is not None),
    )


def _commitment_terms(session: Session, moment: dt.datetime) -> tuple[EngineCommitmentTerm, ...]:
    query = select(CommitmentTerm).where(repo.in_force(CommitmentTerm, moment)).order_by(CommitmentTerm.id)
    return tuple(
        EngineCommitmentTerm(
            provider=t.provider,
            accelerator_id=t.accelerator_id,
            instance_family=t.instance_family,
            term_months=t.term_months,
            discount_fraction=t.discount_fraction,
            usd_per_accelerator_hour=t.usd_per_accelerator_hour,
            source=t.source,
        )
        for t in session.scalars(query)
    )


def _applicable_terms(
    offer: CloudOffer, terms_by_provider: dict[str, list[EngineCommitmentTerm]]
) -> tuple[EngineCommitmentTerm, ...]:
    """The most specific term of each length that applies to `offer`."""
    best: dict[int, EngineCommitmentTerm] = {}
    for term in terms_by_provider.get(offer.provider, ()):
        if not term.applies_to(offer.provider, offer.accelerator_id or "", offer.instance_type):
            continue
        current = best.get(term.term_months)
        if current is None or term.specificity > current.specificity:
            best[term.term_months] = term
    return tuple(best[months] for months in sorted(best))


def _accelerator_entry(row: Accelerator) -> AcceleratorEntry:
    try:
        spec: AcceleratorSpec | None = accelerator_spec(row)
    except InvalidInput:
        spec = None
    return AcceleratorEntry(
        id=row.id, name=row.name, vendor=row.vendor, kind=row.kind, spec=spec, form_factor=row.form_factor
    )


def _model_entry(row: Model) -> ModelEntry:
    try:
        architecture: ModelArchitecture | None = model_architecture(row)
    except InvalidInput:
        architecture = None
    return ModelEntry(
        id=row.id, name=row.name, family=row.family, open_weights=row.open_weights, architecture=architecture
    )


def _cloud_offers(
    session: Session, moment: dt.datetime, overrides: OverrideIndex, terms: tuple[EngineCommitmentTerm, ...]
) -> tuple[EngineCloudOffer, ...]:
    query = (
        select(CloudOffer)
        .where(repo.in_force(CloudOffer, moment), CloudOffer.accelerator_id.is_not(None))
        .order_by(CloudOffer.id)
    )
    terms_by_provider: dict[str, list[EngineCommitmentTerm]] = {}
    for term in terms:
        terms_by_provider.setdefault(term.provider, []).append(term)
    return tuple(
        EngineCloudOffer(
            id=o.id,
            provider=o.provider,
            region=o.region,
            instance_type=o.instance_type,
            accelerator_id=o.accelerator_id or "",
            accelerator_count=o.accelerator_count,
            on_demand_usd_per_hour=effective_on_demand_usd_per_hour(o, overrides.for_cloud_offer(o)),
            spot_usd_per_hour=o.spot_usd_per_hour,
            accelerator_only=o.accelerator_only,
            source=o.source,
            commitments=_applicable_terms(o, terms_by_provider),
            suspect_reason=o.suspect_reason,
        )
        for o in session.scalars(query.execution_options(yield_per=1000))
    )


def _api_prices(session: Session, moment: dt.datetime, overrides: OverrideIndex) -> tuple[ApiPriceOffer, ...]:
    query = select(ApiPrice).where(repo.in_force(ApiPrice, moment)).order_by(ApiPrice.id)
    return tuple(
        _api_price(p, overrides.for_api_price(p), moment.date())
        for p in session.scalars(query.execution_options(yield_per=1000))
    )


def _suspect_reason(p: ApiPrice, day: dt.date) -> str | None:
    """The stored reason, plus a deprecation date on or before `day` (pricing/plausibility.py)."""
    reasons = [p.suspect_reason] if p.suspect_reason else []
    if p.deprecation_date is not None and p.deprecation_date <= day:
        reasons.append(f"the provider deprecated {p.model_id} on {p.deprecation_date.isoformat()}")
    return "; ".join(reasons) or None


def _api_price(p: ApiPrice, override: PriceOverride | None, day: dt.date) -> ApiPriceOffer:
    return ApiPriceOffer(
        id=p.id,
        provider=p.provider,
        model_id=p.model_id,
        catalog_model_id=p.catalog_model_id,
        input_usd_per_million_tokens=adjusted_token_price(p.input_usd_per_million_tokens, override),
        cached_input_usd_per_million_tokens=adjusted_token_price(
            p.cached_input_usd_per_million_tokens, override
        ),
        output_usd_per_million_tokens=adjusted_token_price(p.output_usd_per_million_tokens, override),
        batch_input_usd_per_million_tokens=adjusted_token_price(
            p.batch_input_usd_per_million_tokens, override
        ),
        batch_output_usd_per_million_tokens=adjusted_token_price(
            p.batch_output_usd_per_million_tokens, override
        ),
        context_window_tokens=p.context_window_tokens,
        source=p.source,
        suspect_reason=_suspect_reason(p, day),
    )


def _hardware_prices(session: Session, moment: dt.datetime) -> dict[str, EngineHardwarePrice]:
    query = select(HardwarePrice).where(repo.in_force(HardwarePrice, moment))
    return {
        p.accelerator_id: EngineHardwarePrice(
            accelerator_id=p.accelerator_id,
            usd_per_unit=p.usd_per_unit,
            source=p.source,
            basis=p.basis,
            accelerators_per_unit=p.accelerators_per_unit,
        )
        for p in session.scalars(query)
    }


CatalogKey = tuple[int, str, str]  # (catalog version, moment or day, price overrides' fingerprint)
_Spec = TypeVar("_Spec", ModelArchitecture, AcceleratorSpec)
_MAX_REMEMBERED_SPECS = 1024  # spellings of catalog names a client sends; the memo restarts past it


class SnapshotCache:
    """Snapshots by (catalog version, as_of), so repeated recommendations skip the ~0.2 s load.

    A snapshot "as of now" is keyed by the newest catalog version and the day: an import makes a
    new version (a new key), and prices that start or end during the day are seen the next day at
    the latest. An explicit `as_of` is its own key. A new or ended price override changes the key
    too.
    """

    def __init__(self, size: int = 8, files: SnapshotFiles | None = None, *, settle: bool = False) -> None:
        """`files`: also keep snapshots on disk for the next process (the CLI uses it). `settle`:
        once the process has its first snapshot, collect garbage and freeze what is left
        (`gc.freeze`) so the cyclic collector no longer rescans the snapshot's ~200,000 objects
        at every full collection, which otherwise adds ~100 ms of CPU to the request it lands
        in (measured on the batch example: one request of 137 ms among requests of 21-31 ms).
        For a long-running server (the API uses it), not for a one-shot CLI."""
        self._size = size
        self._files = files
        self._settle = settle
        self._entries: OrderedDict[CatalogKey, CatalogSnapshot] = OrderedDict()
        self._lock = threading.Lock()
        self._builds: dict[CatalogKey, _Build] = {}  # the builds under way, by key
        self._checked_now: tuple[tuple[int, int], str, CatalogKey] | None = None  # (commits, day, key)
        self._specs: CatalogSpecs | None = None

    def get(self, session: Session, as_of: dt.datetime | None = None) -> CatalogSnapshot:
        """The snapshot for the catalog's state at `as_of` (now by default). Requests that arrive
        together on a cold cache wait for one build instead of each building its own: a new
        server worker under 32 connections otherwise built 16 snapshots at once (~0.7 s of CPU
        each) and answered nothing for over 10 s (bench/load_test.py, 2026-12-03)."""
        key = self.catalog_key(session, as_of)
        snapshot = self._cached(key) or self._shared_build(session, as_of, key)
        if self._settle:
            settle_once("first catalog snapshot")
        return snapshot

    def catalog_key(self, session: Session, as_of: dt.datetime | None = None) -> CatalogKey:
        """(catalog version in force, moment, price overrides' fingerprint) at `as_of`.

        "Now" is asked of the database once, then again only after something was committed to
        it (`CommitCounter`, SQLite) or the day changed. That holds for a session that has not
        begun its transaction and owns its connection (bound to the engine): it sees exactly what
        is committed. A session already in a transaction may hold writes of its own that no
        other connection sees, and one bound to a caller's connection (the tests' rolled-back
        transaction) too; those, explicit `as_of` moments and PostgreSQL ask every time."""
        if as_of is not None:
            version, overrides = _catalog_state(session, as_of)
            return (version, as_of.isoformat(), overrides)
        moment = _today()
        counter = _commit_counter(session)
        commits = counter.value() if counter is not None else None
        known = self._known_now(commits, moment)
        if known is not None:
            return known
        version, overrides = _catalog_state(session, None)
        key = (version, moment, overrides)
        if commits is not None:
            self._checked_now = (commits, moment, key)
        return key

    def _known_now(self, commits: tuple[int, int] | None, moment: str) -> CatalogKey | None:
        """The key checked last, if nothing was committed since and the day is the same."""
        checked = self._checked_now
        if commits is not None and checked is not None and checked[:2] == (commits, moment):
            return checked[2]
        return None

    def specs_in_memory(self, session: Session) -> CatalogSpecs | None:
        """`specs(session)` when the catalog's current state is known without asking the database
        (see `catalog_key`), else None."""
        counter = _commit_counter(session, create=False)
        if counter is None:
            return None
        known = self._known_now(counter.value(), _today())
        specs = self._specs
        return specs if known is not None and specs is not None and specs.key == known else None

    def specs(self, session: Session) -> CatalogSpecs:
        """The catalog's engine specs by name, remembered for its current state (a new catalog
        version or override starts afresh): what estimates look up."""
        key = self.catalog_key(session)
        with self._lock:
            if self._specs is None or self._specs.key != key:
                self._specs = CatalogSpecs(key)
            return self._specs

    def _shared_build(self, session: Session, as_of: dt.datetime | None, key: CatalogKey) -> CatalogSnapshot:
        """Build the snapshot for `key`, or wait for the build under way and share its outcome
        (its snapshot, or its error: a failing database is not asked again by each waiter)."""
        with self._lock:
            build = self._builds.get(key)
            building = build is None
            if build is None:
                build = self._builds[key] = _Build()
        if not building:
            build.done.wait()
            return build.outcome()
        try:
            build.snapshot = self._cached(key) or self._built(session, as_of, key)
            self._store(key, build.snapshot)
        except BaseException as error:
            build.error = error
            raise
        finally:
            with self._lock:
                del self._builds[key]
            build.done.set()
        return build.snapshot

    def _cached(self, key: CatalogKey) -> CatalogSnapshot | None:
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def _store(self, key: CatalogKey, snapshot: CatalogSnapshot) -> None:
        with self._lock:
            self._entries[key] = snapshot
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def _built(self, session: Session, as_of: dt.datetime | None, key: CatalogKey) -> CatalogSnapshot:
        """From the disk cache when it has the snapshot, else built (and saved there)."""
        if self._files is None:
            return build_snapshot(session, as_of)
        file_key = (*key, *_database_identity(session, key[0]))
        snapshot = self._files.load(file_key)
        if snapshot is None:
            snapshot = build_snapshot(session, as_of)
            self._files.save(file_key, snapshot)
        return snapshot


class NotInMemory(Exception):
    """A catalog spec that `CatalogSpecs.in_memory_only()` was asked for and does not hold."""


class CatalogSpecs:
    """Engine specs of catalog models and accelerators looked up by name in one catalog state
    (`key`), each looked up once. A lookup that fails (an unknown name, a row the engine cannot
    use) is not remembered: it raises each time."""

    def __init__(self, key: CatalogKey, *, loads: bool = True) -> None:
        self.key = key
        self.loads = loads
        self._values: dict[tuple[str, str], Any] = {}  # a ModelArchitecture or AcceleratorSpec
        self._lock = threading.Lock()

    def in_memory_only(self) -> CatalogSpecs:
        """These specs, read without ever asking the database: a name not in memory raises
        `NotInMemory` instead (for answers computed on the event loop)."""
        view = CatalogSpecs(self.key, loads=False)
        view._values, view._lock = self._values, self._lock
        return view

    def model_architecture(self, session: Session, model_id: str, field: str) -> ModelArchitecture:
        """`load_model_architecture`, remembered."""
        return self._remembered(
            ("model", model_id), lambda: load_model_architecture(session, model_id, field)
        )

    def accelerator_spec(self, session: Session, name_or_id: str, field: str) -> AcceleratorSpec:
        """`load_accelerator_spec` (an id or any alias), remembered."""
        return self._remembered(
            ("accelerator", name_or_id), lambda: load_accelerator_spec(session, name_or_id, field)
        )

    def _remembered(self, ref: tuple[str, str], load: Callable[[], _Spec]) -> _Spec:
        with self._lock:
            value = self._values.get(ref)
        if value is None:
            if not self.loads:
                raise NotInMemory(ref)
            value = load()
            with self._lock:
                if len(self._values) >= _MAX_REMEMBERED_SPECS:
                    self._values.clear()
                self._values[ref] = value
        return value


class _Build:
    """A snapshot build under way: the threads that need the same key wait for its outcome."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.snapshot: CatalogSnapshot | None = None
        self.error: BaseException | None = None

    def outcome(self) -> CatalogSnapshot:
        if isinstance(self.error, WheretorunError):
            raise self.error  # a domain error (an empty catalog) means the same to every waiter
        if self.error is not None:
            raise Unavailable(f"the catalog snapshot could not be built: {self.error}") from self.error
        assert self.snapshot is not None
        return self.snapshot


def _today() -> str:
    """The moment of a snapshot "as of now": the day (prices that start or end during it are seen
    the next day at the latest)."""
    return f"day:{dt.datetime.now(dt.UTC).date()}"


def _commit_counter(session: Session, *, create: bool = True) -> CommitCounter | None:
    """The commit counter of the session's database, when what the session reads is exactly what
    is committed: it owns its connection (bound to the engine) and has not begun a transaction."""
    bind = session.get_bind()
    if not isinstance(bind, Engine) or session.in_transaction():
        return None
    return commit_counter_for(bind, create=create)


def _database_identity(session: Session, version: int) -> tuple[str, str]:
    """The database (URL without password) and when `version` was created in it."""
    url = session.get_bind().engine.url.render_as_string(hide_password=True)
    created_at = session.scalar(select(CatalogVersion.created_at).where(CatalogVersion.id == version))
    return url, str(created_at)


def _catalog_state(session: Session, as_of: dt.datetime | None) -> tuple[int, str]:
    """`catalog_version_in_force` and a fingerprint of the price overrides, in one round trip:
    every request asks. The fingerprint covers each override's id and end, so a new override and
    any override ended (whatever the others' ends) change it; the rows are few."""
    version = repo.catalog_version_id_query(as_of or dt.datetime.now(dt.UTC)).scalar_subquery()
    ends = func.coalesce(cast(PriceOverride.effective_to, String), "-")
    state = select(
        version, func.count(), func.aggregate_strings(cast(PriceOverride.id, String) + ":" + ends, ",")
    ).select_from(PriceOverride)
    # through the session, so changes it has not flushed yet (an override just ended) count
    version_id, count, overrides = session.execute(state).one()
    digest = hashlib.blake2b(str(overrides).encode(), digest_size=8).hexdigest()
    return _or_first_version(session, version_id), f"{count}:{digest}"
