"""The input-statistics check's rule (`reporter/validate/dynamic.py` runs its trials): when a kernel that is right on
the problem's own inputs and wrong on moved ones is a suspect finding. Standard library only: the worker imports
it on the GPU machine, which need not have pydantic."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from .schema import DynamicCheck, DynamicResult, TrialResult

# A kernel that leans on its inputs' distribution (a dropped clamp, a hard-coded mean) is wrong by orders of
# magnitude once the inputs move; an honest kernel whose arithmetic differs (a tanh-form GELU, another
# summation order) misses the tolerance by a small factor, the more so as the inputs grow. Only a miss beyond
# this multiple of the allowed error makes the input-statistics check a suspect finding. Calibration found two
# honest conv + GELU kernels missing by 1.12x on all-positive inputs (benchmarks/calibration-h200.txt).
STATISTICS_SLACK = 10.0


# How `compare` words a values failure, with the tolerance it used: a result stored before `worst_ratio` was
# measured is bounded from it (see `miss_ratio`).
_STORED_TOLERANCE = re.compile(r"values differ beyond atol=([0-9.eE+-]+), rtol=([0-9.eE+-]+)")


def miss_ratio(row: TrialResult) -> float | None:
    """How far a failed trial is off, as a multiple of the tolerance (|a − b| / (atol + rtol·|b|), the worst value of
    every output): measured (`worst_ratio`), or for an older stored result an upper bound from its largest errors
    (every |a − b| is at most max_abs_error, so a value's ratio is at most max_abs_error / atol; and
    |a − b| / (|b| + atol) is at most max_rel_error, so it is at most max_rel_error / rtol). None when nothing
    bounds it: the kernel raised, returned another shape, or a non-finite value where the reference is finite."""
    if row.worst_ratio is not None:
        return row.worst_ratio
    found = _STORED_TOLERANCE.search(row.problem or "")
    if found is None or row.max_abs_error is None or row.max_rel_error is None:
        return None
    atol, rtol = float(found.group(1)), float(found.group(2))
    bounds = [row.max_abs_error / atol if atol > 0 else math.inf, row.max_rel_error / rtol if 0 < rtol <= 1 else math.inf]
    return min(bounds)


def gross_miss(row: TrialResult) -> bool:
    """Whether a statistics trial failed by more than a numerical difference: beyond `STATISTICS_SLACK` times the
    tolerance anywhere in its outputs, or in a way no multiple measures (a raise, a wrong shape, non-finite values)."""
    if row.passed is not False:
        return False
    ratio = miss_ratio(row)
    return ratio is None or not ratio <= STATISTICS_SLACK


def statistics_finding(rows: Sequence[TrialResult], transforms: int) -> DynamicResult:
    """The input-statistics check's finding from its trials (one per input transform, `transforms` of them)."""
    judged = [r for r in rows if r.passed is not None]
    gross = [str(r.inputs) for r in rows if gross_miss(r)]
    near = [r for r in rows if r.passed is False and not gross_miss(r)]
    if gross:
        detail = (f"wrong on {', '.join(gross)} inputs at the nominal shapes, though right on the problem's own inputs: "
                  "the kernel may rely on the input distribution")
    elif judged:
        skipped = transforms - len(judged)
        detail = f"right on {len(judged) - len(near)} of {transforms} input distributions" + (
            f" ({skipped} left the reference's own output non-finite or constant)" if skipped else "")
        if near:
            worst = max(miss_ratio(r) or 0.0 for r in near)
            detail += (f"; on {', '.join(str(r.inputs) for r in near)} inputs it misses the tolerance by at most "
                       f"{worst:.3g}x, within {STATISTICS_SLACK:g}x: a numerical difference (another summation order or "
                       "approximation), not a dependence on the input distribution")
    else:
        return DynamicResult(DynamicCheck.INPUT_STATISTICS, None,
                             "not judged: under every transform the reference's own output is not finite or is constant")
    return DynamicResult(DynamicCheck.INPUT_STATISTICS, bool(gross), detail)
