"""`wheretorun recommend FILE`: rank the ways to run a workload described in a YAML/JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from wheretorun.engine import InvalidSpec
from wheretorun.errors import WheretorunError
from wheretorun.services.recommendation_reads import RecommendationRead
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.settings import get_settings

console = Console()


def _read_body(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    loaded = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(loaded, dict):
        raise typer.BadParameter(f"{path} does not hold a mapping with `workload`")
    return loaded


def _money(value: Any) -> str:
    return "-" if value is None else f"${float(value):,.2f}"


def _milliseconds(value: Any) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _print(result: RecommendationRead) -> None:
    table = Table(title=f"{result.workload_kind} workload, catalog version {result.catalog_version}")
    for column in (
        "#",
        "option",
        "what",
        "total",
        "per month",
        "per 1M tokens",
        "capex",
        "TTFT ms",
        "TPOT ms",
    ):
        table.add_column(column, justify="right" if column not in ("option", "what") else "left")
    for option in result.options:
        table.add_row(
            str(option.rank),
            option.option,
            option.label,
            _money(option.total_usd),
            _money(option.usd_per_month),
            _money(option.usd_per_million_tokens or option.usd_per_run),
            _money(option.capex_usd),
            _milliseconds(option.ttft_ms),
            _milliseconds(option.tpot_ms),
        )
    console.print(table)
    if result.options:
        console.print(f"[bold]Why #1:[/bold] {result.options[0].rationale}")
    rejected = ", ".join(f"{group.reason} {group.count:,}" for group in result.rejected)
    console.print(f"[bold]Rejected:[/bold] {rejected or 'none'}")
    if result.break_even:
        console.print(f"[bold]Break-even:[/bold] {result.break_even.summary}")
    console.print(f"{result.candidates_evaluated:,} candidates evaluated")


def recommend(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Workload file (YAML or JSON).")],
    as_of: Annotated[
        str | None, typer.Option(help="Price with the catalog in force at this ISO date-time.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many options to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full answer as JSON.")] = False,
) -> None:
    """Rank hosted API, cloud, owned and local options for the workload in FILE."""
    from wheretorun.db import create_db_engine, make_session_factory
    from wheretorun.pricing.bootstrap import prepare_database
    from wheretorun.pricing.snapshot import SnapshotCache
    from wheretorun.services.recommendations import recommend_for

    body = _read_body(file)
    if as_of is not None:
        body["as_of"] = as_of
    body["limit"] = limit
    try:
        request = RecommendationCreate.model_validate(body)
    except ValidationError as error:
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"])
            console.print(f"[red]{field}[/red]: {problem['msg']}")
        raise typer.Exit(2) from None
    engine = create_db_engine(get_settings().resolved_database_url())
    prepare_database(engine)
    try:
        with make_session_factory(engine)() as session:
            result = recommend_for(session, request, SnapshotCache())
    except (WheretorunError, InvalidSpec) as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None
    finally:
        engine.dispose()
    if as_json:
        print(json.dumps(result.model_dump(), default=str, indent=2))  # noqa: T201 - the command's output
    else:
        _print(result)
