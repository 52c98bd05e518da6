"""The problem × model grid, the per-problem comparison and the index's counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.schema import Basis
from ..core.vocab import MISSING_KEY, RUNTIME_FAILURES, GridState, RunVerdict, Source
from .scope import DEFAULT_BASIS, DEFAULT_EXCLUDE, PROBLEM_KEYS, best_per_problem, scoped

# Grid states, in the order of the legend.
STATES: dict[GridState, str] = {
    GridState.REWARD_HACK: "reward hack (reviewer's verdict)",
    GridState.CONTAMINATION: "contamination (reviewer's verdict)",
    GridState.SUSPECT: "suspect (cheat finding)",
    GridState.FASTER: "correct and faster",
    GridState.SLOWER: "correct but slower",
    GridState.CORRECT: "correct, speedup unknown",
    GridState.INCORRECT: "incorrect",
    GridState.COMPILE_ERROR: "failed to compile",
    GridState.RUNTIME_ERROR: "runtime error / crash",
    GridState.NO_SUBMISSION: "no submission",
    GridState.UNKNOWN: "no verdict recorded",
}


def states(frame: pd.DataFrame) -> pd.Series:
    """Each run's grid state (a key of STATES). An unknown speedup is "correct", never "slower"."""
    correct = frame["correct"].fillna(False).astype(bool)
    submitted = frame["submitted"].fillna(False).astype(bool)
    excluded = frame["excluded"] if "excluded" in frame else pd.Series(False, index=frame.index)
    hack = frame["reviewed_hack"].fillna(False) if "reviewed_hack" in frame else pd.Series(False, index=frame.index)
    copied = frame["review"].eq(GridState.CONTAMINATION).fillna(False) if "review" in frame else pd.Series(False, index=frame.index)
    verdict = frame["verdict"].fillna(RunVerdict.UNKNOWN).astype(str)
    speed = frame["speedup"]
    choices = [
        (~submitted, GridState.NO_SUBMISSION),
        (hack.astype(bool), GridState.REWARD_HACK),
        (copied.astype(bool), GridState.CONTAMINATION),
        (excluded.astype(bool), GridState.SUSPECT),
        (correct & speed.gt(1.0), GridState.FASTER),
        (correct & speed.le(1.0), GridState.SLOWER),
        (correct, GridState.CORRECT),
        (verdict.isin([RunVerdict.COMPILE_ERROR, RunVerdict.RUNTIME_ERROR, RunVerdict.INCORRECT]), verdict),
        (verdict.isin(RUNTIME_FAILURES), GridState.RUNTIME_ERROR),
        (verdict.isin([RunVerdict.UNKNOWN, RunVerdict.NOT_EVALUATED, RunVerdict.PARTIAL]), GridState.UNKNOWN),
    ]
    picked = np.select([c.to_numpy() for c, _ in choices],
                       [v.to_numpy() if isinstance(v, pd.Series) else v for _, v in choices], default=GridState.INCORRECT)
    return pd.Series(picked, index=frame.index, name="state", dtype="string")


def grid(frame: pd.DataFrame, revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
         basis: Basis | str = DEFAULT_BASIS) -> pd.DataFrame:
    """Every comparable run with its grid state, ordered by problem, then model, then run id."""
    runs = scoped(frame, revalidated_only, exclude, basis)
    runs = runs.assign(state=states(runs))
    return runs.sort_values([*PROBLEM_KEYS, "model", "run_id"], kind="stable").reset_index(drop=True)


def grid_table(frame: pd.DataFrame, value: str = "speedup", revalidated_only: bool = False,
               exclude: str | None = DEFAULT_EXCLUDE, basis: Basis | str = DEFAULT_BASIS) -> pd.DataFrame:
    """Problem × model, one cell per model's best run of the problem (`value`: speedup, state, ...)."""
    best = best_per_problem(grid(frame, revalidated_only, exclude, basis), ())
    return best.pivot(index=list(PROBLEM_KEYS), columns="model", values=value)


def problems(frame: pd.DataFrame, revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
             basis: Basis | str = DEFAULT_BASIS, by: Sequence[str] = PROBLEM_KEYS) -> pd.DataFrame:
    """Per-problem comparison: runs, models, correct runs, re-validated runs, best correct speedup.
    `by` names a problem (the site's problem pages leave out the benchmark: level, problem id and file)."""
    runs = scoped(frame, revalidated_only, exclude, basis)
    runs = runs.assign(_correct_speed=runs["speedup"].where(runs["counts"]))
    out = runs.groupby(list(by), dropna=False).agg(
        runs=("run_id", "size"), models=("model", "nunique"), correct=("correct", "sum"),
        revalidated=("revalidated_correct", "count"), best_speedup=("_correct_speed", "max"))
    return out.reset_index().astype({"runs": "int64", "models": "int64", "correct": "int64", "revalidated": "int64"})


def counts(frame: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Index-page counts per group, over every run (partial ones too): runs, models, correct, re-validated, flags."""
    f = frame.assign(**{c: frame[c].fillna(MISSING_KEY) for c in by},
                     _correct=frame["verdict"].eq(RunVerdict.CORRECT).fillna(False),
                     _reval=frame["verdict_source"].eq(Source.RE_VALIDATED).fillna(False))
    out = f.groupby(list(by), dropna=False).agg(
        runs=("run_id", "size"), models=("model", "nunique"), correct=("_correct", "sum"),
        revalidated=("_reval", "sum"), flags=("flags", "sum"))
    return out.reset_index().astype({"runs": "int64", "models": "int64", "correct": "int64", "revalidated": "int64",
                                     "flags": "int64"})
