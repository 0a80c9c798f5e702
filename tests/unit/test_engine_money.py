"""Float amounts become Decimal cents at the edge: exact half-even rounding of the float's binary
value, never an error for a finite float, never a negative zero."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wheretorun.engine.money import CENT, rounded, rounded_to_places


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


def _plain(value: float, step: Decimal) -> Decimal:
    """The rule written plainly: the float's exact value quantized with digits to spare, + 0."""
    with localcontext(prec=400):
        return Decimal(value).quantize(step, rounding=ROUND_HALF_EVEN) + 0


@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["0.01", "0.0001", "0.010", "0.05", "1", "0", "1E-21", "1E+1", "5E+2"]),
)
def test_rounding_keeps_the_digits_and_the_exponent_of_decimal_arithmetic(value: float, step: str) -> None:
    """Equal as text, not only as numbers: the exponent is part of the answer ("0.00", "120")."""
    assert str(rounded(value, Decimal(step))) == str(_plain(value, Decimal(step)))


@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, 2, 4, 21]))
def test_rounding_to_places_is_rounding_to_the_step(value: float, places: int) -> None:
    assert str(rounded_to_places(value, places)) == str(_plain(value, Decimal(1).scaleb(-places)))


@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.sampled_from([0, 2, 4]))
def test_rounding_a_numpy_float_or_an_int_is_rounding_the_float(value: float, places: int) -> None:
    """The amounts come as floats, numpy floats (array reads) and ints (a zero): each is rounded as
    its float value is."""
    expected = str(rounded_to_places(value, places))
    assert str(rounded_to_places(np.float64(value), places)) == expected
    if value.is_integer() and abs(value) < 2**53:
        assert str(rounded_to_places(int(value), places)) == expected


def test_a_step_above_one_rounds_to_a_whole_number() -> None:
    assert str(rounded(123.0, Decimal("1E+1"))) == "120"
    assert str(rounded(-3.0, Decimal("1E+1"))) == "0"
    assert str(rounded(-0.004, Decimal("0.0001"))) == "-0.0040"
    assert str(rounded(0.125, CENT)) == "0.12"
    assert str(rounded(-0.0)) == "0.00"


@pytest.mark.parametrize("places", [-1, 22])
def test_rounding_to_places_refuses_places_out_of_range(places: int) -> None:
    with pytest.raises(ValueError, match="places"):
        rounded_to_places(1.234567, places)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_rounding_refuses_what_is_not_finite_as_quantize_does(value: float) -> None:
    with pytest.raises(InvalidOperation):
        rounded(value)
    with pytest.raises(InvalidOperation):
        rounded(value, Decimal(100))  # the quantize path
