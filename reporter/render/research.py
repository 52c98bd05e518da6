"""A leaderboard's second table: every sample counted (pass@k, fast_1@k, best-of-k), what a correct or fast kernel
cost in tokens (and dollars, where the user priced the model), how much was audited, and the efficiency frontier
(fast_1 against tokens per run). The figures are `aggregates.samples`'; this module only words them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..aggregates import samples
from ..core.audit import PageOptions
from ..core.vocab import shown
from . import charts, numbers

Key = tuple[object, ...]
AUDIT_RULE = ("a row ranked within the top {top} of its board is “audit pending” until a reviewer has judged each of its "
              "counting runs (reporter review, or reviews.toml); [tool.reporter.audit] pending_top sets the {top}")


@dataclass(frozen=True)
class Cell:
    sort: str
    shown: str
    title: str


@dataclass(frozen=True)
class SampleRow:
    model: str
    samples: str  # "1 per problem", "2–5 per problem"
    cells: tuple[Cell, ...]  # pass@1, pass@k, fast_1@1, fast_1@k, best-of-k speedup
    tokens: Cell
    per_correct: Cell
    per_fast: Cell
    dollars: Cell
    audited: Cell
    fast_audited: Cell
    pending: bool


@dataclass(frozen=True)
class SampleBoard:
    rows: tuple[SampleRow, ...]
    repeated: bool  # some row has several samples of every problem it attempted
    priced: bool  # some row has a price in [tool.reporter.prices]
    tokens: bool  # some row recorded tokens
    frontier: tuple[str, str] | None  # (chart name, plotly JSON)
    audit_rule: str


def _share(x: float | None, n: int, k: int, what: str) -> Cell:
    if x is None:
        return Cell("-1", numbers.DASH, f"{what}: needs k ≤ the fewest samples of any attempted problem (here {n})")
    return Cell(f"{x:.6f}", f"{x:.2f}", f"{what}, k={k} of n≥{n} samples per problem (unbiased estimator), averaged "
                                        "over the board's problems")


def _k_cells(r: dict[str, Any]) -> tuple[Cell, ...]:
    k = int(r["k_max"])
    big = k if k > 1 else None
    best = r.get(f"best_of_{big}") if big else None
    best_cell = Cell("-1", numbers.DASH, "one sample per problem: best-of-k needs several") if big is None else \
        Cell(f"{best:.6f}" if best is not None and not math.isnan(best) else "-1", f"{numbers.speedup(best)} (k={k})",
             f"geometric mean over {r[f'best_of_{k}_n']} problems of the expected best counting speedup among {k} samples")
    return (_share(r.get("pass@1"), int(r["samples_min"]), 1, "pass@1: correct and not suspect"),
            _share(r.get(f"pass@{big}") if big else None, int(r["samples_min"]), k, f"pass@{k}"),
            _share(r.get("fast_1.0@1"), int(r["samples_min"]), 1, "fast₁@1: correct, counting and faster than 1×"),
            _share(r.get(f"fast_1.0@{big}") if big else None, int(r["samples_min"]), k, f"fast₁@{k}"),
            best_cell)


def _tokens(r: dict[str, Any]) -> tuple[Cell, Cell, Cell]:
    runs, n = int(r["tokens_runs"]), int(r["samples"])
    if not runs:
        none = Cell("-1", numbers.DASH, "no sample recorded a token count (0 means the harness did not count)")
        return none, none, none
    part = "" if runs == n else f" ({runs} of {n} samples recorded tokens; the others are left out)"
    total = Cell(str(r["tokens"]), f"{numbers.num(int(r['tokens']))}", f"{numbers.num(r['tokens_per_run'], 0)} per sample{part}")

    def per(value: float | None, what: str, count: int) -> Cell:
        if value is None:
            return Cell("-1", numbers.DASH, f"no {what} sample among those that recorded tokens")
        return Cell(f"{value:.1f}", numbers.num(value, 0), f"{numbers.num(int(r['tokens']))} tokens / {count} {what} samples{part}")
    return total, per(r["tokens_per_correct"], "correct", int(r["correct_samples"])), per(r["tokens_per_fast"], "fast", int(r["fast_samples"]))


def _dollars(r: dict[str, Any], price: float | None) -> Cell:
    if price is None:
        return Cell("-1", numbers.DASH, "no price for this model in [tool.reporter.prices] (dollars are never guessed)")
    c, f = samples.dollars(r["tokens_per_correct"], price), samples.dollars(r["tokens_per_fast"], price)
    return Cell(f"{c:.6f}" if c is not None else "-1", f"${numbers.num(c, 4)} · ${numbers.num(f, 4)}",
                f"per correct · per fast kernel, at ${price:g} per million tokens ([tool.reporter.prices])")


def _audited(audited: int, counting: int, reviewed: int) -> str:
    """"2/3", and the reviews that judged runs outside the count (a reward hack leaves it): never a bare "0/0"
    beside verdicts a reviewer gave."""
    outside = reviewed - audited
    return f"{audited}/{counting}" + (f" · {outside} reviewed, not counting" if outside else "")


def _row(model: str, r: dict[str, Any], problems: int, pending: bool, price: float | None) -> SampleRow:
    lo, hi = int(r["samples_min"]), int(r["samples_max"])
    counting, audited = int(r["counting"]), int(r["audited"])
    fa = int(r["fast_1.0_audited_n"])
    return SampleRow(
        shown(model), f"{lo}–{hi} per problem" if lo != hi else f"{lo} per problem", _k_cells(r), *_tokens(r), _dollars(r, price),
        Cell(str(audited), _audited(audited, counting, int(r["reviewed"])),
             f"{audited} of the {counting} counting samples have a reviewer's verdict on their exact kernel; "
             f"{int(r['reviewed'])} samples reviewed in all"),
        Cell(f"{fa / problems:.6f}" if problems else "0", numbers.share(fa, problems),
             f"{fa}/{problems}: fast₁ counting only runs a reviewer has judged (the audited-only view)"), pending)


def frontier(points: Sequence[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """The points no other beats on both axes: fewer tokens per run and a higher fast_1 (ties: the cheaper)."""
    out: list[tuple[str, float, float]] = []
    for p in sorted(points, key=lambda p: (p[1], -p[2], p[0])):
        if not out or p[2] > out[-1][2]:
            out.append(p)
    return out


def frontier_figure(points: Sequence[tuple[str, float, float]]) -> dict[str, Any]:
    """fast_1 against tokens per run, one point per model, the frontier as a line (log tokens)."""
    best = frontier(points)
    data = [{"type": "scatter", "mode": "markers+text", "name": "models", "x": [p[1] for p in points], "y": [p[2] for p in points],
             "text": [p[0] for p in points], "textposition": "top center", "marker": {"size": 10, "color": charts.ROLE_COLOUR["kernel"]},
             "hovertemplate": "%{text}<br>%{x:,.0f} tokens per run<br>fast₁ %{y:.2f}<extra></extra>"},
            {"type": "scatter", "mode": "lines", "name": "efficiency frontier", "x": [p[1] for p in best], "y": [p[2] for p in best],
             "line": {"shape": "hv", "dash": "dot", "color": charts.NONE}, "hoverinfo": "skip"}]
    layout = {**charts.LAYOUT, "title": {"text": "Efficiency frontier: fast₁ against tokens per run (models no other beats on both)", "x": 0},
              "xaxis": {"type": "log", "title": {"text": "tokens per run (recorded)"}},
              "yaxis": {"title": {"text": "fast₁"}, "range": [0, 1.05]}}
    return {"data": data, "layout": layout}


def sample_board(table: pd.DataFrame, runs: pd.DataFrame, by: Sequence[str], options: PageOptions, name: str
                 ) -> tuple[SampleBoard, dict[str, tuple[str, str]]]:
    """The board's second table from its table (`aggregates.board_table`) and scoped runs, and per model the mark its
    row of the first table carries: ("audit pending", "pending"), ("audited 2/3", "") or ("", "")."""
    keys = [*by, "model"]
    recs = table.to_dict("records")
    key = {str(r["model"]): tuple(r[c] for c in keys) for r in recs}
    figures = samples.sample_rows(runs, by, {key[str(r["model"])]: int(r["problems"]) for r in recs})
    late = samples.pending({key[str(r["model"])]: int(r["rank"]) for r in recs}, figures, options.pending_top)
    rows, marks, points = [], {}, []
    for r in recs:
        k, model = key[str(r["model"])], str(r["model"])
        f = figures[k]
        rows.append(_row(model, f, int(r["problems"]), k in late, options.price(model)))
        marks[model] = ("audit pending", "pending") if k in late else (f"audited {f['audited']}/{f['counting']}" if f["audited"] else "", "")
        if f["tokens_per_run"]:
            points.append((shown(model), float(f["tokens_per_run"]), float(r[f"fast_{1.0:.1f}"])))
    chart = (f"frontier-{name}", charts.to_json(frontier_figure(points))) if points else None  # Markup: escaping it breaks the JSON
    return SampleBoard(tuple(rows), any(int(f["k_max"]) > 1 for f in figures.values()), any(options.price(str(r["model"])) for r in recs),
                       any(f["tokens_runs"] for f in figures.values()), chart, AUDIT_RULE.format(top=options.pending_top)), marks

