"""Summaries and the adaptive stop rule for timings (standard library only; the worker imports it).

The median's confidence interval is distribution-free: the order statistics at ranks n/2 ± z·√n/2
(the normal approximation to the binomial), so it holds for the skewed, heavy-tailed samples that
timings are. Repetition stops once that interval is within ±target% of the median for every timed
function, or when the time cap comes first; the result records which.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

from ..core.schema import BasisStats, StopReason

Z95 = statistics.NormalDist().inv_cdf(0.975)


def median_ci(samples: list[float]) -> tuple[float, float]:
    """The 95% confidence interval of the median (the whole range when n is too small for one)."""
    xs = sorted(samples)
    n = len(xs)
    half = Z95 * math.sqrt(n) / 2
    lo = max(1, math.floor(n / 2 - half))  # 1-based ranks
    hi = min(n, math.ceil(n / 2 + half) + 1)
    return xs[lo - 1], xs[hi - 1]


def ci_halfwidth_pct(samples: list[float]) -> float:
    """Half the width of the median's 95% CI, in percent of the median (inf when undefined)."""
    if len(samples) < 2:
        return math.inf
    med = statistics.median(samples)
    lo, hi = median_ci(samples)
    return math.inf if med <= 0 else (hi - lo) / 2 / med * 100


def summarize(samples: list[float], stop: StopReason | None) -> BasisStats:
    """Median, IQR, min, max, n and the median's CI of samples in milliseconds."""
    if not samples:
        raise ValueError("no samples to summarize")
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else (samples[0],) * 3
    lo, hi = median_ci(samples)
    return BasisStats(median_ms=statistics.median(samples), min_ms=min(samples), max_ms=max(samples), n=len(samples),
                      iqr_ms=q3 - q1, ci_low_ms=lo, ci_high_ms=hi, stop=stop)


def adaptive(measure_batch: Callable[[], list[list[float]]], n_fns: int, *, min_n: int, target_pct: float,
             cap_s: float, clock: Callable[[], float] = time.perf_counter) -> tuple[list[list[float]], StopReason]:
    """Call `measure_batch` (a few interleaved samples per function) until every median's CI is tight enough.

    The stop rule is tried after each batch once every function has `min_n` samples; the time cap ends
    the loop otherwise (after at least one batch).
    """
    samples: list[list[float]] = [[] for _ in range(n_fns)]
    start = clock()
    while True:
        for fn_samples, new in zip(samples, measure_batch(), strict=True):
            fn_samples.extend(new)
        if all(len(s) >= min_n for s in samples) and all(ci_halfwidth_pct(s) <= target_pct for s in samples):
            return samples, StopReason.CONVERGED
        if clock() - start >= cap_s:
            return samples, StopReason.TIME_CAP
