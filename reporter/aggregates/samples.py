"""Every sample counted: pass@k, fast_1@k and best-of-k where a model attempted a problem several times, tokens per
correct and per fast kernel (dollars only from the user's price table), and how much of a row was audited.

The leaderboard counts each problem once, by its best run (best-of-n, whatever n was). These figures count every
sample (`scoped` runs, so a suspect or reward-hack sample never passes):

- **pass@k** (correct and not excluded) and **fast_1@k** (counting and faster than 1x) use the unbiased estimator of
  Chen et al. (2021): with n samples of a problem of which c pass, 1 - C(n-c, k) / C(n, k), averaged over the
  row's problems (the board's n; a problem not attempted passes never). k runs from 1 to `k_max`, the fewest
  samples of any attempted problem of the row, so every problem has at least k; a row with one sample each has
  pass@1 only.
- **best-of-k speedup**: per problem, the expected best counting speedup of k samples drawn from its n (a sample
  that does not count is worth 0); the geometric mean over the problems where it is above 0, n shown.
- **tokens**: summed over the row's samples that recorded a plausible count (> 0 and not flagged), divided by its
  correct (passing) samples and by its fast samples; when some samples recorded none, the figure covers the
  samples that did and says how many.
- **audited**: counting samples with a reviewer's verdict on their exact kernel (`review`), and fast_1 counting
  only audited samples (`fast_1.0_audited_n`, by best run per problem as the board does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb
from typing import Any

from ..core.checks import fast_n
from .scope import Key, best_per_problem, column_values, key_tuples, positions

TOKENS_FLAG = "run.tokens_total"  # the check that says a recorded count is not one


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of passing at least once in k of n samples, c of which pass (k <= n)."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def best_of_k(values: Sequence[float], k: int) -> float:
    """The expected maximum of k values drawn without replacement from `values` (all k-subsets equally likely)."""
    n = len(values)
    if not 1 <= k <= n:
        raise ValueError(f"best-of-k needs 1 <= k <= n (n={n}, k={k})")
    ordered = sorted(values)
    # the i-th smallest (1-based) is the maximum of C(i-1, k-1) of the C(n, k) subsets
    return math.fsum(v * comb(i - 1, k - 1) for i, v in enumerate(ordered, 1)) / comb(n, k)


def _geomean(values: list[float]) -> float:
    return math.exp(math.fsum(math.log(v) for v in values) / len(values)) if values else math.nan


def _tokens(count: Any, flags: Any) -> int | None:
    """A sample's recorded tokens, or None where none were counted (0) or the count is flagged."""
    if count is None or int(count) <= 0 or (flags and TOKENS_FLAG in str(flags)):
        return None
    return int(count)


def _row(col: dict[str, list[Any]], rows: list[int], problems: int, audited_best: int) -> dict[str, Any]:
    by_problem = positions([(col["level"][i], col["problem_id"][i]) for i in rows])
    passed = [bool(col["correct"][i]) and not col["excluded"][i] for i in range(len(col["correct"]))]
    fast = [bool(col["counts"][i]) and (col["speedup"][i] or 0.0) > 1.0 for i in range(len(col["correct"]))]
    groups = [[rows[j] for j in js] for js in by_problem.values()]
    n_min = min((len(g) for g in groups), default=0)
    ks = tuple(range(1, n_min + 1))
    out: dict[str, Any] = {"samples": len(rows), "samples_min": n_min, "samples_max": max((len(g) for g in groups), default=0),
                           "k_max": n_min}
    for k in ks:
        out[f"pass@{k}"] = math.fsum(pass_at_k(len(g), sum(passed[i] for i in g), k) for g in groups) / problems
        out[f"fast_1.0@{k}"] = math.fsum(pass_at_k(len(g), sum(fast[i] for i in g), k) for g in groups) / problems
        best = [best_of_k([float(col["speedup"][i]) if col["counts"][i] else 0.0 for i in g], k) for g in groups]
        out[f"best_of_{k}"] = _geomean([b for b in best if b > 0])
        out[f"best_of_{k}_n"] = sum(1 for b in best if b > 0)
    tokens = [(i, t) for i in rows if (t := _tokens(col["tokens_total"][i], col["flag_fields"][i])) is not None]
    counted = [i for i, _ in tokens]
    total = sum(t for _, t in tokens)
    out |= {"tokens_runs": len(tokens), "tokens": total if tokens else None,
            "correct_samples": sum(passed[i] for i in counted), "fast_samples": sum(fast[i] for i in counted)}
    out["tokens_per_correct"] = total / out["correct_samples"] if tokens and out["correct_samples"] else None
    out["tokens_per_fast"] = total / out["fast_samples"] if tokens and out["fast_samples"] else None
    out["tokens_per_run"] = total / len(tokens) if tokens else None
    counting = [i for i in rows if col["counts"][i]]
    out |= {"counting": len(counting), "audited": sum(1 for i in counting if col["review"][i] is not None),
            "reviewed": sum(1 for i in rows if col["review"][i] is not None), "fast_1.0_audited_n": audited_best}
    return out


COLUMNS = ("level", "problem_id", "correct", "excluded", "counts", "speedup", "tokens_total", "flag_fields", "review")


def sample_rows(runs: Any, by: Sequence[str], problems: dict[Key, int]) -> dict[Key, dict[str, Any]]:
    """Per group × model (`by` and "model"): the figures above, from a board's `scoped` runs; `problems` is each
    row's n (the board's `problems` column), the denominator of pass@k as of fast_p."""
    keys = [*by, "model"]
    col = {c: column_values(runs, c) for c in COLUMNS}
    audited = runs.assign(counts=runs["counts"] & runs["review"].notna())
    best = best_per_problem(audited, by)
    speeds = column_values(best, "speedup")
    audited_fast = {k: fast_n([speeds[i] for i in rows if best["counts"].iloc[i]], 1.0)
                    for k, rows in positions(key_tuples(best, keys)).items()}
    return {k: _row(col, rows, max(problems.get(k, 0), 1), audited_fast.get(k, 0))
            for k, rows in positions(key_tuples(runs, keys)).items()}


def dollars(tokens: float | None, per_million: float | None) -> float | None:
    """Dollars for a token count at the user's price (US dollars per million tokens); None without either."""
    return None if tokens is None or per_million is None else tokens * per_million / 1e6


def pending(ranks: dict[Key, int], rows: dict[Key, dict[str, Any]], top: int) -> set[Key]:
    """The rows an audit is pending for: ranked within the top `top` of their board with a counting sample that no
    reviewer has judged."""
    return {k for k, r in ranks.items() if r <= top and k in rows and rows[k]["audited"] < rows[k]["counting"]}
