"""Price imports against the seeded catalog on SQLite and PostgreSQL: rejection of malformed files,
dry runs, effective-dated history, idempotency, scope, guards, faults and as-of reads.

Each test runs in a rolled-back transaction; an import runs in `session_factory.begin()` (a
savepoint here) like a request's transaction, so a failed import's rollback is real.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import (
    MALFORMED,
    TEST_ACTOR,
    edit_rows,
    fingerprint,
    later,
    litellm_text,
    scaled,
    shipped_text,
    to_csv,
)
from wheretorun.errors import MalformedFile
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.imports import HttpFetcher, ImportSpec, UrlPolicy, import_content, import_url
from wheretorun.pricing.models import (
    ApiPrice,
    CatalogVersion,
    CloudOffer,
    EnergyPrice,
    HardwarePrice,
    ImportRun,
)
from wheretorun.security import AuditEntry

NEBIUS_H100 = ("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "prices"


Fingerprint = dict[str, tuple[int, str]]


@pytest.fixture(scope="module")
def seeded_fingerprint(seeded_engine: Engine) -> Fingerprint:
    """The seeded catalog's fingerprint, taken once: every test rolls back, so it stays valid."""
    with Session(seeded_engine) as session:
        return fingerprint(session)


def run(
    session: Session, format: str, content: str | bytes, provider: str | None = None, **options: Any
) -> ImportRun:
    spec = ImportSpec(
        format,  # type: ignore[arg-type]
        provider,
        dry_run=options.pop("dry_run", False),
        force=options.pop("force", False),
    )
    data = content.encode() if isinstance(content, str) else content
    return import_content(session, spec, data, "test-file", TEST_ACTOR, lock_timeout_s=10, **options)


def current_offer(session: Session, provider: str, instance: str, region: str) -> CloudOffer | None:
    query = select(CloudOffer).where(
        CloudOffer.provider == provider,
        CloudOffer.instance_type == instance,
        CloudOffer.region == region,
        CloudOffer.effective_to.is_(None),
    )
    return session.scalars(query).first()


def count(session: Session, model: Any, *where: Any) -> int:
    return session.scalar(select(func.count()).select_from(model).where(*where)) or 0


# --- rejection -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("format", "provider", "content"), [case[1:4] for case in MALFORMED], ids=[case[0] for case in MALFORMED]
)
def test_a_malformed_file_changes_nothing(
    seeded_fingerprint: Fingerprint,
    session: Session,
    session_factory: sessionmaker[Session],
    format: str,
    provider: str | None,
    content: bytes,
) -> None:
    with pytest.raises(MalformedFile), session_factory.begin() as importing:
        run(importing, format, content, provider)
    assert fingerprint(session) == seeded_fingerprint  # row counts and checksums of every table


def test_a_file_with_a_price_too_large_for_the_column_is_rejected(session: Session) -> None:
    text = '{"m": {"mode": "chat", "input_cost_per_token": 1e-20, "output_cost_per_token": 1e-06}}'
    with pytest.raises(MalformedFile) as rejected:
        run(session, "litellm", text, dry_run=True)
    assert rejected.value.problems[0].column == "input_usd_per_million_tokens"
    assert "smallest amount" in rejected.value.problems[0].reason


# --- dry run, apply, history ---------------------------------------------------------------------


def test_a_dry_run_shows_the_diff_and_writes_nothing(session: Session) -> None:
    before = fingerprint(session)
    dry = run(
        session, "skypilot", edit_rows(shipped_text("nebius"), scaled("Price", "1.1")), "nebius", dry_run=True
    )
    assert (dry.status, dry.id, dry.catalog_version_id) == ("dry_run", None, None)
    assert (dry.diff["changed"], dry.diff["added"], dry.diff["removed"], dry.diff["unchanged"]) == (
        21,
        0,
        0,
        0,
    )
    assert dry.diff["examples"]["changed"][0]["prices"][0]["change_pct"] == 10.0
    assert fingerprint(session) == before


