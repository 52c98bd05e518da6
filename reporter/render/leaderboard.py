"""Aggregates across runs: leaderboard rows, fast_p, geometric means, grid states.

Pure arithmetic over per-run outcomes, so the denominators can be pinned by tests. A re-validated
figure is used where one exists; otherwise the recorded one, and the outcome says so. A suspect run
(an error-level static cheat finding no reviewer cleared) and a speedup that is not a real number
(NaN, infinite, negative) never count towards fast_p or the geomean; they stay in the denominator.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable

from ..checks import usable

FAST_P = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)

# Grid states, in the order of the legend.
STATES = {
    "suspect": "suspect (static cheat finding)",
    "faster": "correct and faster",
    "slower": "correct but slower",
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
            return "faster" if self.speedup is not None and self.speedup > 1.0 else "slower"
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
    return math.exp(math.fsum(math.log(x) for x in xs) / len(xs)), len(xs)


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
