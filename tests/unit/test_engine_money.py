"""Float amounts become Decimal cents at the edge: exact half-even rounding of the float's binary
value, never an error for a finite float, never a negative zero."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext

from hypothesis import given
from hypothesis import strategies as st

from wheretorun.engine.money import CENT, rounded


def test_rounding_is_half_even_on_the_exact_binary_value() -> None:
    assert rounded(2.675) == Decimal("2.67")  # 2.675 is 2.67499999... in binary
    assert rounded(0.125, Decimal("0.01")) == Decimal("0.12")  # exactly half: to the even cent
    assert rounded(0.375) == Decimal("0.38")
    assert str(rounded(-0.004)) == "0.00"  # not "-0.00"


def test_the_largest_float_is_rounded_not_an_error() -> None:
    largest = 1.7976931348623157e308
    assert rounded(largest) == Decimal(largest)
    assert rounded(-largest) == Decimal(-largest)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_rounding_matches_decimal_arithmetic_with_enough_digits(value: float) -> None:
    with localcontext(prec=400):
        expected = Decimal(value).quantize(CENT, rounding=ROUND_HALF_EVEN) + 0
    result = rounded(value)
    assert result == expected
    assert not (result.is_zero() and result.is_signed())
    assert abs(result - Decimal(value)) <= Decimal("0.005")
