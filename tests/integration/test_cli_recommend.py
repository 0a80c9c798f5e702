"""`wheretorun recommend FILE` end to end on a fresh SQLite file (seeded by the command itself)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wheretorun.cli import app
from wheretorun.settings import get_settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def fresh_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cli.db"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the snapshot files
    get_settings.cache_clear()
    yield path
    get_settings.cache_clear()


def test_recommend_prints_the_ranked_options(fresh_database: Path) -> None:
    runner = CliRunner()
    as_json = runner.invoke(
        app, ["recommend", str(EXAMPLES / "tiny-prototype.yaml"), "--json", "--limit", "3"]
    )
    assert as_json.exit_code == 0, as_json.output
    result = json.loads(as_json.output[as_json.output.index("{") :])
    assert len(result["options"]) == 3
    assert result["options"][0]["option"] == "hosted_api"
    assert fresh_database.exists()
    assert list((fresh_database.parent / "cache").rglob("*.pickle"))  # the snapshot, for the next call
    table = runner.invoke(app, ["recommend", str(EXAMPLES / "lora-finetune-8b.yaml")])
    assert table.exit_code == 0, table.output
    assert "training workload" in table.output
    assert "Rejected" in table.output
    assert "#1 price: $" in table.output
    assert "per accelerator-hour" in table.output
    cloud = [o for o in result["options"] if o["option"] in ("cloud", "owned")]
    assert all(o["usd_per_accelerator_hour"] and o["price_source"] for o in cloud)


def test_recommend_names_the_bad_field(fresh_database: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "workload:\n  kind: inference\n  model: llama-3.1-8b\n  input_tokens: 0\n", encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["recommend", str(bad)])
    assert result.exit_code == 2
    assert "input_tokens" in result.output


def test_a_yaml_number_in_scientific_notation_is_a_number(fresh_database: Path, tmp_path: Path) -> None:
    # PyYAML reads `1e9` (no dot) as the string "1e9"; the API takes numbers only (a string is a
    # 422), so the CLI loads YAML 1.2's floats.
    workload = tmp_path / "batch.yaml"
    workload.write_text(
        "workload:\n  kind: batch\n  model: llama-3.1-8b\n  input_tokens_total: 1e9\n"
        "  output_tokens_total: 1e8\n  deadline_hours: 24\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["recommend", str(workload), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["options"]


def _money_cells(line: str) -> list[str]:
    return re.findall(r"\$[0-9,]+(?:\.[0-9]+)?…?", line)


def test_the_table_shows_each_kinds_figures_and_never_cuts_money_at_80_columns(fresh_database: Path) -> None:
    runner = CliRunner()
    training = runner.invoke(app, ["recommend", str(EXAMPLES / "lora-finetune-8b.yaml"), "--limit", "5"])
    assert training.exit_code == 0, training.output
    header = next(line for line in training.output.splitlines() if line.startswith("#"))
    assert header.split() == ["#", "what", "total", "per", "run", "marginal", "acc-h", "wall", "h"]
    serving = runner.invoke(app, ["recommend", str(EXAMPLES / "chat-assistant-70b.yaml"), "--limit", "5"])
    assert serving.exit_code == 0, serving.output
    header = next(line for line in serving.output.splitlines() if line.startswith("#"))
    assert header.split() == ["#", "what", "total", "per", "1M", "tok", "marginal", "TTFT", "TPOT"]
    for output in (training.output, serving.output):
        table = output[: output.index("Best of each kind")]
        assert all(len(line) <= 80 for line in table.splitlines())
        cells = [cell for line in table.splitlines() for cell in _money_cells(line)]
        assert cells, "the table shows money"
        assert not any(cell.endswith("…") for cell in cells)
        assert re.search(r"^  cloud: #\d+ ", output, re.MULTILINE)


def test_a_cheap_cost_per_token_is_not_shown_as_zero(fresh_database: Path) -> None:
    """The nightly batch costs $16.20 for 2.2e9 tokens: $0.0074 per million all-in and $0.0032
    without the staff minimum, not "$0.01" and "$0.00"."""
    batch = CliRunner().invoke(
        app, ["recommend", str(EXAMPLES / "nightly-batch-summaries.yaml"), "--limit", "3"]
    )
    assert batch.exit_code == 0, batch.output
    first = next(line for line in batch.output.splitlines() if line.lstrip().startswith("1 "))
    assert first.split()[-3:] == ["$16.20", "$0.0074", "$0.0032"], first
    assert "$0.00 " not in batch.output
