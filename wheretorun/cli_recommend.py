"""`wheretorun recommend FILE`: rank the ways to run a workload described in a YAML/JSON file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from wheretorun.engine import InvalidSpec
from wheretorun.engine.money import small_unit_usd
from wheretorun.errors import WheretorunError
from wheretorun.pricing.snapshot_files import SnapshotFiles, sqlite_catalog_stamp
from wheretorun.services.recommendation_reads import OptionRead, RecommendationRead
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.snapshot_recommendations import reads_now, recommend_on_cached_snapshot
from wheretorun.settings import get_settings

console = Console()


class _WorkloadLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types here
    """YAML with YAML 1.2's floats: PyYAML follows YAML 1.1, which reads `1e9` (no dot) as a
    string; the API takes numbers only, so `tokens: 1e9` must load as the number it reads as."""


_WorkloadLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.VERBOSE,
    ),
    list("-+0123456789."),
)


def _read_body(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    loaded = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_WorkloadLoader)  # noqa: S506
    if not isinstance(loaded, dict):
        raise typer.BadParameter(f"{path} does not hold a mapping with `workload`")
    return loaded


def _money(value: Any) -> str:
    return "-" if value is None else f"${float(value):,.2f}"


def _unit_money(value: Any) -> str:
    """A cost per unit (per million tokens, per run, per accelerator-hour)."""
    return (None if value is None else small_unit_usd(float(value))) or _money(value)


def _milliseconds(value: Any) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _hours(value: Any) -> str:
    return "-" if value is None else f"{value:,.1f}"


_KIND_NAMES = {"hosted_api": "api", "cloud": "cloud", "owned": "owned", "local": "local", "hybrid": "hybrid"}


@dataclass(frozen=True)
class _Column:
    title: str
    cell: Callable[[OptionRead], str]
    money: bool = False


def _columns(workload_kind: str) -> list[_Column]:
    """The figures that decide each workload kind: per run, accelerator-hours and wall-clock for
    training; per million tokens (all-in and marginal) and TTFT/TPOT for serving; per million
    tokens for a batch job."""
    head = [
        _Column("#", lambda o: str(o.rank)),
        _Column("what", _what),
        _Column("total", lambda o: _money(o.total_usd), money=True),
    ]
    if workload_kind == "training":
        return head + [
            _Column("per run", lambda o: _unit_money(o.usd_per_run), money=True),
            _Column("marginal", lambda o: _unit_money(o.marginal_usd_per_run), money=True),
            _Column("acc-h", lambda o: _hours(o.accelerator_hours_per_run)),
            _Column("wall h", lambda o: _hours(o.wall_clock_hours_per_run)),
        ]
    tail = [
        _Column("per 1M tok", lambda o: _unit_money(o.usd_per_million_tokens), money=True),
        _Column("marginal", lambda o: _unit_money(o.marginal_usd_per_million_tokens), money=True),
    ]
    if workload_kind == "inference":
        tail += [
            _Column("TTFT", lambda o: _milliseconds(o.ttft_ms)),
            _Column("TPOT", lambda o: _milliseconds(o.tpot_ms)),
        ]
    return head + tail


def _what(option: OptionRead) -> str:
    kind = _KIND_NAMES.get(option.option, option.option)
    folded = f" (+{len(option.same_total)} same total)" if option.same_total else ""
    return escape(f"[{kind}] {option.label}{folded}")


def _same_totals(result: RecommendationRead) -> None:
    """The options folded into a row, listed under the table."""
    for option in result.options:
        if option.same_total:
            console.print(
                escape(f"  #{option.rank} same total: " + "; ".join(option.same_total)), soft_wrap=True
            )


def _table(result: RecommendationRead) -> Table:
    """Money columns never wrap or truncate; the description column folds instead."""
    columns = _columns(result.workload_kind)
    table = Table(
        title=f"{result.workload_kind} workload, catalog version {result.catalog_version}",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        show_edge=False,
    )
    for column in columns:
        cells = [column.cell(option) for option in result.options]
        widest = max([len(column.title), *(len(cell) for cell in cells)])
        if column.title == "what":
            table.add_column(column.title, overflow="fold", ratio=1, min_width=14)
        else:
            table.add_column(column.title, justify="right", no_wrap=True, min_width=widest)
    for option in result.options:
        table.add_row(*(column.cell(option) for column in columns))
    return table


def _price_line(option: OptionRead) -> str:
    """The option's price per accelerator-hour (cloud, owned, local) and where it comes from."""
    per_hour = (
        f"{_unit_money(option.usd_per_accelerator_hour)} per accelerator-hour, "
        if option.usd_per_accelerator_hour is not None
        else ""
    )
    return f"{per_hour}from {option.price_source}"