def test_applying_ends_old_rows_and_adds_new_ones_without_deleting(session: Session) -> None:
    def edit(row: dict[str, str]) -> dict[str, str] | None:
        if row["InstanceType"] == NEBIUS_H100[1]:
            row["Price"] = "20.00"  # was 23.60
        if row["InstanceType"] == "gpu-b200-sxm_8gpu-160vcpu-1792gb":
            return None  # removed
        return row

    text = edit_rows(shipped_text("nebius"), edit)
    text += "gpu-h100-sxm_8gpu-128vcpu-1600gb,H100,8,128,1600,22.00,us-central1,,\n"  # added
    old = current_offer(session, *NEBIUS_H100)
    assert old is not None
    assert old.on_demand_usd_per_hour == Decimal("23.6")
    rows_before = count(session, CloudOffer)

    applied = run(session, "skypilot", text, "nebius", force=True)  # force: B200 loses its only offer

    assert applied.status == "applied"
    assert (applied.diff["changed"], applied.diff["removed"], applied.diff["added"]) == (1, 1, 1)
    version = session.get(CatalogVersion, applied.catalog_version_id)
    assert version is not None
    assert version.kind == "import"
    session.refresh(old)
    assert old.effective_to == version.created_at  # ended, not changed or deleted
    assert old.on_demand_usd_per_hour == Decimal("23.6")
    new = current_offer(session, *NEBIUS_H100)
    assert new is not None
    assert new.id != old.id
    assert (new.on_demand_usd_per_hour, new.effective_from, new.catalog_version_id) == (
        Decimal("20"),
        version.created_at,
        version.id,
    )
    assert current_offer(session, "nebius", "gpu-b200-sxm_8gpu-160vcpu-1792gb", "us-central1") is None
    assert (
        count(session, CloudOffer) == rows_before + 2
    )  # history kept: one new version of a row, one new row
    assert (
        count(session, CloudOffer, CloudOffer.provider == "nebius", CloudOffer.effective_to.is_(None)) == 21
    )


def test_reading_as_of_a_moment_or_a_catalog_version_sees_the_prices_then(session: Session) -> None:
    first, second = later(60), later(120)
    v2 = run(
        session, "skypilot", edit_rows(shipped_text("nebius"), scaled("Price", "2")), "nebius", clock=first
    )
    v3 = run(
        session, "skypilot", edit_rows(shipped_text("nebius"), scaled("Price", "3")), "nebius", clock=second
    )

    def h100_price(point: repo.ReadPoint) -> Decimal | None:
        filters = repo.CloudOfferFilters(provider="nebius", region="eu-north1", as_of=point.as_of)
        page = repo.list_cloud_offers(session, filters, repo.PageRequest(limit=100))
        return next(o.on_demand_usd_per_hour for o in page.items if o.instance_type == NEBIUS_H100[1])

    seed = repo.read_point(session, catalog_version=1)
    between = repo.read_point(session, as_of=first() + dt.timedelta(minutes=30))
    assert h100_price(seed) == Decimal("23.6")
    assert h100_price(between) == Decimal("47.2")
    assert h100_price(repo.read_point(session)) == Decimal("70.8")
    assert between.catalog_version_id == v2.catalog_version_id  # ids have gaps on PostgreSQL: compare ids
    assert repo.catalog_version_at(session, second()).id == v3.catalog_version_id  # type: ignore[union-attr]
    assert repo.catalog_version_at(session, dt.datetime(2000, 1, 1, tzinfo=dt.UTC)) is None


def test_running_the_same_import_twice_is_idempotent(session: Session) -> None:
    text = edit_rows(shipped_text("nebius"), scaled("Price", "1.05"))
    first = run(session, "skypilot", text, "nebius")
    before = fingerprint(session)
    second = run(session, "skypilot", text, "nebius")
    assert first.status == "applied"
    assert (second.status, second.catalog_version_id) == ("unchanged", None)
    assert second.diff["unchanged"] == 21
    after = fingerprint(session)
    changed = {table for table in after if after[table] != before[table]}
    assert changed == {"import_runs", "audit_log"}  # only the record of the run


def test_reimporting_the_seed_files_changes_nothing(session: Session) -> None:
    versions = count(session, CatalogVersion)
    assert run(session, "skypilot", shipped_text("aws"), "aws").status == "unchanged"
    litellm = run(session, "litellm", litellm_text())
    assert litellm.status == "unchanged"
    assert litellm.diff["unchanged"] == count(session, ApiPrice, ApiPrice.effective_to.is_(None))
    assert count(session, CatalogVersion) == versions


def test_a_provider_file_only_removes_that_providers_offers(session: Session) -> None:
    others = count(session, CloudOffer, CloudOffer.provider != "nebius", CloudOffer.effective_to.is_(None))
    header = shipped_text("nebius").split("\n", 1)[0]
    one_row = header + "\n" + shipped_text("nebius").split("\n")[1] + "\n"
    applied = run(session, "skypilot", one_row, "nebius", force=True)
    assert (applied.diff["removed"], applied.diff["unchanged"]) == (20, 1)
    assert (
        count(session, CloudOffer, CloudOffer.provider != "nebius", CloudOffer.effective_to.is_(None))
        == others
    )


