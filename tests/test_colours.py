"""The grid's state colours can be told apart: no two of one hue family unless one is much lighter.

The grid once drew reward hack, suspect and failed to compile in three purples of almost one hue
(#1a0033, #4a148c, #6a1b9a). Colours are compared in CIE L*C*h: a hue family is hues within HUE_FAMILY
degrees, both coloured (chroma at least CHROMATIC); greys have no hue and differ from any colour.
"""

from __future__ import annotations

import itertools
import math
import re

from conftest import ROOT
from reporter.aggregates import STATES

HUE_FAMILY = 15.0  # degrees of CIE hue: red and orange (~22 apart) are two families, three purples one
CHROMATIC = 15.0
LIGHTER = 25.0  # L* apart: a light and a dark shade of one hue still read as two colours


def lch(hex_colour: str) -> tuple[float, float, float]:
    """sRGB #rrggbb as CIE L*, C*, h (D65)."""
    def linear(c: float) -> float:
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92
    r, g, b = (linear(int(hex_colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x, y, z = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
               (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116
    lightness, a, bb = 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
    return lightness, math.hypot(a, bb), math.degrees(math.atan2(bb, a)) % 360


def too_close(one: str, two: str) -> bool:
    (l1, c1, h1), (l2, c2, h2) = lch(one), lch(two)
    if abs(l1 - l2) >= LIGHTER or (c1 < CHROMATIC) != (c2 < CHROMATIC):
        return False
    return c1 < CHROMATIC or min(abs(h1 - h2), 360 - abs(h1 - h2)) < HUE_FAMILY


def state_colours(css: str) -> dict[str, str]:
    """Each grid state's background as its first #rrggbb (a striped one by its first stripe); var() ones left out."""
    out = {}
    for state, value in re.findall(r"\.s-([\w-]+)\s*\{[^}]*?background:\s*([^;]+);", css):
        if (hit := re.search(r"#[0-9a-fA-F]{6}\b", value)) and "var(" not in value:
            out[state] = hit.group(0)
    return out


def clashes(colours: dict[str, str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in itertools.combinations(sorted(colours), 2) if too_close(colours[a], colours[b])]


def test_grid_states_are_told_apart() -> None:
    colours = state_colours((ROOT / "static" / "style.css").read_text(encoding="utf-8"))
    assert {"reward-hack", "suspect", "compile-error", "incorrect", "faster"} <= set(colours)
    assert set(colours) <= {s.replace("_", "-") for s in STATES}
    assert clashes(colours) == []


def test_the_check_finds_the_old_purples() -> None:
    old = {"reward-hack": "#1a0033", "suspect": "#4a148c", "compile-error": "#6a1b9a", "incorrect": "#e53935",
           "runtime-error": "#ef6c00", "faster": "#2e7d32", "slower": "#c5e1a5"}
    assert clashes(old) == [("compile-error", "suspect"), ("reward-hack", "suspect")]
    assert state_colours(".s-x { background: repeating-linear-gradient(1deg, #AD1457 0 1px); }\n.s-y { background: var(--line); }") \
        == {"x": "#AD1457"}
