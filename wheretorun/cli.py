"""The `wheretorun` command line: serve the API and manage the catalog database."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from wheretorun.cli_admin import keys_app, prices_app
from wheretorun.cli_recommend import recommend
from wheretorun.settings import Settings, default_sqlite_path, get_settings

app = typer.Typer(
    help="wheretorun: where should this AI workload run, and what will it cost?", no_args_is_help=True
)
db_app = typer.Typer(help="Create, migrate and seed the catalog database.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(prices_app, name="prices")
app.add_typer(keys_app, name="keys")
app.command()(recommend)
console = Console()


def _database_label(settings: Settings) -> str:
    if settings.database_url:
        return settings.resolved_database_url().split("@")[-1]
    return f"SQLite file {default_sqlite_path()}"


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Interface to bind (default from WHERETORUN_HOST).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default from WHERETORUN_PORT, 8000).")] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
) -> None:
    """Serve the REST API. An empty database is migrated and seeded with the shipped catalog first."""
    import uvicorn

    from wheretorun.db import create_db_engine
    from wheretorun.pricing.bootstrap import prepare_database

    settings = get_settings()
    engine = create_db_engine(settings.resolved_database_url())
    console.print(f"database: {_database_label(settings)}")
    report = prepare_database(engine)
    if report is not None:
        _print_counts("seeded the catalog", report)
    engine.dispose()
    bind_host, bind_port = host or settings.host, port or settings.port
    console.print(f"serving on http://{bind_host}:{bind_port}  (docs at /docs)")
    uvicorn.run(  # the app writes its own access log (JSON, with request ids): no second line
        "wheretorun.api.app:create_app",
        factory=True,
        host=bind_host,
        port=bind_port,
        workers=workers,
        access_log=False,
    )


@db_app.command("upgrade")
def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head") -> None:
    """Apply the Alembic migrations up to REVISION."""
    from alembic import command

    from wheretorun.db import alembic_config, create_db_engine

    engine = create_db_engine(get_settings().resolved_database_url())
    command.upgrade(alembic_config(engine), revision)
    console.print(f"{_database_label(get_settings())}: at {revision}")


@db_app.command("downgrade")
def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision, e.g. base.")]) -> None:
    """Revert the Alembic migrations down to REVISION."""
    from alembic import command

    from wheretorun.db import alembic_config, create_db_engine

    engine = create_db_engine(get_settings().resolved_database_url())
    command.downgrade(alembic_config(engine), revision)
    console.print(f"{_database_label(get_settings())}: at {revision}")


@db_app.command("seed")
def db_seed() -> None:
    """Migrate, then load the shipped public catalog if the database has none yet."""
    from wheretorun.db import create_db_engine
    from wheretorun.pricing.bootstrap import prepare_database

    engine = create_db_engine(get_settings().resolved_database_url())
    report = prepare_database(engine)
    if report is None:
        console.print("the catalog is already seeded; nothing written")
    else:
        _print_counts("seeded the catalog", report)


@app.command()
def catalog() -> None:
    """Show the catalog version and row counts."""
    from wheretorun.db import create_db_engine, make_session_factory
    from wheretorun.pricing.repositories import catalog_summary

    engine = create_db_engine(get_settings().resolved_database_url())
    with make_session_factory(engine)() as session:
        summary = catalog_summary(session)
    version = summary["version"]
    title = (
        f"catalog version {version.id} ({version.kind}, {version.created_at:%Y-%m-%d})"
        if version
        else "no catalog"
    )
    _print_counts(title, summary["counts"])


def _print_counts(title: str, counts: dict[str, int]) -> None:
    table = Table(title=title)
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, count in counts.items():
        table.add_row(name, f"{count:,}")
    console.print(table)


if __name__ == "__main__":
    app()
