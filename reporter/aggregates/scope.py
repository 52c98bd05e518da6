"""Which runs a table counts, on which timing basis, and each model's best run per problem.

Shared by the leaderboards, the grid and the problem comparisons (`reporter.aggregates` says the rules).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.checks import speedup_reported
from ..core.schema import Basis
from ..core.suspects import STRICT_OWN_SHARE
from ..core.vocab import MISSING_KEY, Source

FAST_P: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
LEADERBOARD_KEYS: tuple[str, ...] = ("benchmark", "level", "configuration")
PROBLEM_KEYS: tuple[str, ...] = ("benchmark", "level", "problem_id", "problem")

DEFAULT_EXCLUDE = "suspect"
DEFAULT_BASIS = Basis.DEVICE


def fast_column(p: float) -> str:
    """The column holding fast_p's share: fast_0.0, fast_1.0, ..."""
    return f"fast_{p:g}" if p != int(p) else f"fast_{p:.1f}"


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs that can be compared: complete, with a level and a problem; a missing benchmark, configuration,
    model or problem becomes "" (`vocab.MISSING_KEY`: an empty name counts as none, so a model really named
    "unknown" stays a model of its own)."""
    ok = frame["complete"].fillna(False) & frame["level"].notna() & frame["problem_id"].notna()
    out = frame.loc[ok].copy()
    for col in ("benchmark", "configuration", "model", "problem"):
        out[col] = out[col].fillna(MISSING_KEY)
    return out


def on_basis(frame: pd.DataFrame, basis: Basis | str = DEFAULT_BASIS) -> pd.DataFrame:
    """The runs with kernel_ms, ref_ms and speedup taken on one timing basis (a `basis` column says which).

    Re-validated runs (`speedup_source` "re-validated") take that basis's figures, unknown where they have
    none; the others keep their recorded figures and source."""
    b = Basis(basis)
    measured = frame["speedup_source"].eq(Source.RE_VALIDATED).fillna(False).astype(bool)
    # From the figures as measured or recorded (`speedup` is null for a suspect run, which exclude=None counts;
    # a hand-made table may give only `speedup`).
    # A recorded time below the hardware floor (`recorded_impossible`) has no speedup and no fraction of SOL here
    # either: the runs table keeps the figure as recorded, and this is where it once came back into the boards.
    possible = ~frame["recorded_impossible"].fillna(False).astype(bool) if "recorded_impossible" in frame else True
    recorded = {"kernel_ms": frame["kernel_ms"], "ref_ms": frame["ref_ms"],
                "speedup": frame["recorded_speedup"].fillna(frame["speedup"]).where(possible)}
    picked = {col: frame[f"{src}_{b.value}{unit}"].where(measured, recorded[col])
              for col, src, unit in (("kernel_ms", "kernel", "_ms"), ("ref_ms", "ref", "_ms"), ("speedup", "speedup", ""))}
    if f"sol_fraction_{b.value}" in frame:  # the kernel's fraction of speed of light on the same basis (`collect.sol`)
        picked["sol"] = frame[f"sol_fraction_{b.value}"].where(measured, frame["recorded_sol_fraction"].where(possible))
        if f"sol_cause_{b.value}" in frame:  # why a fraction is above 1 (the bound was wrong for this run)
            picked["sol_cause"] = frame[f"sol_cause_{b.value}"].where(measured, frame["recorded_sol_cause"])
    return frame.assign(basis=b.value, **picked)


def _restricted(out: pd.DataFrame, revalidated_only: bool) -> pd.DataFrame:
    """Runs on one basis, optionally re-validated ones only, judged by our verdict: before `_excluding`."""
    if revalidated_only:
        out = out.loc[out["revalidated_correct"].notna()].copy()
        out["correct"] = out["revalidated_correct"].astype(bool)
        out["speedup"] = out["speedup"].where(out["speedup_source"] == Source.RE_VALIDATED)
    out["correct"] = out["correct"].fillna(False).astype(bool)
    return out


def _excluding(frame: pd.DataFrame, exclude: str | None) -> pd.DataFrame:
    out = frame.copy()
    out["excluded"] = out[exclude].fillna(False).astype(bool) if exclude is not None else False
    # no speedup for an incorrect or failed kernel, nor an excluded one (exclude=None keeps a suspect's, to count it
    # KernelBench's way)
    reported = [speedup_reported(c, e) for c, e in zip(out["correct"], out["excluded"], strict=True)]
    out["speedup"] = out["speedup"].where(pd.Series(reported, index=out.index, dtype=bool))
    speed = out["speedup"].astype("float64")
    real = speed.notna() & np.isfinite(speed) & (speed > 0)  # NaN, infinite or negative speedups never count
    # a recorded speedup whose reference was timed on another GPU compares two machines: shown and flagged, never counted
    other = out["baseline_other_gpu"] if "baseline_other_gpu" in out else pd.Series(False, index=out.index)
    out["foreign_baseline"] = other.fillna(False).astype(bool) & out["speedup_source"].ne(Source.RE_VALIDATED).fillna(True).astype(bool)
    # A correct run on a problem whose comparison accepts a wrong answer (a weak check) is no win on the default
    # boards; KernelBench's own count (exclude=None) takes it.
    out["weak"] = out["weak_check"].notna() & out["correct"] if "weak_check" in out else False
    out["counts"] = out["correct"] & ~out["excluded"] & real & ~out["foreign_baseline"] & ~(out["weak"] if exclude is not None else False)
    # The strict view (own kernels only): the own-kernel share is a property, measured on re-validated runs only.
    share = out["own_kernel_share"].astype("float64") if "own_kernel_share" in out else pd.Series(np.nan, index=out.index)
    out["own"] = (share >= STRICT_OWN_SHARE).fillna(False).astype(bool)
    out["incomplete"] = out["checks_incomplete"].fillna(False).astype(bool) if "checks_incomplete" in out else False
    return out


def scoped(frame: pd.DataFrame, revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
           basis: Basis | str = DEFAULT_BASIS) -> pd.DataFrame:
    """`comparable` runs on one basis (optionally re-validated ones only) with `excluded` and `counts` added."""
    return _excluding(_restricted(on_basis(comparable(frame), basis), revalidated_only), exclude)


def scopes(frame: pd.DataFrame, revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
           bases: Sequence[Basis] = tuple(Basis)) -> dict[Basis, tuple[pd.DataFrame, pd.DataFrame]]:
    """`scoped` on each of `bases`, with `exclude` and with none (KernelBench's count of a suspect), sharing
    what they have in common: a board with re-measured runs needs all of them."""
    base = comparable(frame)
    out = {}
    for b in bases:
        on = _restricted(on_basis(base, b), revalidated_only)
        out[b] = (_excluding(on, exclude), _excluding(on, None))
    return out


Key = tuple[object, ...]


def column_values(frame: pd.DataFrame, col: str) -> list[Any]:
    """A column as Python values, unknown (<NA>, NaN) as None: the board's sums run over these, since a
    pandas group-by costs more per call than these boards have rows."""
    return [None if v is pd.NA or (isinstance(v, float) and math.isnan(v)) else v for v in frame[col].tolist()]


def key_tuples(frame: pd.DataFrame, cols: Sequence[str]) -> list[Key]:
    return list(zip(*(column_values(frame, c) for c in cols), strict=True)) if cols else [()] * len(frame)


def positions(keys: list[Key]) -> dict[Key, list[int]]:
    """Row positions per key, keys in order of first appearance."""
    out: dict[Key, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return out


def _best_positions(frame: pd.DataFrame, keys: Sequence[str]) -> list[int]:
    counts, correct = frame["counts"].tolist(), frame["correct"].tolist()
    speed, run = column_values(frame, "speedup"), [str(r) for r in frame["run_id"].tolist()]
    order = sorted(range(len(frame)), key=lambda i: (not counts[i], not correct[i],
                                                     -(speed[i] if counts[i] else 0.0), run[i]))
    group, seen, picked = key_tuples(frame, keys), set(), []
    for i in order:
        if group[i] not in seen:
            seen.add(group[i])
            picked.append(i)
    return picked


def best_per_problem(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS) -> pd.DataFrame:
    """One row per group × model × problem: the best run (counting, then correct, then fastest, then first by id),
    in that order."""
    return frame.iloc[_best_positions(frame, list(dict.fromkeys([*by, "model", *PROBLEM_KEYS])))]
