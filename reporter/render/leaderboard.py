"""Aggregates across runs: leaderboard rows, fast_p, geometric means, grid states.

Pure arithmetic over per-run outcomes, so the denominators can be pinned by tests. A re-validated
figure is used where one exists; otherwise the recorded one, and the outcome says so. A suspect run
(an error-level static cheat finding no reviewer cleared) and a speedup that is not a real number
(NaN, infinite, negative) never count towards fast_p or the geomean; they stay in the denominator.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..checks import usable
from . import text

FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)

# Grid states, in the order of the legend.
STATES = {
    "suspect": "suspect (static cheat finding)",
    "faster": "correct and faster",
    "slower": "correct but slower",
    "correct_unknown": "correct, speedup unknown",
    "incorrect": "incorrect",
    "compile_error": "failed to compile",
    "runtime_error": "runtime error / crash",
    "no_submission": "no submission",
    "unknown": "no verdict recorded",
}


@dataclass(frozen=True)
class Outcome:
    """One run reduced to what aggregates need."""

    run_id: str
    href: str
    model: str
    group: tuple[str, str]  # (config, variant)
    problem: tuple[int, int, str]  # (level, problem id, name)
    recorded_correct: bool | None
    revalidated_correct: bool | None  # None: not re-validated
    compiled: bool | None
    submitted: bool
    speedup: float | None  # re-validated when available, else recorded
    speedup_source: str  # "re-validated" | "recorded" | ""
    kernel_ms: float | None
    ref_ms: float | None
    turns: int | None
    tokens: int | None
    flagged: bool
    verdict: str
    suspect: bool = False  # an error-level static finding that no reviewer cleared
    speedups: tuple[tuple[str, float | None], ...] = ()  # re-validated speedup on each timing basis

    def on_basis(self, basis: str) -> Outcome:
        """This outcome with its speedup taken on one timing basis (recorded-only outcomes have just one)."""
        return replace(self, speedup=dict(self.speedups)[basis]) if self.speedups else self

    @property
    def counts(self) -> bool:
        """Counts towards fast_p and the geomean: correct, not suspect, with a real speedup."""
        return self.correct and not self.suspect and usable(self.speedup) and bool(self.speedup)

    @property
    def correct(self) -> bool:
        """Correct by the best evidence: our re-validation when we have it, else the harness."""
        return bool(self.revalidated_correct if self.revalidated_correct is not None else self.recorded_correct)

    @property
    def state(self) -> str:
        if not self.submitted:
            return "no_submission"
        if self.suspect:
            return "suspect"
        if self.correct:
            if self.speedup is None:
                return "correct_unknown"
            return "faster" if self.speedup > 1.0 else "slower"
        if self.verdict in ("compile_error", "runtime_error", "incorrect"):
            return self.verdict
        if self.verdict in ("timeout", "crashed"):
            return "runtime_error"
        return "unknown" if self.verdict in ("unknown", "not_evaluated", "partial") else "incorrect"


def best_per_problem(outcomes: Iterable[Outcome]) -> dict[tuple[int, int, str], Outcome]:
    """Several runs of one problem by one model count once: the best (correct, then fastest)."""
    best: dict[tuple[int, int, str], Outcome] = {}
    for o in outcomes:
        cur = best.get(o.problem)
        if cur is None or _rank(o) > _rank(cur):
            best[o.problem] = o
    return best


def _rank(o: Outcome) -> tuple[bool, bool, float]:
    return (o.counts, o.correct, o.speedup if o.counts and o.speedup is not None else 0.0)


def fast_p(outcomes: list[Outcome], p: float) -> tuple[int, int]:
    """(numerator, denominator): counting runs with speedup strictly above p, over ALL attempted problems."""
    return sum(1 for o in outcomes if o.counts and o.speedup is not None and o.speedup > p), len(outcomes)


def geomean_speedup(outcomes: list[Outcome]) -> tuple[float | None, int]:
    """Geometric mean over counting runs (correct, not suspect, real speedup) and how many that is."""
    xs = [o.speedup for o in outcomes if o.counts and o.speedup is not None]
    if not xs:
        return None, 0
    return statistics.geometric_mean(xs), len(xs)


def _median(xs: list[int]) -> float | None:
    return float(statistics.median(xs)) if xs else None


@dataclass(frozen=True)
class Row:
    model: str
    attempted: int
    compiled: int
    correct_recorded: int
    correct_revalidated: int
    revalidated: int
    fast: dict[float, tuple[int, int]]
    geomean: float | None
    geomean_n: int
    median_turns: float | None
    median_tokens: float | None
    recorded_only: int  # problems whose speedup came from the harness, not from us
    suspect: int = 0  # problems whose best run is suspect: left out of fast_p and the geomean


def leaderboard(outcomes: list[Outcome]) -> list[Row]:
    by_model: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_model.setdefault(o.model, []).append(o)
    rows = []
    for model, runs in by_model.items():
        best = list(best_per_problem(runs).values())
        gm, n = geomean_speedup(best)
        rows.append(Row(
            model=model, attempted=len(best),
            compiled=sum(1 for o in best if o.compiled),
            correct_recorded=sum(1 for o in best if o.recorded_correct),
            correct_revalidated=sum(1 for o in best if o.revalidated_correct),
            revalidated=sum(1 for o in best if o.revalidated_correct is not None),
            fast={p: fast_p(best, p) for p in FAST_P}, geomean=gm, geomean_n=n,
            median_turns=_median([o.turns for o in runs if o.turns is not None]),
            median_tokens=_median([o.tokens for o in runs if o.tokens]),
            recorded_only=sum(1 for o in best if o.speedup_source == "recorded"),
            suspect=sum(1 for o in best if o.suspect),
        ))
    return sorted(rows, key=lambda r: (-r.fast[1.0][0] / max(1, r.fast[1.0][1]), -(r.geomean or 0), r.model))


@dataclass(frozen=True)
class FastCell:
    value: str  # the share, for sorting
    shown: str
    count: str  # "numerator/denominator"


@dataclass(frozen=True)
class LeaderRow:
    """A leaderboard row as the page prints it."""

    model: str
    attempted: int
    compiled: int
    correct_recorded: int
    revalidated_sort: int
    revalidated_shown: str
    fast: tuple[FastCell, ...]
    geomean_sort: str
    geomean_shown: str
    geomean_n: str
    median_turns: str
    median_tokens: str
    recorded_only: int
    suspect: int


def leaderboard_rows(outcomes: list[Outcome]) -> list[LeaderRow]:
    rows = []
    for r in leaderboard(outcomes):
        fast = tuple(FastCell(f"{n / d:.6f}" if d else "0", text.num(n / d if d else 0.0), f"{n}/{d}")
                     for n, d in (r.fast[p] for p in FAST_P))
        rows.append(LeaderRow(
            r.model, r.attempted, r.compiled, r.correct_recorded,
            r.correct_revalidated if r.revalidated else -1,
            f"{r.correct_revalidated} of {r.revalidated} re-validated" if r.revalidated else "— (none re-validated)",
            fast, f"{r.geomean:.6f}" if r.geomean is not None else "", text.speedup(r.geomean), f"n={r.geomean_n}",
            text.num(r.median_turns, 1), text.num(r.median_tokens, 0), r.recorded_only, r.suspect))
    return rows


@dataclass(frozen=True)
class GridCell:
    href: str
    css: str
    title: str
    shown: str
    flagged: bool


def grid_cell(o: Outcome) -> GridCell:
    state = o.state
    recorded_only = o.revalidated_correct is None
    label = STATES[state]
    tip = label + (" · flagged" if o.flagged else "") + (" · not re-validated" if recorded_only else "")
    shown = text.speedup(o.speedup) if state in ("faster", "slower") else label
    return GridCell(o.href, f"s-{state.replace('_', '-')}" + (" recorded" if recorded_only else ""), tip, shown, o.flagged)
