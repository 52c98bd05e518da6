"""Fraction of speed of light across runs: the cross-GPU board.

A run's fraction of SOL (`sol_fraction`, `collect.sol`) divides the T_SOL of the GPU that took its time by that
time, so runs recorded on an L40S and runs re-measured on an H200 sit on one scale; a speedup over eager PyTorch
cannot do that. The cross-GPU board ranks each model by the geometric mean of its best fraction per problem, over
the problems where it has one (correct, not suspect, a work count and a GPU of the peak table), and says on which
GPUs its times were taken.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..core.vocab import Source
from .scope import column_values, comparable, key_tuples, positions

CROSS_GPU_KEYS: tuple[str, ...] = ("benchmark", "configuration")
CROSS_GPU_RULE = ("ranked by the geometric mean of each model's best fraction of speed of light per problem (T_SOL on "
                  "the GPU that took the time, divided by that time), whatever GPU took it; rows equal to three "
                  "significant figures share a rank and are listed by model name")
SOL_GEOMEAN_RULE = ("the geometric mean of the counting runs' fractions of speed of light (T_SOL ÷ the time, each on "
                    "the GPU that took it, on this basis), where the problem's work was counted and the GPU is in the peak table")
CROSS_GPU_COLUMNS: tuple[str, ...] = (*CROSS_GPU_KEYS, "model", "rank", "problems", "sol_geomean", "sol_median", "sol_best",
                                      "gpus", "gpu_count", "gpu_names", "above")
ABOVE_RULE = ("a fraction above 100% (a time under T_SOL with a named cause: tensor cores, less work than the reference's, an "
              "unflushed L2) means the bound was wrong for that run: it is counted apart and in no geomean, median or best")


def _mean_log(values: list[float]) -> float:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else math.nan


def _gpus(names: list[str], sources: list[str]) -> tuple[str, tuple[str, ...]]:
    """"H200 SXM 141GB re-measured ×9 · L40S recorded ×3", and those GPUs' names (a page counts GPUs from these,
    never from the label)."""
    counts: dict[tuple[str, str], int] = {}
    for name, src in zip(names, sources, strict=True):
        how = "re-measured" if src == Source.RE_VALIDATED else "recorded"
        counts[(name, how)] = counts.get((name, how), 0) + 1
    return " · ".join(f"{n} {how} ×{c}" for (n, how), c in sorted(counts.items())), tuple(sorted({n for n, _ in counts}))


def _shown(row: dict[str, Any]) -> str:
    return f"{row['sol_geomean']:.3g}"  # what the page prints, which the rank follows


def cross_gpu(frame: pd.DataFrame, by: Sequence[str] = CROSS_GPU_KEYS) -> pd.DataFrame:
    """A row per group × model: its problems with a fraction of SOL, their geomean, median and best, and the GPUs."""
    runs = comparable(frame)
    runs = runs.loc[runs["sol_fraction"].notna() & (runs["sol_fraction"].astype("float64") > 0)]
    cause = runs["sol_cause"].notna() if "sol_cause" in runs else pd.Series(False, index=runs.index)
    above = {k: len(at) for k, at in positions(key_tuples(runs.loc[cause], [*by, "model"])).items()}  # `ABOVE_RULE`
    runs = runs.loc[~cause]
    keys = [*by, "model", "level", "problem_id", "problem"]
    frac, gpu, src = column_values(runs, "sol_fraction"), column_values(runs, "sol_gpu"), column_values(runs, "speedup_source")
    best: dict[tuple[Any, ...], int] = {}
    for i, k in enumerate(key_tuples(runs, keys)):  # each model's best run per problem: the highest fraction
        if k not in best or frac[i] > frac[best[k]]:
            best[k] = i
    picked = sorted(best.values())
    groups = positions([key_tuples(runs, [*by, "model"])[i] for i in picked])
    rows = []
    for k, at in groups.items():
        idx = [picked[j] for j in at]
        values = [float(frac[i]) for i in idx]
        label, names = _gpus([str(gpu[i]) for i in idx], [str(src[i]) for i in idx])
        rows.append({**dict(zip([*by, "model"], k, strict=True)), "problems": len(idx), "sol_geomean": _mean_log(values),
                     "sol_median": statistics.median(values), "sol_best": max(values), "gpus": label, "gpu_count": len(names),
                     "gpu_names": names,
                     "above": above.get(k, 0)})
    rows.sort(key=lambda r: (*(r[c] for c in by), -float(_shown(r)), r["model"]))
    start = 0
    for i, r in enumerate(rows):
        prev = rows[i - 1] if i else None
        if prev is None or any(prev[c] != r[c] for c in by):
            start = i  # the first row of a group
        r["rank"] = prev["rank"] if prev is not None and i > start and _shown(prev) == _shown(r) else i - start + 1
    return pd.DataFrame(rows, columns=list(CROSS_GPU_COLUMNS))
