"""Time units, written out once: what the harnesses label values with and what pages print, and the
precision pages print speedups and shares at."""

from __future__ import annotations

from typing import Literal

TimeUnit = Literal["ns", "us", "ms", "s"]

# Microseconds per unit: the common scale for comparing values recorded in different units.
UNIT_TO_US: dict[str, float] = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
# Milliseconds per unit, written out so that 0.12 us is 0.00012 ms, not 0.00011999999999999999.
UNIT_TO_MS: dict[str, float] = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
UNIT_LABEL: dict[str, str] = {"ns": "ns", "us": "μs", "ms": "ms", "s": "s"}
# Order from smallest to largest: a ~1000x mix-up is one step along this ladder.
UNIT_LADDER: tuple[str, ...] = ("ns", "us", "ms", "s")

# Nsight Compute prints units in several spellings (`--print-units base` or not): factor to the base unit.
UNIT_FACTORS = {
    "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "second": 1.0,
    "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9,
    "byte/s": 1.0, "byte/second": 1.0, "kbyte/s": 1e3, "mbyte/s": 1e6, "gbyte/s": 1e9, "tbyte/s": 1e12,
    "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "cycle/nsecond": 1e9, "cycle/usecond": 1e6, "cycle/second": 1.0,
}
TIME_UNITS = {"ns", "nsecond", "us", "usecond", "ms", "msecond", "s", "second"}


def to_ms(value: float | None, unit: str) -> float | None:
    """A time in the unit a harness claimed, as ms (whether the claim is right is checked elsewhere)."""
    return None if value is None else value * UNIT_TO_MS[unit]


# Decimals of a speedup ("0.96x") and of a share ("0.43") as pages print them. The leaderboards rank on these
# rounded figures: two rows that read the same are tied, never ordered by a digit the reader cannot see.
SPEEDUP_DECIMALS = 2
SHARE_DECIMALS = 2
