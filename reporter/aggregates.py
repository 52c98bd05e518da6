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

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .collect.problemset import ProblemSet
from .collect.problemset import find as find_problem_sets
from .core.checks import speedup_reported
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


def scoped(frame: pd.DataFrame, revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
           basis: Basis | str = DEFAULT_BASIS) -> pd.DataFrame:
    """`comparable` runs on one basis (optionally re-validated ones only) with `excluded` and `counts` added."""
    out = on_basis(comparable(frame), basis)
    if revalidated_only:
        out = out.loc[out["revalidated_correct"].notna()].copy()
        out["correct"] = out["revalidated_correct"].astype(bool)
        out["speedup"] = out["speedup"].where(out["speedup_source"] == Source.RE_VALIDATED)
    out["correct"] = out["correct"].fillna(False).astype(bool)
    out["excluded"] = out[exclude].fillna(False).astype(bool) if exclude is not None else False
    # no speedup for an incorrect or failed kernel, nor an excluded one (exclude=None keeps a suspect's, to count it
    # KernelBench's way)
    reported = [speedup_reported(c, e) for c, e in zip(out["correct"], out["excluded"], strict=True)]
    out["speedup"] = out["speedup"].where(pd.Series(reported, index=out.index, dtype=bool))
    speed = out["speedup"].astype("float64")
    real = speed.notna() & np.isfinite(speed) & (speed > 0)  # NaN, infinite or negative speedups never count
    out["counts"] = out["correct"] & ~out["excluded"] & real
    return out


def best_per_problem(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS) -> pd.DataFrame:
    """One row per group × model × problem: the best run (counting, then correct, then fastest, then first by id)."""
    keys = list(dict.fromkeys([*by, "model", *PROBLEM_KEYS]))
    ranked = frame.assign(_rank_speed=frame["speedup"].where(frame["counts"]).fillna(0.0))
    ranked = ranked.sort_values(["counts", "correct", "_rank_speed", "run_id"], ascending=[False, False, False, True],
                                kind="stable")
    return ranked.drop_duplicates(subset=keys, keep="first").drop(columns="_rank_speed")


UNIVERSE_COLUMNS: tuple[str, ...] = ("scope", "benchmark", "level", "problem_id", "problem", "sha256")


def universe(sets: Sequence[ProblemSet]) -> pd.DataFrame:
    """The recorded problem sets (`collect.problemset.find`) as a table: a row per problem and the folder of
    DATA whose runs it applies to (`scope`, "" for all of DATA)."""
    rows = [(ps.scope, p.benchmark, p.level, p.problem_id, p.file, p.sha256) for ps in sets for p in ps.problems.values()]
    return pd.DataFrame(rows, columns=list(UNIVERSE_COLUMNS)).astype({"level": "int64", "problem_id": "int64"})


def load_universe(data: str | Path) -> pd.DataFrame:
    """Every problem set recorded under DATA (`reporter import kernelbench --problems`), as `universe`."""
    return universe(find_problem_sets(Path(data)))


def _in_scope(run_ids: pd.Series, scope: str) -> pd.Series:
    return run_ids.astype(str).str.startswith(f"{scope}/") | (run_ids == scope) if scope else run_ids.notna()


def denominators(runs: pd.DataFrame, by: Sequence[str], space: pd.DataFrame | None) -> pd.DataFrame:
    """Per group × model: `problems` (fast_p's n), `not_attempted` and `levels_missing`.

    n is the group's problem set: every recorded problem of the group's benchmark and levels that applies to
    its runs, plus any problem a run attempted outside it, the same n for every model (KernelBench divides by
    the level's problems). Without a recorded set, n is the model's attempted problems, as before."""
    keys = [*by, "model"]
    out = []
    space = space if space is not None else pd.DataFrame(columns=list(UNIVERSE_COLUMNS))
    for gkey, g in runs.groupby(list(by), dropna=False, sort=False):
        levels = set(zip(g["benchmark"].astype(str), g["level"].astype(int)))
        known: set[tuple[str, int, int]] = set()
        for scope in space["scope"].unique():
            if _in_scope(g["run_id"], str(scope)).any():
                s = space[space["scope"] == scope]
                known |= {k for k in zip(s["benchmark"], s["level"], s["problem_id"]) if k[:2] in levels}
        names = gkey if isinstance(gkey, tuple) else (gkey,)
        every = known | set(zip(g["benchmark"].astype(str), g["level"].astype(int), g["problem_id"].astype(int)))
        for model, mg in g.groupby("model", dropna=False, sort=False):
            tried = set(zip(mg["benchmark"].astype(str), mg["level"].astype(int), mg["problem_id"].astype(int)))
            n = len(every) if known else len(tried)
            lacks = sorted({lv for _, lv, _ in known} - {lv for _, lv, _ in tried})
            out.append((*names, model, n, n - len(tried), " ".join(f"L{lv}" for lv in lacks), bool(known)))
    cols = [*keys, "problems", "not_attempted", "levels_missing", "universe_known"]
    return pd.DataFrame(out, columns=cols).set_index(keys)


