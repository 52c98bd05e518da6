"""The one correctness rule (allclose, in float64) and the witness of a failed comparison.

Standard library and torch only (the isolated worker imports this).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import torch

from ..core.rules import ALL_ZERO_REFERENCE_SHARE
from ..core.schema import Mismatch
from .inputs import tensors

# Elements compared at once in float64: bounds the comparison's extra device memory to about 0.5 GB.
COMPARE_CHUNK = 1 << 24


def _chunks(r: torch.Tensor, n: torch.Tensor) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
    """(offset, reference, kernel) of two flat tensors in float64, a chunk at a time, on their own device: a float64
    copy of a KernelBench-sized output on the host took minutes per trial."""
    for lo in range(0, r.numel(), COMPARE_CHUNK):
        yield lo, r[lo:lo + COMPARE_CHUNK].double(), n[lo:lo + COMPARE_CHUNK].double()


def compare(ref_out: Any, new_out: Any, atol: float, rtol: float) -> tuple[bool, float | None, float | None, str | None]:
    refs, news = tensors(ref_out), tensors(new_out)
    if len(refs) != len(news):
        return False, None, None, f"output count mismatch: expected {len(refs)} tensors, got {len(news)}"
    worst_abs, worst_rel, ok, problem = 0.0, 0.0, True, None
    for r, n in zip(refs, news):
        if r.shape != n.shape:
            return False, None, None, f"output shape mismatch: expected {tuple(r.shape)}, got {tuple(n.shape)}"
        nonfinite, close, t_abs, t_rel = _compare_flat(r.detach().reshape(-1), n.detach().reshape(-1).to(r.device),
                                                        atol, rtol)
        worst_abs, worst_rel = max(worst_abs, t_abs), max(worst_rel, t_rel)
        if nonfinite and ok:
            ok, problem = False, f"{nonfinite} NaN/Inf values where the reference is finite"
        if ok and not close:
            ok, problem = False, f"values differ beyond atol={atol:g}, rtol={rtol:g}"
        if ok and t_abs >= ALL_ZERO_REFERENCE_SHARE * atol and not bool(n.detach().ne(0).any()):
            ok, problem = False, (f"the output is all zeros where the reference's reaches {t_abs:.3g} (at least "
                                  f"{ALL_ZERO_REFERENCE_SHARE:g} x atol)")
    return ok, worst_abs, worst_rel, problem


def _compare_flat(r: torch.Tensor, n: torch.Tensor, atol: float, rtol: float) -> tuple[int, bool, float, float]:
    """(non-finite values where the reference is finite, all close, worst abs, worst rel) of two flat tensors."""
    nonfinite, close, worst_abs, worst_rel = 0, True, 0.0, 0.0
    for _, r64, n64 in _chunks(r, n):
        nonfinite += int((~torch.isfinite(n64) & torch.isfinite(r64)).sum())
        diff = (r64 - n64).abs()
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float((diff / (r64.abs() + atol)).max()))
        close = close and bool(torch.allclose(n64, r64, atol=atol, rtol=rtol, equal_nan=False))
    return nonfinite, close, worst_abs, worst_rel


def worst_ratio(ref_out: Any, new_out: Any, atol: float, rtol: float) -> float:
    """The largest |a − b| / (atol + rtol·|b|) over every value of every output (1 is the tolerance's edge); infinite
    for a non-finite value where the reference differs, or for outputs of another count or shape."""
    refs, news = tensors(ref_out), tensors(new_out)
    if len(refs) != len(news) or any(r.shape != n.shape for r, n in zip(refs, news)):
        return math.inf
    worst = 0.0
    for r, n in zip(refs, news):
        for _, r64, n64 in _chunks(r.detach().reshape(-1), n.detach().reshape(-1).to(r.device)):
            same = (r64 == n64) | (torch.isnan(r64) & torch.isnan(n64))
            ratio = (r64 - n64).abs() / (atol + rtol * r64.abs())
            ratio = torch.where(same, torch.zeros_like(ratio), torch.nan_to_num(ratio, nan=math.inf))
            if ratio.numel():
                worst = max(worst, float(ratio.max()))
    return worst


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for dim in reversed(shape):
        flat, i = divmod(flat, dim) if dim else (flat, 0)
        index.append(i)
    return tuple(reversed(index))


def _witness(r: torch.Tensor, n: torch.Tensor, atol: float, rtol: float) -> tuple[int, int, float, float] | None:
    """(first bad flat index, bad count, max |a − b|, atol + rtol·|b| there) of two flat tensors, or None when all close."""
    first, bad, worst, allowed = -1, 0, -1.0, 0.0
    for lo, r64, n64 in _chunks(r, n):
        off = ~torch.isclose(n64, r64, atol=atol, rtol=rtol, equal_nan=False)
        count = int(off.sum())
        if count and first < 0:
            first = lo + int(off.nonzero()[0, 0])
        bad += count
        diff = (r64 - n64).abs()
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        at = int(diff.argmax()) if diff.numel() else 0
        if diff.numel() and float(diff[at]) > worst:
            worst, allowed = float(diff[at]), atol + rtol * abs(float(r64[at]))
    return (first, bad, worst, allowed) if bad else None


def _value(x: torch.Tensor) -> float | None:
    v = float(x)
    return None if math.isnan(v) else v


def mismatch(ref_out: Any, new_out: Any, atol: float, rtol: float) -> Mismatch | None:
    """The first output tensor with values outside the tolerance, as a witness; None when none is (or shapes differ)."""
    refs, news = tensors(ref_out), tensors(new_out)
    if len(refs) != len(news):
        return None
    for k, (r, n) in enumerate(zip(refs, news)):
        if r.shape != n.shape:
            return None
        rf, nf = r.detach().reshape(-1), n.detach().reshape(-1).to(r.device)
        found = _witness(rf, nf, atol, rtol)
        if found is not None:
            first, bad, worst, allowed = found
            return Mismatch(output=k, index=_unravel(first, tuple(r.shape)), expected=_value(rf[first]), actual=_value(nf[first]),
                            bad=bad, total=r.numel(), max_error=worst, allowed=allowed)
    return None


def judge(ref_out: Any, new_out: Any, atol: float, rtol: float
          ) -> tuple[bool, float | None, float | None, str | None, Mismatch | None]:
    """`compare`, plus the witness of a values failure (None when it passed or the shapes differ)."""
    ok, worst_abs, worst_rel, problem = compare(ref_out, new_out, atol, rtol)
    return ok, worst_abs, worst_rel, problem, None if ok else mismatch(ref_out, new_out, atol, rtol)