def _best_of_each_kind(result: RecommendationRead) -> None:
    if not result.best_per_option:
        return
    console.print("[bold]Best of each kind:[/bold]")
    per = "run" if result.workload_kind == "training" else "1M tokens"
    for kind, option in result.best_per_option.items():
        figure = option.usd_per_run if result.workload_kind == "training" else option.usd_per_million_tokens
        per_hour = option.usd_per_accelerator_hour
        hourly = "" if per_hour is None else f", {_unit_money(per_hour)} per accelerator-hour"
        console.print(
            escape(
                f"  {kind}: #{option.rank} {option.label}, {_money(option.total_usd)} total, "
                f"{_unit_money(figure)} per {per}{hourly}"
            ),
            soft_wrap=True,
        )


def _binding(result: RecommendationRead) -> None:
    if result.options or not result.binding_constraints:
        return
    console.print("[bold]Nothing is feasible.[/bold] Constraints that bind:")
    for binding in result.binding_constraints:
        lifted = f"  {binding.constraint} ({binding.relaxed_to})"
        if binding.cheapest_label is None:
            line = f"{lifted}: lifting it alone admits nothing"
        else:
            figure = f", {binding.cheapest_figure}" if binding.cheapest_figure else ""
            line = (
                f"{lifted} would admit {binding.cheapest_label}, "
                f"{_money(binding.cheapest_total_usd)} total{figure}"
            )
        console.print(escape(line), soft_wrap=True)


def _print(result: RecommendationRead) -> None:
    console.print(_table(result))
    _same_totals(result)
    _best_of_each_kind(result)
    _binding(result)
    if result.options:
        console.print(f"[bold]Why #1:[/bold] {result.options[0].rationale}")
        if result.options[0].setting:
            console.print(f"[bold]Setting:[/bold] {result.options[0].setting}")
        if result.options[0].uncertainty:
            console.print(f"[bold]Uncertainty:[/bold] {result.options[0].uncertainty}")
        if result.options[0].price_source:
            console.print(escape(f"#1 price: {_price_line(result.options[0])}"), soft_wrap=True)
    rejected = ", ".join(f"{group.reason} {group.count:,}" for group in result.rejected)
    console.print(f"[bold]Rejected:[/bold] {rejected or 'none'}")
    if result.break_even:
        console.print(f"[bold]Break-even:[/bold] {result.break_even.summary}")
    console.print(f"{result.candidates_evaluated:,} candidates evaluated")


def _answer(request: RecommendationCreate, database_url: str) -> RecommendationRead:
    """From the snapshot stamped for the catalog file as it is (no database opened, SQLAlchemy not
    even imported), else from the database, stamping the snapshot it used for the next call."""
    stamp = sqlite_catalog_stamp(database_url)
    files = SnapshotFiles()
    if stamp is not None:
        snapshot = files.load_stamped(stamp)
        answer = None if snapshot is None else recommend_on_cached_snapshot(request, snapshot)
        if answer is not None:
            return answer
    answer = _answer_from_database(request, database_url, files)
    if stamp is not None and reads_now(request):
        if sqlite_catalog_stamp(database_url) == stamp:  # nothing written meanwhile, by us or another
            files.stamp_last(stamp)
    return answer


def _answer_from_database(
    request: RecommendationCreate, database_url: str, files: SnapshotFiles
) -> RecommendationRead:
    from wheretorun.db import create_db_engine, make_session_factory
    from wheretorun.pricing.bootstrap import prepare_database
    from wheretorun.pricing.snapshot import SnapshotCache
    from wheretorun.services.recommendations import recommend_for

    engine = create_db_engine(database_url)
    try:
        prepare_database(engine)
        with make_session_factory(engine)() as session:
            return recommend_for(session, request, SnapshotCache(files=files))
    finally:
        engine.dispose()


def recommend(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Workload file (YAML or JSON).")],
    as_of: Annotated[
        str | None, typer.Option(help="Price with the catalog in force at this ISO date-time.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many options to list.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full answer as JSON.")] = False,
) -> None:
    """Rank hosted API, cloud, owned and local options for the workload in FILE."""
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
    try:
        result = _answer(request, get_settings().resolved_database_url())
    except (WheretorunError, InvalidSpec) as error:
        console.print(f"[red]{error}[/red]")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps(result.model_dump(), default=str, indent=2))  # noqa: T201 - the command's output
    else:
        _print(result)
