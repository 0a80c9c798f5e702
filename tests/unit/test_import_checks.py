"""The strict checks reject every malformed file whole, naming the row, column and reason; the
shipped files all pass. (The same cases go through a real import in tests/integration.)"""

from __future__ import annotations

import pytest

from tests.import_support import MALFORMED
from tests.sources import LITELLM_FILE, SKYPILOT_DIR
from wheretorun.errors import FileProblem, MalformedFile
from wheretorun.pricing.imports.canonical import read_canonical_prices
from wheretorun.pricing.imports.checks import MAX_PROBLEMS, check_litellm, check_skypilot, decode_text

ACCELERATORS = {"h100-sxm": "h100-sxm", "H100-SXM": "h100-sxm"}


def read(format: str, provider: str | None, content: bytes) -> object:
    text = decode_text(content)
    if format == "skypilot":
        assert provider is not None
        check_skypilot(text, provider)
        return None
    if format == "litellm":
        return check_litellm(text)
    return read_canonical_prices(text, ACCELERATORS.get)


@pytest.mark.parametrize(
    ("format", "provider", "content", "row", "column", "reason"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_a_malformed_file_is_rejected_with_row_column_and_reason(
    format: str, provider: str | None, content: bytes, row: int | str | None, column: str | None, reason: str
) -> None:
    with pytest.raises(MalformedFile) as rejected:
        read(format, provider, content)
    problems = rejected.value.problems
    assert any(
        reason.lower() in problem.reason.lower() and problem.row == row and problem.column == column
        for problem in problems
    ), problems
    assert "nothing was imported" in rejected.value.detail


def test_there_are_at_least_twenty_malformed_cases() -> None:
    assert len(MALFORMED) >= 20
    assert len({case[0] for case in MALFORMED}) == len(MALFORMED)


def test_every_shipped_file_passes_the_checks() -> None:
    for path in sorted(SKYPILOT_DIR.glob("*_vms.csv")):
        check_skypilot(decode_text(path.read_bytes()), path.name.removesuffix("_vms.csv"))
    keys = check_litellm(decode_text(LITELLM_FILE.read_bytes()))
    assert len(keys) > 4000


def test_every_problem_is_reported_up_to_a_cap() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
    bad_rows = "".join(f"t{n},A100,8,96,1152,abc,,us-east-1\n" for n in range(MAX_PROBLEMS + 10))
    with pytest.raises(MalformedFile) as rejected:
        check_skypilot(header + bad_rows, "aws")
    problems = rejected.value.problems
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[0] == FileProblem(2, "Price", "not a number: 'abc'")
    assert problems[-1].reason == "10 more problems not listed"


def test_gcp_rows_may_lack_an_instance_type_and_host_rows_are_skipped() -> None:
    text = (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
        ",A100,8,,,23.4,8.1,us-central1\n"
        "n2-standard-8,,,8,32,0.38,,us-central1\n"
    )
    check_skypilot(text, "gcp")
    with pytest.raises(MalformedFile):
        check_skypilot(text, "aws")


def test_zero_and_null_prices_are_allowed_they_mean_unknown() -> None:
    keys = check_litellm('{"m": {"input_cost_per_token": 0, "output_cost_per_token": null, "mode": "chat"}}')
    assert keys == ["m"]


def test_a_byte_order_mark_is_dropped() -> None:
    assert decode_text("\ufeffkind,key\n".encode()) == "kind,key\n"


def test_canonical_json_reads_like_csv() -> None:
    prices = read_canonical_prices(
        '{"prices": [{"kind": "hardware", "key": "H100-SXM", "usd_per_unit": 30000, "source": "quote"},'
        ' {"kind": "energy", "key": "US/Ohio", "usd_per_kwh": "0.11", "source": "EIA"}]}',
        ACCELERATORS.get,
    )
    assert prices.kinds == {"hardware", "energy"}
    assert prices.hardware[0].accelerator_id == "h100-sxm"
    assert str(prices.hardware[0].usd_per_unit) == "30000"
    assert str(prices.energy[0].usd_per_kwh) == "0.11"