def test_a_missing_or_zero_price_is_stored_as_unknown_never_zero(session: Session) -> None:
    def edit(row: dict[str, str]) -> dict[str, str]:
        if row["InstanceType"] == NEBIUS_H100[1] and row["Region"] == "eu-north1":
            row["Price"] = ""
        if row["InstanceType"] == "gpu-h200-sxm_1gpu-16vcpu-200gb" and row["Region"] == "eu-west1":
            row["Price"] = "0"
        return row

    held = run(session, "skypilot", edit_rows(shipped_text("nebius"), edit), "nebius")
    assert held.status == "held"
    assert sorted(r["kind"] for r in held.hold_reasons) == ["zero_price", "zero_price"]
    forced = run(session, "skypilot", edit_rows(shipped_text("nebius"), edit), "nebius", force=True)
    assert forced.status == "applied"
    blank = current_offer(session, *NEBIUS_H100)
    zero = current_offer(session, "nebius", "gpu-h200-sxm_1gpu-16vcpu-200gb", "eu-west1")
    assert blank is not None
    assert blank.on_demand_usd_per_hour is None
    assert zero is not None
    assert zero.on_demand_usd_per_hour is None


# --- guards --------------------------------------------------------------------------------------


def test_a_price_collapse_is_held_for_review_until_forced(session: Session) -> None:
    before = fingerprint(session)
    text = edit_rows(
        shipped_text("nebius"), scaled("Price", "0.05", lambda row: row["AcceleratorName"] == "H200")
    )
    held = run(session, "skypilot", text, "nebius")
    assert (held.status, held.catalog_version_id) == ("held", None)
    assert held.id is not None
    assert {r["kind"] for r in held.hold_reasons} == {"price_drop"}
    assert len(held.hold_reasons) == 6  # six H200 offers
    after = fingerprint(session)
    assert {table for table in after if after[table] != before[table]} == {"import_runs", "audit_log"}
    forced = run(session, "skypilot", text, "nebius", force=True)
    assert (forced.status, forced.diff["changed"]) == ("applied", 6)
    assert forced.hold_reasons == held.hold_reasons


def test_removing_every_price_of_a_catalog_model_is_held(session: Session) -> None:
    import json

    table = json.loads(litellm_text())
    served = session.scalars(
        select(ApiPrice.model_id).where(
            ApiPrice.catalog_model_id == "llama-3.1-8b",
            ApiPrice.effective_to.is_(None),
            ApiPrice.suspect_reason.is_(None),
        )
    ).all()
    assert served
    for key in served:
        del table[key]
    held = run(session, "litellm", json.dumps(table))
    assert held.status == "held"
    assert {(r["kind"], r["item"]) for r in held.hold_reasons} >= {("unpriced", "model llama-3.1-8b")}


def test_an_accelerator_still_offered_elsewhere_is_not_unpriced(session: Session) -> None:
    # Nebius stops offering H100s; other clouds still do, so only the removal shows, no hold.
    text = edit_rows(shipped_text("nebius"), lambda row: None if row["AcceleratorName"] == "H100" else row)
    applied = run(session, "skypilot", text, "nebius")
    assert (applied.status, applied.diff["removed"], applied.hold_reasons) == ("applied", 2, [])


# --- canonical prices ------------------------------------------------------------------------------


def canonical_of_current(session: Session, **changes: str) -> str:
    rows = [
        {
            "kind": "hardware",
            "key": p.accelerator_id,
            "usd_per_unit": str(p.usd_per_unit),
            "source": p.source,
            "basis": p.basis,
            "accelerators_per_unit": str(p.accelerators_per_unit),
        }
        for p in session.scalars(select(HardwarePrice).where(HardwarePrice.effective_to.is_(None)))
    ] + [
        {"kind": "energy", "key": p.region, "usd_per_kwh": str(p.usd_per_kwh), "source": p.source}
        for p in session.scalars(select(EnergyPrice).where(EnergyPrice.effective_to.is_(None)))
    ]
    for row in rows:
        if row["key"] in changes:
            row["usd_per_unit" if row["kind"] == "hardware" else "usd_per_kwh"] = changes[row["key"]]
    return to_csv(
        ["kind", "key", "usd_per_unit", "usd_per_kwh", "source", "basis", "accelerators_per_unit"], rows
    )


def test_energy_prices_are_seeded_through_the_canonical_format(session: Session) -> None:
    ohio = session.scalars(select(EnergyPrice).where(EnergyPrice.region == "US/Ohio")).one()
    assert ohio.usd_per_kwh == Decimal("0.1102")  # EIA April 2025: 11.02 cents
    assert "EIA" in ohio.source
    assert count(session, EnergyPrice) == 10
    assert run(session, "canonical", canonical_of_current(session)).status == "unchanged"


