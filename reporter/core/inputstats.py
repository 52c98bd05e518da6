"""The input-statistics check's rule (`reporter/validate/dynamic.py` runs its trials): when a kernel that is right on
the problem's own inputs and wrong on moved ones is a suspect finding. Standard library only: the worker imports
it on the GPU machine, which need not have pydantic."""

from __future__ import annotations

from collections.abc import Sequence

from .schema import DynamicCheck, DynamicResult, TrialResult

# A kernel that leans on its inputs' distribution (a dropped clamp, a hard-coded mean) is wrong by orders of
# magnitude once the inputs move; an honest kernel whose arithmetic differs (a tanh-form GELU, another
# summation order) misses the tolerance by a small factor, the more so as the inputs grow. Only a miss beyond
# this multiple of the allowed error makes the input-statistics check a suspect finding. Calibration found two
# honest conv + GELU kernels missing by 1.12x on all-positive inputs (benchmarks/calibration-h200.txt).
STATISTICS_SLACK = 10.0


def gross_miss(row: TrialResult) -> bool:
    """Whether a statistics trial failed by more than a numerical difference: it raised, returned the wrong shape
    or a non-finite value, or its largest error is beyond `STATISTICS_SLACK` times the error allowed there."""
    if row.passed is not False:
        return False
    w = row.mismatch
    return w is None or not w.max_error <= STATISTICS_SLACK * w.allowed


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
            worst = max(r.mismatch.max_error / r.mismatch.allowed for r in near if r.mismatch is not None)
            detail += (f"; on {', '.join(str(r.inputs) for r in near)} inputs it misses the tolerance by at most "
                       f"{worst:.3g}x, within {STATISTICS_SLACK:g}x: a numerical difference (another summation order or "
                       "approximation), not a dependence on the input distribution")
    else:
        return DynamicResult(DynamicCheck.INPUT_STATISTICS, None,
                             "not judged: under every transform the reference's own output is not finite or is constant")
    return DynamicResult(DynamicCheck.INPUT_STATISTICS, bool(gross), detail)
