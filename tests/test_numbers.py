"""Every number format of the site (render/numbers.py) on hand-picked values, the printed text written here.

Values sit where formatting goes wrong: a rounding that carries into the next digit or unit (9.996, 0.09996 ms),
a unit boundary, a share of nothing, the sign of an infinity. `sig` keeps every integer digit of a value
of 1,000 or more ("1,234"); times that large are shown in seconds anyway.
"""

from __future__ import annotations

import math

import pytest

from reporter.render.numbers import DASH, common_unit, num, percent, share, sig, speedup, time_ms, time_unit, witness


@pytest.mark.parametrize(("value", "shown"), [
    (21.349, "21.3"), (0.021349, "0.0213"), (1234.5, "1,234"), (9.996, "10.0"), (0.09996, "0.100"), (999.96, "1,000"),
    (-9.996, "-10.0"), (0.0, "0"), (100.0, "100"),
])
def test_sig_keeps_three_figures_also_when_rounding_carries(value: float, shown: str) -> None:
    assert sig(value) == shown


@pytest.mark.parametrize(("ms", "shown"), [
    (0.0213, "21.3 \u03bcs"), (0.09996, "0.100 ms"), (0.1, "0.100 ms"), (0.0999, "99.9 \u03bcs"), (1.25, "1.25 ms"),
    (999.4, "999 ms"), (999.96, "1.00 s"), (1000.0, "1.00 s"), (2400.0, "2.40 s"), (None, DASH), (math.nan, DASH),
])
def test_a_time_takes_the_unit_of_its_rounded_value(ms: float | None, shown: str) -> None:
    assert time_ms(ms) == shown


def test_unit_boundaries() -> None:
    assert [time_unit(v) for v in (0.0999, 0.1, 999.0, 1000.0, 0.0)] == ["us", "ms", "ms", "s", "ms"]


def test_times_shown_together_take_the_smallest_ones_unit_unless_they_span_too_much() -> None:
    assert common_unit([0.0492, 3.1]) == "us"  # "49.2 µs" beside "3,100 µs", never "0.0492 ms"
    assert common_unit([3.1, 0.5, None]) == "ms"
    assert common_unit([1500.0, 2000.0]) == "s"
    assert common_unit([0.001, 1.0]) == "us"  # a span of exactly 1,000 still shares one unit
    assert common_unit([0.001, 1.001]) is None  # more than 1,000 apart: each its own
    assert common_unit([None, 0.0]) is None
    assert time_ms(3.1, common_unit([0.0492, 3.1])) == "3,100 \u03bcs"


def test_shares_percentages_and_speedups() -> None:
    assert percent(0.123) == "12.3%" and percent(1.0) == "100.0%" and percent(0.0) == "0.0%" and percent(None) == DASH
    assert share(1, 3) == "0.33" and share(0, 4) == "0.00" and share(0, 0) == DASH  # nothing attempted: unknown
    assert speedup(2.968895758975868) == "2.97x" and speedup(None) == DASH and speedup(math.nan) == DASH
    assert speedup(math.inf) == "∞"


def test_numbers_that_are_not_times() -> None:
    assert [num(v) for v in (math.inf, -math.inf, math.nan, None, True, 0.0)] == ["∞", "−∞", "NaN", DASH, "yes", "0"]
    assert num(1234567) == "1,234,567" and num(3.14159) == "3.14" and num(3.14159, 1) == "3.1"
    assert num(0.004) == "4.00e-03" and num(0.01) == "0.01" and num(12_345_678.0) == "1.23e+07" and num(9_999_999.0) == "9,999,999.00"
    assert witness(None) == "NaN" and witness(1.23456789) == "1.23457" and witness(-math.inf) == "−∞"
