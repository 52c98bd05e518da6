"""The site's numbers across runs, as pandas group-bys over `reporter.load(DATA)`.

Leaderboards (fast_p, geometric mean, denominators, re-validated counts), the problem × model grid and
per-problem comparisons. The renderer calls these functions and notebook users can too, so a page and
a notebook never disagree. Rules, once:

- Only complete runs with a level and a problem take part (`comparable`).
- A model that attempted a problem several times counts once, by its best run: correct first, then fastest.
- fast_p follows KernelBench: over ALL attempted problems, the share whose kernel is correct and whose
  speedup is strictly greater than p. fast_0 is the correctness rate only where every correct run has
  a speedup; a correct run with unknown speedup is attempted and correct but never "fast".
- The geometric mean covers correct runs with a known speedup; its `geomean_n` says how many.
- `speedup` is our re-validation's where one exists, else the recorded one (`speedup_source`), and null for
  a kernel that is incorrect, failed or excluded (`checks.speedup_reported`).
  `revalidated_only=True` keeps only re-validated runs and their own verdicts and speedups.
- `basis` picks the timing basis (device, graph or wall; default device, the one that repeats). A
  re-validated run takes kernel_ms, ref_ms and speedup on that basis; where it has no figure there (a
  call that was not capturable as a CUDA graph) its speedup is unknown: correct but never "slower", never
  counting. A run we did not re-validate keeps its recorded figures, whatever the basis.
- A run counts towards fast_p and the geomean when it is correct, not excluded and has a real speedup
  (finite, above 0). `exclude` names a boolean column, by default `suspect` (an error-level cheat finding,
  static or measured, that no reviewer cleared, or a reviewer's reward-hack verdict): those runs stay
  attempted (in the denominator) but never count; `reward_hacks` counts a group's runs reviewed as hacks.
  `exclude=None` counts them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .core.checks import fast_n, speedup_reported
from .core.schema import Basis
from .core.vocab import MISSING_KEY, RUNTIME_FAILURES, GridState, RunVerdict, Source

FAST_P: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
LEADERBOARD_KEYS: tuple[str, ...] = ("benchmark", "level", "configuration")
PROBLEM_KEYS: tuple[str, ...] = ("benchmark", "level", "problem_id", "problem")

DEFAULT_EXCLUDE = "suspect"
DEFAULT_BASIS = Basis.DEVICE

# Grid states, in the order of the legend.
STATES: dict[GridState, str] = {
    GridState.REWARD_HACK: "reward hack (reviewer's verdict)",
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
    recorded = {"kernel_ms": frame["kernel_ms"], "ref_ms": frame["ref_ms"],
                "speedup": frame["recorded_speedup"].fillna(frame["speedup"])}
    picked = {col: frame[f"{src}_{b.value}{unit}"].where(measured, recorded[col])
              for col, src, unit in (("kernel_ms", "kernel", "_ms"), ("ref_ms", "ref", "_ms"), ("speedup", "speedup", ""))}
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
    out["counts"] = out["correct"] & ~out["excluded"] & real
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


def _values(frame: pd.DataFrame, col: str) -> list[Any]:
    """A column as Python values, unknown (<NA>, NaN) as None: the board's sums run over these, since a
    pandas group-by costs more per call than these boards have rows."""
    return [None if v is pd.NA or (isinstance(v, float) and math.isnan(v)) else v for v in frame[col].tolist()]


def _keys(frame: pd.DataFrame, cols: Sequence[str]) -> list[Key]:
    return list(zip(*(_values(frame, c) for c in cols), strict=True)) if cols else [()] * len(frame)


def _best_positions(frame: pd.DataFrame, keys: Sequence[str]) -> list[int]:
    counts, correct = frame["counts"].tolist(), frame["correct"].tolist()
    speed, run = _values(frame, "speedup"), [str(r) for r in frame["run_id"].tolist()]
    order = sorted(range(len(frame)), key=lambda i: (not counts[i], not correct[i],
                                                     -(speed[i] if counts[i] else 0.0), run[i]))
    group, seen, picked = _keys(frame, keys), set(), []
    for i in order:
        if group[i] not in seen:
            seen.add(group[i])
            picked.append(i)
    return picked


def best_per_problem(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS) -> pd.DataFrame:
    """One row per group × model × problem: the best run (counting, then correct, then fastest, then first by id),
    in that order."""
    return frame.iloc[_best_positions(frame, list(dict.fromkeys([*by, "model", *PROBLEM_KEYS])))]


def _in_scope(run_id: str, scope: str) -> bool:
    return not scope or run_id == scope or run_id.startswith(f"{scope}/")


def _groups(keys: list[Key]) -> dict[Key, list[int]]:
    """Row positions per key, keys in order of first appearance."""
    out: dict[Key, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return out


Problem = tuple[str, int, int]
Denominator = tuple[int, int, str, bool]  # problems, not_attempted, levels_missing, universe_known


def _denominators(runs: pd.DataFrame, by: Sequence[str], space: pd.DataFrame | None) -> dict[Key, Denominator]:
    sets: dict[str, set[Problem]] = {}
    if space is not None:
        for scope, bench, level, pid in zip(space["scope"], space["benchmark"], space["level"], space["problem_id"], strict=True):
            sets.setdefault(str(scope), set()).add((str(bench), int(level), int(pid)))
    problem = list(zip((str(b) for b in runs["benchmark"]), (int(v) for v in runs["level"]),
                       (int(v) for v in runs["problem_id"]), strict=True))
    run_ids, models = [str(r) for r in runs["run_id"]], _values(runs, "model")
    out: dict[Key, Denominator] = {}
    for gkey, rows in _groups(_keys(runs, by)).items():
        levels = {problem[i][:2] for i in rows}
        known = {k for scope, probs in sets.items() if any(_in_scope(run_ids[i], scope) for i in rows)
                 for k in probs if k[:2] in levels}
        every = known | {problem[i] for i in rows}
        for model, mrows in _groups([(models[i],) for i in rows]).items():
            tried = {problem[rows[j]] for j in mrows}
            n = len(every) if known else len(tried)
            lacks = sorted({lv for _, lv, _ in known} - {lv for _, lv, _ in tried})
            out[(*gkey, *model)] = (n, n - len(tried), " ".join(f"L{lv}" for lv in lacks), bool(known))
    return out


def denominators(runs: pd.DataFrame, by: Sequence[str], space: pd.DataFrame | None) -> pd.DataFrame:
    """Per group × model: `problems` (fast_p's n), `not_attempted` and `levels_missing`.

    n is the group's problem set: every recorded problem of the group's benchmark and levels that applies to
    its runs, plus any problem a run attempted outside it, the same n for every model (KernelBench divides by
    the level's problems). Without a recorded set, n is the model's attempted problems, as before."""
    keys = [*by, "model"]
    rows = [(*k, *d) for k, d in _denominators(runs, by, space).items()]
    cols = [*keys, "problems", "not_attempted", "levels_missing", "universe_known"]
    return pd.DataFrame(rows, columns=cols).set_index(keys)


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def _mean_log(values: list[float]) -> float:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else math.nan


COUNT_COLUMNS: tuple[str, ...] = (
    "attempted", "submitted", "compiled", "correct", "correct_recorded", "correct_revalidated", "revalidated",
    "recorded_only", "baseline_other_gpu", "excluded", "compile_n", "compile_fast_1.0_n", "geomean_n")


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
        "baseline_other_gpu": true("baseline_other_gpu"), "excluded": true("excluded"),
        "compile_n": len(compiled), "compile_fast_1.0_n": fast_n(compiled, 1.0), "geomean_n": len(speeds)}
    out |= {f"{fast_column(p)}_n": fast_n(speeds, p) for p in fast_ps}
    return out | {"geomean": _mean_log(speeds), "compile_geomean": _mean_log(compiled)}


BEST_COLUMNS: tuple[str, ...] = ("submitted", "compiled", "correct", "recorded_correct", "revalidated_correct",
                                 "speedup_source", "baseline_other_gpu", "excluded", "counts", "speedup",
                                 "recorded_compile_speedup")


def _board_rows(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> dict[Key, dict[str, Any]]:
    """The counts of `leaderboard`, from its scoped runs, by each model's best run per problem; the effort
    columns (reward hacks, median turns and tokens) over all its runs."""
    keys = [*by, "model"]
    best = best_per_problem(runs, by)
    b = {c: _values(best, c) for c in BEST_COLUMNS}
    out = {k: _group_row(b, rows, fast_ps) for k, rows in _groups(_keys(best, keys)).items()}
    hack, turns, tokens = _values(runs, "reviewed_hack"), _values(runs, "turns"), _values(runs, "tokens_total")
    for k, rows in _groups(_keys(runs, keys)).items():
        out[k] |= {"reward_hacks": sum(1 for i in rows if hack[i] is True),
                   "median_turns": _median([float(turns[i]) for i in rows if turns[i] is not None]),
                   "median_tokens": _median([float(tokens[i]) for i in rows if tokens[i] is not None and tokens[i] > 0])}  # 0: "not counted"
    return out


def _fast_counts(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> dict[Key, dict[str, int]]:
    """fast_p's numerators alone (`fast_<p>_with_suspects_n`), by each model's best run per problem."""
    best = best_per_problem(runs, by)
    counts, speed = best["counts"].tolist(), _values(best, "speedup")
    out: dict[Key, dict[str, int]] = {}
    for k, rows in _groups(_keys(best, [*by, "model"])).items():
        speeds = [speed[i] for i in rows if counts[i]]
        out[k] = {f"{fast_column(p)}_with_suspects_n": fast_n(speeds, p) for p in fast_ps}
    return out


def _ranked(rows: list[dict[str, Any]], by: Sequence[str], order: str) -> list[dict[str, Any]]:
    """Sorted by the group, then fast_p (highest first), geomean (highest first, unknown last), model."""
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        fast, geo = r[order], r["geomean"]
        return (*(r[c] for c in by), -fast, math.isnan(geo), -geo if not math.isnan(geo) else 0.0, r["model"])
    return sorted(rows, key=key)


def leaderboard(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS, fast_ps: Sequence[float] = FAST_P,
                revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
                basis: Basis | str = DEFAULT_BASIS, space: pd.DataFrame | None = None) -> pd.DataFrame:
    """A row per group × model: denominators, counts, fast_p (share and numerator) and the geometric mean.

    `space` is the recorded problem set (`frames.load_universe`): fast_p divides by its problems (`problems`), and
    a problem with no run counts as `not_attempted`. `fast_<p>_with_suspects` is fast_p with the suspect runs
    counted (KernelBench's own scoring, which has no cheat checks); `compile_*` compare with torch.compile
    where the harness recorded a torch.compile baseline."""
    runs = scoped(frame, revalidated_only, exclude, basis)
    return board_table(runs, scoped(frame, revalidated_only, None, basis) if exclude is not None else None, by, fast_ps, space)


def board_table(runs: pd.DataFrame, with_suspects: pd.DataFrame | None, by: Sequence[str] = LEADERBOARD_KEYS,
                fast_ps: Sequence[float] = FAST_P, space: pd.DataFrame | None = None) -> pd.DataFrame:
    """`leaderboard` from its `scoped` runs, and the same runs scoped with nothing excluded (`exclude=None`)
    for the `fast_<p>_with_suspects` columns, or None to leave them out. The site scopes each board's runs
    once per basis and passes them here."""
    den = _denominators(runs, by, space)
    kb = _fast_counts(with_suspects, by, fast_ps) if with_suspects is not None else {}
    suspects = [f"{fast_column(p)}_with_suspects{n}" for p in fast_ps for n in ("_n", "")] if with_suspects is not None else []
    rows = []
    for k, counted in _board_rows(runs, by, fast_ps).items():
        n, missing, levels, known = den[k]
        row = {**dict(zip([*by, "model"], k, strict=True)), **counted,
               "problems": n, "not_attempted": missing, "levels_missing": levels, "universe_known": known}
        row |= {fast_column(p): counted[f"{fast_column(p)}_n"] / n for p in fast_ps}
        for p in fast_ps if suspects else ():
            col = f"{fast_column(p)}_with_suspects_n"
            row |= {col: kb[k][col], f"{fast_column(p)}_with_suspects": kb[k][col] / n}
        rows.append(row)
    order = fast_column(1.0) if 1.0 in fast_ps else fast_column(fast_ps[-1])
    cols = [*by, "model", *COUNT_COLUMNS, *(f"{fast_column(p)}_n" for p in fast_ps), "geomean", "compile_geomean",
            "reward_hacks", "median_turns", "median_tokens", "problems", "not_attempted", "levels_missing", "universe_known",
            *(fast_column(p) for p in fast_ps),
            *suspects]
    ranked = _ranked(rows, by, order)
    ints = [*COUNT_COLUMNS, *(c for c in cols if c.endswith("_n")), "reward_hacks", "problems", "not_attempted"]
    floats = ["geomean", "compile_geomean", "median_turns", "median_tokens", *(c for c in cols if c.startswith("fast_") and not c.endswith("_n"))]
    dtypes = ({c: runs[c].dtype for c in by if c == "level"} | dict.fromkeys(ints, "int64")
              | dict.fromkeys(floats, "float64") | {"universe_known": "bool"})
    # typed column by column, numbers as numpy arrays: a frame of rows cast afterwards cost ~8x more, mostly
    # pandas' fixed cost per column (a build makes 12 tables per leaderboard group, of a few rows each)
    return pd.DataFrame({c: _column([r[c] for r in ranked], dtypes.get(c)) for c in cols}, columns=cols)


def _column(values: list[Any], dtype: Any) -> Any:
    if dtype is None:  # inferred, as a frame of rows infers it; no rows: object, as there
        return values if values else np.array([], dtype=object)
    return np.array(values, dtype=dtype) if dtype in ("int64", "float64", "bool") else pd.array(values, dtype=dtype)


def states(frame: pd.DataFrame) -> pd.Series:
    """Each run's grid state (a key of STATES). An unknown speedup is "correct", never "slower"."""
    correct = frame["correct"].fillna(False).astype(bool)
    submitted = frame["submitted"].fillna(False).astype(bool)
    excluded = frame["excluded"] if "excluded" in frame else pd.Series(False, index=frame.index)
    hack = frame["reviewed_hack"].fillna(False) if "reviewed_hack" in frame else pd.Series(False, index=frame.index)
    verdict = frame["verdict"].fillna(RunVerdict.UNKNOWN).astype(str)
    speed = frame["speedup"]
    choices = [
        (~submitted, GridState.NO_SUBMISSION),
        (hack.astype(bool), GridState.REWARD_HACK),
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
