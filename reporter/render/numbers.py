"""Every number the site prints, formatted once: templates (as filters) and charts (hover text) both call here.

Times are shown to 3 significant figures in the unit that keeps them readable (µs below 0.1 ms, s from
1,000 ms), with the exact value kept for a tooltip; unknown values are a dash, never 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from markupsafe import Markup, escape

from ..core.units import SHARE_DECIMALS, SPEEDUP_DECIMALS, UNIT_LABEL

DASH = "—"
TIME_DIGITS = 3
# Below this many ms a time reads better in µs ("21.3 µs", not "0.0213 ms").
MICRO_BELOW_MS = 0.1
SECONDS_FROM_MS = 1000.0
# Times shown together (a run's headline cards, its timing table) share one unit unless they span more
# than this factor, where one unit would print "0.0012 s" or "1,200,000 µs".
ONE_UNIT_SPAN = 1000.0
# A number with its unit, as the site prints them: kept on one line, never "2.62e-" above "06" or
# "11.5" above "µs". Units are those `num`, `time_ms` and the page data put after a number.
_UNITS = r"µs|μs|ms|ns|s|%|[kMGT]?FLOP/s|[kMGT]?FLOP/B|[kMGT]?FLOP|[kMGT]?B/s|[kMGT]?B|x|×|sectors/req|threads|blocks|MHz|W"
# A number stands alone: not the digits of "fp32", a hash, a date or a shape ("4673x112").
_NUMBER = re.compile(rf"(?<![\w.:/−-])[−-]?\d[\d,]*(?:\.\d+)?(?:e[-+]\d+)?(?:(?:x|×|%)(?![\w.])|\s(?:{_UNITS})(?![\w/])|(?![\w.:/-]))")


def sig(value: float, digits: int = TIME_DIGITS) -> str:
    """`value` to `digits` significant figures in plain notation with thousands separators: 21.3, 0.0213, 1,230."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > math.floor(math.log10(abs(value))):
        decimals = max(0, decimals - 1)  # 9.996 rounds to 10.0: still 3 figures, not 4
    return f"{rounded:,.{decimals}f}"


def _round_sig(value: float, digits: int = TIME_DIGITS) -> float:
    return 0.0 if value == 0 else round(value, digits - 1 - math.floor(math.log10(abs(value))))


def time_unit(value: float) -> str:
    """The unit `time_ms` shows a time (in ms) in: "us", "ms" or "s"."""
    shown = _round_sig(value)  # pick the unit from the rounded value: 0.09996 ms is "0.100 ms", not "100 µs"
    if shown != 0 and abs(shown) < MICRO_BELOW_MS:
        return "us"
    return "s" if abs(shown) >= SECONDS_FROM_MS else "ms"


def common_unit(values: Iterable[float | None]) -> str | None:
    """One unit for times shown side by side: the one the smallest takes, so none reads "0.0492 ms"; None
    (each its own) when they span more than ONE_UNIT_SPAN."""
    known = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not known or max(known) / min(known) > ONE_UNIT_SPAN:
        return None
    return time_unit(min(known))


def time_ms(value: float | None, unit: str | None = None) -> str:
    """A time given in ms, to 3 significant figures with its unit: "21.3 µs", "1.25 ms", "2.40 s"; in
    `unit` ("us", "ms", "s") when given, for times shown together."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if not math.isfinite(value):
        return f"{num(value)} ms"
    unit = unit or time_unit(value)
    if unit == "us":
        return f"{sig(value * 1e3)} {UNIT_LABEL['us']}"
    if unit == "s":
        return f"{sig(value / 1e3)} s"
    return f"{sig(value)} ms"


def time_exact(value: float | None) -> str:
    """The exact value behind a rounded time, for a tooltip: "0.0213 ms"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{value!r} ms"


def time_html(value: float | None, unit: str | None = None) -> Markup:
    """A rounded time (in `unit` when given) whose tooltip holds the exact value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Markup(DASH)
    return Markup('<span class="t" title="{}">{}</span>').format(escape(time_exact(value)), time_ms(value, unit))


def nowrap(value: Any) -> Markup:
    """`value` as HTML with each number and its unit in a `<span class="n">`, which the stylesheet keeps on
    one line. HTML already made here (times with tooltips) is returned as it is."""
    if isinstance(value, Markup):
        return value
    raw, out, at = str(value), [], 0
    for m in _NUMBER.finditer(raw):
        out.append(escape(raw[at:m.start()]))
        out.append(Markup('<span class="n">{}</span>').format(m.group(0)))
        at = m.end()
    out.append(escape(raw[at:]))
    return Markup("").join(out)


def recorded_time_html(value: float | None, unit: str) -> Markup:
    """A time as the harness recorded it: 3 significant figures in the unit it claimed, never converted (a
    claimed unit may be wrong by ~1000x, and the page flags that rather than fixing it); exact in the tooltip."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Markup(DASH)
    label = UNIT_LABEL.get(unit, unit)
    return Markup('<span class="t" title="{}">{}</span>').format(f"{value!r} {label} as recorded (the unit the harness claimed)",
                                                                 f"{sig(value)} {label}")


def num(value: Any, digits: int = 2) -> str:
    """Fixed-format numbers that are not times; None is unknown and shows as a dash, never as 0."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == 0:
            return "0"
        if abs(value) < 10 ** -digits or abs(value) >= 1e7:
            return f"{value:.{digits}e}"
        return f"{value:,.{digits}f}"
    return str(value)


def speedup(value: float | None) -> str:
    """A speedup; unknown is a dash (an unknown speedup is never "slower")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{value:.{SPEEDUP_DECIMALS}f}x" if math.isfinite(value) else num(value)


def share(n: int, d: int) -> str:
    """A fraction of a denominator as a 2-decimal share; nothing attempted is a dash."""
    return DASH if not d else f"{n / d:.{SHARE_DECIMALS}f}"


def percent(value: float | None) -> str:
    """A share (0–1) as a percentage to one decimal; unknown is a dash."""
    return DASH if value is None else f"{value * 100:.1f}%"


def witness(value: float | None) -> str:
    """A compared value as evidence shows it: 6 significant figures; None is the NaN a witness keeps as None."""
    if value is None:
        return "NaN"
    return num(value) if not math.isfinite(value) else f"{value:.6g}"
