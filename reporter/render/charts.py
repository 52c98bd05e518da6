"""Plotly figures as plain dicts and their JSON. Built in Python so tests can read the dicts; drawn by
static/app.js with the offline plotly.js."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from ..core.checks import fast_n
from ..core.records import Turn
from . import numbers

# Layout rules every chart follows. The page shows a chart's title as a caption above it (static/app.js
# moves `title` out of the figure), so inside the chart the legend has the top to itself: one horizontal
# row (or more) above the plot, from the left, with the top margin grown to fit it (plotly's automargin).
# No chart puts a legend over its plot, where at 390 px it covered the points and the title.
# No "template": plotly.js has none by default (plotly.py's default template is its own addition).
LAYOUT: dict[str, Any] = {
    "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
    "font": {"family": "system-ui, sans-serif", "size": 12},
    "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0, "xanchor": "left"},
    "paper_bgcolor": "rgba(0,0,0,0)",
    "plot_bgcolor": "rgba(0,0,0,0)",
    "height": 320,
}
OK, FAIL, NONE = "#2e7d32", "#c62828", "#9e9e9e"
# One colour per role on every chart (the roofline's points, the warp-stall bars, ...): a reader who learnt
# "kernel is orange" on one chart reads the next one the same way. Colour-blind safe pair.
ROLE_COLOUR = {"kernel": "#e66100", "reference": "#5d3a9b"}
ROOF = "#607d8b"
# The runtime scatter's axes span its points' times and this factor either side (log scale): the points fill the
# plot, where a fixed floor of 0.001 ms left three or four empty decades below sub-millisecond kernels.
SCATTER_MARGIN = 1.6


def role_colour(role: str) -> str:
    """The colour of a role ("kernel", "reference", "reference (torch.compile)", ...), grey for others."""
    return next((c for r, c in ROLE_COLOUR.items() if role == r or role.startswith(r + " ")), NONE)


def _finite(value: Any) -> Any:
    # JSON has no NaN or Infinity (JSON.parse rejects them): a figure shows such a point as missing
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(fig: dict[str, Any]) -> Markup:
    """Figure JSON safe inside <script type="application/json">: <, > and / are escaped, so no text in a
    figure can close the script element. The figures are plain dicts, not plotly objects: building a
    go.Figure validates every property, which cost more than the rest of a leaderboard."""
    text = json.dumps(_finite(fig), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("/", "\\/"))


def _label(text: str) -> str:
    # Plotly renders a subset of HTML in labels; model-chosen text (tool names) must stay text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def timeline_figure(turns: Sequence[Turn]) -> dict[str, Any] | None:
    """The turn timeline as a figure dict."""
    timed = [t for t in turns if t.llm_s is not None or t.tool_s is not None]
    if not timed:
        return None
    x = [f"turn {t.index}" for t in timed]
    labels, colors = [], []
    for t in timed:
        parts = [f"{'✓' if c.result and c.result.ok else '✗' if c.result else '·'} {_label(c.tool)}" for c in t.calls]
        labels.append(", ".join(parts) + (" · FINAL" if t.final else "") or "no tool call")
        results = [c.result.ok for c in t.calls if c.result]
        colors.append(NONE if not results else OK if all(results) else FAIL)
    top = [(t.llm_s or 0) + (t.tool_s or 0) for t in timed]
    data = [
        {"type": "bar", "name": "LLM seconds", "x": x, "y": [t.llm_s or 0 for t in timed], "marker": {"color": "#5c6bc0"},
         "customdata": labels, "hovertemplate": "%{x}<br>LLM %{y:.1f} s<br>%{customdata}<extra></extra>"},
        {"type": "bar", "name": "tool seconds", "x": x, "y": [t.tool_s or 0 for t in timed], "marker": {"color": "#ffa726"},
         "customdata": labels, "hovertemplate": "%{x}<br>tools %{y:.1f} s<br>%{customdata}<extra></extra>"},
        {"type": "scatter", "name": "tool result (green ok, red fail)", "x": x, "y": top, "mode": "markers+text", "text": labels,
         "textposition": "top center", "marker": {"color": colors, "size": 11, "symbol": "diamond"},
         "textfont": {"size": 10}, "hoverinfo": "skip", "cliponaxis": False},
    ]
    layout = {**LAYOUT, "barmode": "stack", "title": {"text": "Turn timeline: seconds per turn", "x": 0},
              "yaxis": {"title": {"text": "seconds"}, "rangemode": "tozero"}}
    return {"data": data, "layout": layout}


Figure = dict[str, Any]


def _scatter(**props: Any) -> dict[str, Any]:
    return {"type": "scatter", **props}


def roofline(peak_tflops: float, peak_bw_gbps: float, points: list[tuple[str, float, float]], compute: str = "FP32",
             title: str = "Roofline") -> Figure:
    """Log-log roofline: DRAM slope and a compute ceiling (`compute` names its unit); points are (label, FLOP/B, TFLOP/s)."""
    ridge = peak_tflops * 1e3 / peak_bw_gbps
    lo = min([ridge / 100] + [p[1] / 3 for p in points if p[1] > 0])
    hi = max([ridge * 100] + [p[1] * 3 for p in points])
    xs = [lo * (hi / lo) ** (i / 60) for i in range(61)]
    data = [_scatter(x=xs, y=[min(peak_tflops, x * peak_bw_gbps / 1e3) for x in xs], mode="lines",
                     name=f"roof: {peak_bw_gbps:,.0f} GB/s · {peak_tflops:.1f} TFLOP/s {compute}", line={"color": ROOF})]
    for label, ai, tflops in points:
        if ai > 0 and tflops > 0:
            data.append(_scatter(x=[ai], y=[tflops], mode="markers+text", name=label, text=[label], textposition="top center",
                                 marker={"size": 12, "color": role_colour(label)}, textfont={"color": role_colour(label)},
                                 hovertemplate=f"{label}<br>%{{x:.2f}} FLOP/B<br>%{{y:.3f}} TFLOP/s<extra></extra>"))
    layout = {**LAYOUT, "title": {"text": f"{title} (ridge {ridge:.1f} FLOP/B)", "x": 0},
              "xaxis": {"type": "log", "title": {"text": "arithmetic intensity (FLOP/byte)"}},
              "yaxis": {"type": "log", "title": {"text": f"TFLOP/s ({compute.split(' (')[0]})"},
                        # up to the highest point: a time under T_SOL sits above the roof, and must be seen there
                        "range": [math.log10(peak_tflops) - 4,
                                  max([math.log10(peak_tflops) + 0.3] + [math.log10(t) + 0.6 for _, _, t in points if t > 0])]}}
    return {"data": data, "layout": layout}


def stall_bars(series: list[tuple[str, Sequence[tuple[str, float]]]]) -> Figure:
    """Top warp-stall reasons as shares of all stall cycles, one bar group per (label, stalls)."""
    data = [{"type": "bar", "name": label, "y": [r for r, _ in stalls], "x": [v for _, v in stalls], "orientation": "h",
             "marker": {"color": role_colour(label)}, "hovertemplate": "%{y}: %{x:.1f}% of stall cycles<extra></extra>"}
            for label, stalls in series]
    layout = {**LAYOUT, "margin": {**LAYOUT["margin"], "l": 130},
              "title": {"text": "Warp stalls: share of stall cycles (%)", "x": 0},
              "xaxis": {"title": {"text": "% of stall cycles"}, "range": [0, 100]}, "yaxis": {"autorange": "reversed"}}
    return {"data": data, "layout": layout}


def fast_p_curves(series: list[tuple[str, list[float], int]]) -> Figure:
    """fast_p as a curve: share of the board's n problems (the problem set's, else the attempted ones) that are
    correct and faster than p×."""
    top = max([2.5] + [max(sp) * 1.1 for _, sp, _ in series if sp])
    ps = [round(top * i / 100, 4) for i in range(101)]
    data = []
    for model, speedups, attempted in series:
        ys = [fast_n(speedups, p) / attempted if attempted else 0 for p in ps]
        data.append(_scatter(x=ps, y=ys, mode="lines", name=_label(model), line={"shape": "hv"},
                             hovertemplate=f"{_label(model)}<br>p=%{{x:.2f}}<br>fast_p=%{{y:.2f}}<extra></extra>"))
    layout = {**LAYOUT, "height": 380, "title": {"text": "fast_p: correct and faster than p× (share of the n problems)", "x": 0},
              "xaxis": {"title": {"text": "speedup threshold p"}}, "yaxis": {"title": {"text": "fast_p"}, "range": [0, 1.02]}}
    return {"data": data, "layout": layout}


def speedup_distribution(series: list[tuple[str, list[float]]]) -> Figure:
    data = [{"type": "box", "y": speedups, "name": _label(model), "boxpoints": "all", "jitter": 0.4, "pointpos": 0,
             "hovertemplate": "%{y:.2f}x<extra></extra>"} for model, speedups in series]
    # the reference's speed, across the whole plot whatever the boxes' categories
    one = {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": 1, "y1": 1,
           "line": {"dash": "dot", "color": "#888"}}
    layout = {**LAYOUT, "title": {"text": "Speedup of correct runs (log scale; 1 = reference)", "x": 0},
              "yaxis": {"type": "log", "title": {"text": "speedup (×)"}}, "showlegend": False, "shapes": [one]}
    return {"data": data, "layout": layout}


def runtime_scatter(points: list[dict[str, object]]) -> Figure:
    """Kernel vs reference runtime, log-log, one point per run; clicking a point opens its run page."""
    data = []
    for measured in (True, False):
        pts = [p for p in points if p["measured"] is measured]
        if not pts:
            continue
        name = "re-validated (ms, measured)" if measured else "recorded only (unit as claimed, unverified)"
        data.append(_scatter(x=[p["ref_ms"] for p in pts], y=[p["kernel_ms"] for p in pts], mode="markers", name=name,
                             customdata=[p["href"] for p in pts],
                             text=[f"{_label(str(p['label']))}<br>ref {numbers.time_ms(float(p['ref_ms']))}"  # type: ignore[arg-type]
                                   f"<br>kernel {numbers.time_ms(float(p['kernel_ms']))}" for p in pts],  # type: ignore[arg-type]
                             marker={"size": 9, "symbol": "circle" if measured else "circle-open",
                                     "color": [OK if p["correct"] else FAIL for p in pts]},
                             hovertemplate="%{text}<extra></extra>"))
    times = [float(p[k]) for p in points for k in ("ref_ms", "kernel_ms")]  # type: ignore[arg-type]
    lo, hi = min(times) / SCATTER_MARGIN, max(times) * SCATTER_MARGIN
    data.append(_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="same speed", line={"dash": "dot", "color": "#888"},
                         hoverinfo="skip"))
    span = [math.log10(lo), math.log10(hi)]  # one range on both axes: the same-speed line stays the diagonal
    layout = {**LAYOUT, "title": {"text": "Kernel vs reference runtime (below the line: faster)", "x": 0},
              "xaxis": {"type": "log", "range": span, "title": {"text": "reference (ms)"}},
              "yaxis": {"type": "log", "range": span, "title": {"text": "kernel (ms)"}}}
    return {"data": data, "layout": layout}
