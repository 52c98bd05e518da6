"""The leaderboard table: a row per group × model with its counts, fast_p, geomean and denominators."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.checks import fast_n
from ..core.schema import Basis
from ..core.units import SPEEDUP_DECIMALS
from ..core.vocab import Source
from .denominators import denominator_map
from .scope import DEFAULT_BASIS, DEFAULT_EXCLUDE, FAST_P, LEADERBOARD_KEYS, Key, best_per_problem, column_values, fast_column, key_tuples, positions, scoped


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def _mean_log(values: list[float]) -> float:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else math.nan


COUNT_COLUMNS: tuple[str, ...] = (
    "attempted", "submitted", "compiled", "correct", "correct_recorded", "correct_revalidated", "revalidated",
    "recorded_only", "baseline_other_gpu", "excluded", "weak_check", "checks_incomplete", "compile_n",
    "compile_fast_1.0_n", "geomean_n", "strict_fast_1.0_n", "strict_measured")


def _group_row(b: dict[str, list[Any]], rows: list[int], fast_ps: Sequence[float]) -> dict[str, Any]:
    """One model's counts over its best run per problem (`b`: best_per_problem's columns as values)."""
    def true(col: str) -> int:
        return sum(1 for i in rows if b[col][i] is True)
    speeds = [b["speedup"][i] for i in rows if b["counts"][i]]  # counting runs: a real speedup each (scoped)
    compiled = [c for i in rows if b["counts"][i] and (c := b["recorded_compile_speedup"][i]) is not None and c > 0]
    out: dict[str, Any] = {
        "attempted": len(rows), "submitted": true("submitted"), "compiled": true("compiled"), "correct": true("correct"),
        "correct_recorded": true("recorded_correct"), "correct_revalidated": true("revalidated_correct"),
        "revalidated": sum(1 for i in rows if b["revalidated_correct"][i] is not None),
        "recorded_only": sum(1 for i in rows if b["speedup_source"][i] == Source.RECORDED),
        "baseline_other_gpu": true("foreign_baseline"), "excluded": true("excluded"), "weak_check": true("weak"),
        "checks_incomplete": true("incomplete"),
        "compile_n": len(compiled), "compile_fast_1.0_n": fast_n(compiled, 1.0), "geomean_n": len(speeds),
        # the strict view: fast_1 over the runs whose own kernels do at least STRICT_OWN_SHARE of the kernel time
        "strict_fast_1.0_n": fast_n([b["speedup"][i] for i in rows if b["counts"][i] and b["own"][i]], 1.0),
        "strict_measured": sum(1 for i in rows if b["own_kernel_share"][i] is not None)}
    out |= {f"{fast_column(p)}_n": fast_n(speeds, p) for p in fast_ps}
    # fraction of speed of light; one under T_SOL with a named cause (`sol_cause`) means the bound was wrong for that
    # run: it is counted apart (sol_above_n), never in the geomean
    sols = [s for i in rows if b["counts"][i] and (s := b["sol"][i]) is not None and s > 0 and b["sol_cause"][i] is None]
    above = sum(1 for i in rows if b["counts"][i] and b["sol"][i] is not None and b["sol_cause"][i] is not None)
    return out | {"geomean": _mean_log(speeds), "compile_geomean": _mean_log(compiled), "sol_geomean": _mean_log(sols),
                  "sol_n": len(sols), "sol_above_n": above}


BEST_COLUMNS: tuple[str, ...] = ("submitted", "compiled", "correct", "recorded_correct", "revalidated_correct",
                                 "speedup_source", "foreign_baseline", "excluded", "weak", "incomplete", "own",
                                 "own_kernel_share", "counts", "speedup", "recorded_compile_speedup", "sol", "sol_cause")


def _board_rows(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> dict[Key, dict[str, Any]]:
    """The counts of `leaderboard`, from its scoped runs, by each model's best run per problem; the effort
    columns (reward hacks, median turns and tokens) over all its runs."""
    keys = [*by, "model"]
    best = best_per_problem(runs, by)
    b = {c: column_values(best, c) if c in best else [None] * len(best) for c in BEST_COLUMNS}  # "sol": runs tables before it
    out = {k: _group_row(b, rows, fast_ps) for k, rows in positions(key_tuples(best, keys)).items()}
    hack, turns, tokens = column_values(runs, "reviewed_hack"), column_values(runs, "turns"), column_values(runs, "tokens_total")
    for k, rows in positions(key_tuples(runs, keys)).items():
        out[k] |= {"reward_hacks": sum(1 for i in rows if hack[i] is True),
                   "median_turns": _median([float(turns[i]) for i in rows if turns[i] is not None]),
                   "median_tokens": _median([float(tokens[i]) for i in rows if tokens[i] is not None and tokens[i] > 0])}  # 0: "not counted"
    return out


# The torch.compile comparison counted KernelBench's way too (suspect runs and weak-check wins in)
COMPILE_WITH_SUSPECTS = ("compile_geomean_with_suspects", "compile_with_suspects_n", "compile_fast_1.0_with_suspects_n")


def _with_suspects(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> dict[Key, dict[str, Any]]:
    """fast_p's numerators and the geomean with suspect runs counted (`fast_<p>_with_suspects_n`,
    `geomean_with_suspects`): KernelBench's own scoring, by each model's best run per problem."""
    best = best_per_problem(runs, by)
    counts, speed, comp = best["counts"].tolist(), column_values(best, "speedup"), column_values(best, "recorded_compile_speedup")
    out: dict[Key, dict[str, Any]] = {}
    for k, rows in positions(key_tuples(best, [*by, "model"])).items():
        speeds = [speed[i] for i in rows if counts[i]]
        compiled = [c for i in rows if counts[i] and (c := comp[i]) is not None and c > 0]
        out[k] = {f"{fast_column(p)}_with_suspects_n": fast_n(speeds, p) for p in fast_ps}
        out[k] |= {"geomean_with_suspects": _mean_log(speeds), "geomean_with_suspects_n": len(speeds),
                   "compile_geomean_with_suspects": _mean_log(compiled), "compile_with_suspects_n": len(compiled),
                   "compile_fast_1.0_with_suspects_n": fast_n(compiled, 1.0)}
    return out


RANK_RULE = ("ranked by the fast₁ share exactly (6/250 above 5/250, though both print as 0.02), then by the geometric "
             "mean as printed; rows equal on both share a rank and are listed by model name")


def _standing(r: dict[str, Any], order: str) -> tuple[float, bool, float]:
    """What a row is ranked on (`RANK_RULE`): its fast_p share exactly (a count over a denominator: rounding it to the
    printed two decimals once ranked 5/250 above 6/250 on a better geomean), and its geomean as the pages print it."""
    geo = r["geomean"]
    return (-r[order], math.isnan(geo), -round(geo, SPEEDUP_DECIMALS) if not math.isnan(geo) else 0.0)


def _ranked(rows: list[dict[str, Any]], by: Sequence[str], order: str) -> list[dict[str, Any]]:
    """Sorted by the group, then `RANK_RULE`; each row gets its `rank` in its group (1, 2, 2, 4: a tie shares one)."""
    out = sorted(rows, key=lambda r: (*(r[c] for c in by), *_standing(r, order), r["model"]))
    start = 0
    for i, r in enumerate(out):
        prev = out[i - 1] if i else None
        if prev is None or any(prev[c] != r[c] for c in by):
            start = i  # the first row of a group
        r["rank"] = prev["rank"] if prev is not None and i > start and _standing(prev, order) == _standing(r, order) \
            else i - start + 1
    return out


def leaderboard(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS, fast_ps: Sequence[float] = FAST_P,
                revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
                basis: Basis | str = DEFAULT_BASIS, space: pd.DataFrame | None = None) -> pd.DataFrame:
    """A row per group × model: denominators, counts, fast_p (share and numerator) and the geometric mean.

    `space` is the recorded problem set (`frames.load_universe`): fast_p divides by its problems (`problems`), and
    a problem with no run counts as `not_attempted`. `fast_<p>_with_suspects` is fast_p with the suspect runs and
    the correct runs on weak-check problems counted (KernelBench's own scoring, which has neither);
    `strict_fast_1.0_n` counts only runs whose own kernels do at least `suspects.STRICT_OWN_SHARE` of the time; `compile_*` compare with torch.compile
    where the harness recorded a torch.compile baseline."""
    runs = scoped(frame, revalidated_only, exclude, basis)
    return board_table(runs, scoped(frame, revalidated_only, None, basis) if exclude is not None else None, by, fast_ps, space)


def board_table(runs: pd.DataFrame, with_suspects: pd.DataFrame | None, by: Sequence[str] = LEADERBOARD_KEYS,
                fast_ps: Sequence[float] = FAST_P, space: pd.DataFrame | None = None) -> pd.DataFrame:
    """`leaderboard` from its `scoped` runs, and the same runs scoped with nothing excluded (`exclude=None`)
    for the `fast_<p>_with_suspects` columns, or None to leave them out. The site scopes each board's runs
    once per basis and passes them here."""
    den = denominator_map(runs, by, space)
    kb = _with_suspects(with_suspects, by, fast_ps) if with_suspects is not None else {}
    suspects = [*(f"{fast_column(p)}_with_suspects{n}" for p in fast_ps for n in ("_n", "")), "geomean_with_suspects",
                "geomean_with_suspects_n", *COMPILE_WITH_SUSPECTS] if with_suspects is not None else []
    rows = []
    for k, counted in _board_rows(runs, by, fast_ps).items():
        n, missing, levels, known = den[k]
        row = {**dict(zip([*by, "model"], k, strict=True)), **counted,
               "problems": n, "not_attempted": missing, "levels_missing": levels, "universe_known": known}
        row |= {fast_column(p): counted[f"{fast_column(p)}_n"] / n for p in fast_ps}
        for p in fast_ps if suspects else ():
            col = f"{fast_column(p)}_with_suspects_n"
            row |= {col: kb[k][col], f"{fast_column(p)}_with_suspects": kb[k][col] / n}
        row |= {c: kb[k][c] for c in ("geomean_with_suspects", "geomean_with_suspects_n", *COMPILE_WITH_SUSPECTS) if suspects}
        rows.append(row)
    order = fast_column(1.0) if 1.0 in fast_ps else fast_column(fast_ps[-1])
    cols = [*by, "model", "rank", *COUNT_COLUMNS, *(f"{fast_column(p)}_n" for p in fast_ps), "geomean", "compile_geomean",
            "sol_geomean", "sol_n", "sol_above_n",
            "reward_hacks", "median_turns", "median_tokens", "problems", "not_attempted", "levels_missing", "universe_known",
            *(fast_column(p) for p in fast_ps),
            *suspects]
    ranked = _ranked(rows, by, order)
    ints = ["rank", *COUNT_COLUMNS, *(c for c in cols if c.endswith("_n")), "reward_hacks", "problems", "not_attempted"]
    floats = ["geomean", "compile_geomean", "sol_geomean",
              "geomean_with_suspects", "compile_geomean_with_suspects", "median_turns", "median_tokens", *(c for c in cols if c.startswith("fast_") and not c.endswith("_n"))]
    dtypes = ({c: runs[c].dtype for c in by if c == "level"} | dict.fromkeys(ints, "int64")
              | dict.fromkeys(floats, "float64") | {"universe_known": "bool"})
    # typed column by column, numbers as numpy arrays: a frame of rows cast afterwards cost ~8x more, mostly
    # pandas' fixed cost per column (a build makes 12 tables per leaderboard group, of a few rows each)
    return pd.DataFrame({c: _column([r[c] for r in ranked], dtypes.get(c)) for c in cols}, columns=cols)


def _column(values: list[Any], dtype: Any) -> Any:
    if dtype is None:  # inferred, as a frame of rows infers it; no rows: object, as there
        return values if values else np.array([], dtype=object)
    return np.array(values, dtype=dtype) if dtype in ("int64", "float64", "bool") else pd.array(values, dtype=dtype)
