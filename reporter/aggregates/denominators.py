"""fast_p's denominators: the problems a leaderboard row is divided by (`denominators`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .scope import Key, column_values, key_tuples, positions


def _in_scope(run_id: str, scope: str) -> bool:
    return not scope or run_id == scope or run_id.startswith(f"{scope}/")


Problem = tuple[str, int, int]
Denominator = tuple[int, int, str, bool]  # problems, not_attempted, levels_missing, universe_known


def _sets(space: pd.DataFrame | None) -> dict[str, dict[Problem, str]]:
    """The recorded problem sets by scope (a data folder's subfolder, "" for all of it), each problem with its file."""
    sets: dict[str, dict[Problem, str]] = {}
    if space is not None:
        for scope, bench, level, pid, file in zip(space["scope"], space["benchmark"], space["level"], space["problem_id"],
                                                  space["problem"], strict=True):
            sets.setdefault(str(scope), {})[(str(bench), int(level), int(pid))] = str(file)
    return sets


def _applying(sets: dict[str, dict[Problem, str]], run_ids: list[str], attempted: set[Problem]) -> dict[Problem, str]:
    """The recorded problems that apply to these runs: of a set in scope of one of them, at a level one attempted."""
    levels = {p[:2] for p in attempted}
    return {k: f for scope, probs in sets.items() if any(_in_scope(r, scope) for r in run_ids)
            for k, f in probs.items() if k[:2] in levels}


def _problems(runs: pd.DataFrame) -> list[Problem]:
    return list(zip((str(b) for b in runs["benchmark"]), (int(v) for v in runs["level"]),
                    (int(v) for v in runs["problem_id"]), strict=True))


def recorded_problems(runs: pd.DataFrame, space: pd.DataFrame | None) -> dict[Problem, str]:
    """Every recorded problem that applies to `runs` (those their boards divide by), with its file name: the grid
    lists them all, attempted or not."""
    return _applying(_sets(space), [str(r) for r in runs["run_id"]], set(_problems(runs)))


def denominator_map(runs: pd.DataFrame, by: Sequence[str], space: pd.DataFrame | None) -> dict[Key, Denominator]:
    sets = _sets(space)
    problem = _problems(runs)
    run_ids, models = [str(r) for r in runs["run_id"]], column_values(runs, "model")
    out: dict[Key, Denominator] = {}
    for gkey, rows in positions(key_tuples(runs, by)).items():
        known = set(_applying(sets, [run_ids[i] for i in rows], {problem[i] for i in rows}))
        every = known | {problem[i] for i in rows}
        for model, mrows in positions([(models[i],) for i in rows]).items():
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
    rows = [(*k, *d) for k, d in denominator_map(runs, by, space).items()]
    cols = [*keys, "problems", "not_attempted", "levels_missing", "universe_known"]
    return pd.DataFrame(rows, columns=cols).set_index(keys)