def leaderboard(frame: pd.DataFrame, by: Sequence[str] = LEADERBOARD_KEYS, fast_ps: Sequence[float] = FAST_P,
                revalidated_only: bool = False, exclude: str | None = DEFAULT_EXCLUDE,
                basis: Basis | str = DEFAULT_BASIS, space: pd.DataFrame | None = None) -> pd.DataFrame:
    """A row per group × model: denominators, counts, fast_p (share and numerator) and the geometric mean.

    `space` is the recorded problem set (`load_universe`): fast_p divides by its problems (`problems`), and
    a problem with no run counts as `not_attempted`. `fast_<p>_with_suspects` is fast_p with the suspect runs
    counted (KernelBench's own scoring, which has no cheat checks); `compile_*` compare with torch.compile
    where the harness recorded a torch.compile baseline."""
    runs = scoped(frame, revalidated_only, exclude, basis)
    rows = _board_rows(runs, by, fast_ps).join(denominators(runs, by, space), on=[*by, "model"])
    for p in fast_ps:
        rows[fast_column(p)] = rows[f"{fast_column(p)}_n"] / rows["problems"]
    if exclude is not None:
        kb = _fast_counts(scoped(frame, revalidated_only, None, basis), by, fast_ps)
        index = rows.set_index([*by, "model"]).index
        for p in fast_ps:
            col = f"{fast_column(p)}_with_suspects_n"
            rows[col] = index.map(kb[col]).astype("int64")
            rows[f"{fast_column(p)}_with_suspects"] = rows[col] / rows["problems"]
    order = fast_column(1.0) if 1.0 in fast_ps else fast_column(fast_ps[-1])
    rows = rows.sort_values([*by, order, "geomean", "model"], ascending=[True] * len(by) + [False, False, True],
                            na_position="last", kind="stable")
    return rows.reset_index(drop=True).astype({"problems": "int64", "not_attempted": "int64"})


def _fast_counts(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> pd.DataFrame:
    """fast_p's numerators alone (`fast_<p>_with_suspects_n`), by each model's best run per problem."""
    best = best_per_problem(runs, by)
    fast = pd.DataFrame({f"{fast_column(p)}_with_suspects_n": best["counts"] & best["speedup"].gt(p).fillna(False)
                         for p in fast_ps}, index=best.index)
    return fast.join(best[[*by, "model"]]).groupby([*by, "model"], dropna=False, sort=False).sum()


def _board_rows(runs: pd.DataFrame, by: Sequence[str], fast_ps: Sequence[float]) -> pd.DataFrame:
    """The counts of `leaderboard`, from its scoped runs, by each model's best run per problem."""
    keys = [*by, "model"]
    best = best_per_problem(runs, by)
    counts = best["counts"]
    compiled = best["recorded_compile_speedup"].astype("float64").where(counts)
    best = best.assign(
        _log=np.log(best["speedup"].where(counts).astype("float64")), _clog=np.log(compiled.where(compiled > 0)),
        _cfast=compiled.gt(1.0), _recorded=best["speedup_source"].eq(Source.RECORDED).fillna(False),
        **{f"_{fast_column(p)}": counts & best["speedup"].gt(p).fillna(False) for p in fast_ps})
    spec = {
        "attempted": ("run_id", "size"), "submitted": ("submitted", "sum"), "compiled": ("compiled", "sum"),
        "correct": ("correct", "sum"), "correct_recorded": ("recorded_correct", "sum"),
        "correct_revalidated": ("revalidated_correct", "sum"), "revalidated": ("revalidated_correct", "count"),
        "recorded_only": ("_recorded", "sum"), "baseline_other_gpu": ("baseline_other_gpu", "sum"),
        "excluded": ("excluded", "sum"), "compile_n": ("_clog", "count"), "compile_fast_1.0_n": ("_cfast", "sum"),
        "geomean_log": ("_log", "mean"), "geomean_n": ("_log", "count"), "compile_geomean_log": ("_clog", "mean"),
        **{f"{fast_column(p)}_n": (f"_{fast_column(p)}", "sum") for p in fast_ps},
    }
    rows = best.groupby(keys, dropna=False, sort=False).agg(**spec)
    rows["geomean"] = np.exp(rows.pop("geomean_log"))
    rows["compile_geomean"] = np.exp(rows.pop("compile_geomean_log"))
    effort = runs.assign(_hack=runs["reviewed_hack"].fillna(False).astype(bool)).groupby(keys, dropna=False, sort=False).agg(
        reward_hacks=("_hack", "sum"), median_turns=("turns", "median"),
        median_tokens=("tokens_total", lambda s: s[s > 0].median()))  # 0 tokens means "not counted"
    rows = rows.join(effort).reset_index()
    return rows.astype({c: "int64" for c in spec if not c.endswith("_log")} | {"reward_hacks": "int64"})


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