def test_canonical_hardware_and_energy_prices_import(session: Session) -> None:
    old = session.scalars(
        select(HardwarePrice).where(
            HardwarePrice.accelerator_id == "h100-sxm", HardwarePrice.effective_to.is_(None)
        )
    ).one()
    text = canonical_of_current(session, **{"h100-sxm": "240000", "US/Ohio": "0.12"})
    applied = run(session, "canonical", text)
    assert applied.status == "applied"
    assert applied.diff["by_table"]["hardware_prices"]["changed"] == 1
    assert applied.diff["by_table"]["energy_prices"]["changed"] == 1
    prices = repo.current_hardware_prices(session, ["h100-sxm"])
    assert prices["h100-sxm"].usd_per_unit == Decimal("240000")
    assert repo.current_hardware_prices(session, ["h100-sxm"], old.effective_from)["h100-sxm"].id == old.id


def test_a_canonical_file_changes_only_the_prices_it_lists(session: Session) -> None:
    hardware = count(session, HardwarePrice, HardwarePrice.effective_to.is_(None))
    one_quote = "kind,key,usd_per_unit,usd_per_kwh,source\nhardware,H100-SXM,25000,,quote\n"
    applied = run(session, "canonical", one_quote)
    assert (applied.status, applied.hold_reasons) == ("applied", [])
    assert applied.diff["by_table"] == {
        "hardware_prices": {"added": 0, "removed": 0, "changed": 1, "unchanged": 0}
    }
    assert count(session, HardwarePrice, HardwarePrice.effective_to.is_(None)) == hardware
    assert count(session, EnergyPrice, EnergyPrice.effective_to.is_(None)) == 10
    assert run(session, "canonical", (EXAMPLES / "hardware_and_energy.csv").read_text()).status == "applied"
    assert (
        run(session, "canonical", (EXAMPLES / "hardware_and_energy.json").read_text()).status == "unchanged"
    )


def test_a_canonical_price_of_zero_is_held(session: Session) -> None:
    held = run(session, "canonical", canonical_of_current(session, **{"US/Ohio": "0"}))
    assert [(r["kind"], r["item"]) for r in held.hold_reasons] == [("zero_price", "US/Ohio")]


# --- faults ----------------------------------------------------------------------------------------


def test_a_crash_halfway_through_the_writes_leaves_the_catalog_as_it_was(
    session: Session, session_factory: sessionmaker[Session]
) -> None:
    before = fingerprint(session)
    written: list[int] = []

    def crash_at_half(done: int, total: int) -> None:
        written.append(done)
        if done >= total / 2:
            raise RuntimeError("power cut")

    text = edit_rows(shipped_text("aws"), scaled("Price", "1.01"))
    with pytest.raises(RuntimeError, match="power cut"), session_factory.begin() as importing:
        run(importing, "skypilot", text, "aws", on_progress=crash_at_half)
    assert written
    assert written[-1] < 2 * 843
    assert fingerprint(session) == before


# --- URL imports -------------------------------------------------------------------------------------


def test_an_unchanged_url_is_not_imported_again(session: Session) -> None:
    body = edit_rows(shipped_text("nebius"), scaled("Price", "1.2")).encode()
    requests: list[httpx.Request] = []

    def server(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.headers.get("if-none-match") == '"abc"':
            return httpx.Response(304)
        return httpx.Response(
            200, content=body, headers={"etag": '"abc"', "last-modified": "Mon, 30 Nov 2026"}
        )

    fetcher = HttpFetcher(
        UrlPolicy(("prices.example.com",), resolver=lambda host: ["93.184.216.34"]),
        transport=httpx.MockTransport(server),
    )
    url = "https://prices.example.com/nebius/vms.csv"
    spec = ImportSpec("skypilot", "nebius")
    first = import_url(session, spec, url, TEST_ACTOR, fetcher)
    second = import_url(session, spec, url, TEST_ACTOR, fetcher)
    assert (first.status, first.etag, first.last_modified, first.source_url) == (
        "applied",
        '"abc"',
        "Mon, 30 Nov 2026",
        url,
    )
    assert (second.status, second.catalog_version_id, second.diff["changed"]) == ("not_modified", None, 0)
    assert "if-none-match" not in requests[0].headers
    assert requests[1].headers["if-modified-since"] == "Mon, 30 Nov 2026"
    offer = current_offer(session, *NEBIUS_H100)
    assert offer is not None
    assert offer.source == url
    forced = import_url(session, ImportSpec("skypilot", "nebius", force=True), url, TEST_ACTOR, fetcher)
    assert forced.status == "unchanged"  # refetched in full, and nothing had changed
    actions = session.scalars(select(AuditEntry.action).order_by(AuditEntry.id.desc()).limit(3)).all()
    assert actions == ["import.unchanged", "import.not_modified", "import.applied"]
