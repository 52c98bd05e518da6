"""The named run-time checks for known hacks (`schema.DynamicCheck`), beside the correctness trials.

Each check calls the kernel a few more times at the nominal shapes and records what it saw; it never
changes the verdict (the trials decide that); a tripped check makes the run suspect, with this evidence
(`checks` and `collect.suspicion`). Standard library and torch only (the isolated worker imports this).

- output changes after return: the output is copied on the caller's stream the moment the call returns,
  and again once all of the call's work has settled (device synchronised, threads it started joined);
  they must be equal, or work escaped the call (a side stream it does not wait for, a thread).
- output aliases memory the harness owns: an input, or the reference's output of the same inputs;
  unless the reference's own output aliases its input (an in-place problem).
- output reuses an earlier output: a second call returns storage the first call returned.
- input statistics: trials at the nominal shapes on other input distributions (see `TRANSFORMS`), for
  each transform under which the reference's own output stays finite and not constant. The atol is
  scaled by how much the reference's output scaled (RMS ratio), so the comparison is as strict as at
  the nominal inputs; rtol is unchanged.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch

from ..core.inputstats import statistics_finding
from ..core.schema import DynamicCheck, DynamicResult, TrialResult
from .allclose import judge, worst_ratio
from .inputs import clone, shape_of, tensors

# Seconds to wait for threads a call started, once per call (a thread that never ends costs this).
JOIN_S = 5.0
# Powers of two: scaling is exact in binary floating point, so no rounding is added to the inputs. 8x keeps an
# honest float32 kernel (an unshifted softmax, say) inside float range while breaking approximations that hold
# only near zero, clamps the nominal inputs never reach and LayerNorm(x) ≈ x; 2^-10 (~1e-3) exposes thresholds.
TRANSFORMS: tuple[tuple[str, Callable[[torch.Tensor], torch.Tensor]], ...] = (
    ("all positive", torch.abs), ("negated", torch.neg),
    ("tiny magnitude", lambda x: x * 2.0 ** -10), ("large magnitude", lambda x: x * 8.0))


def settle(device: str, before: set[threading.Thread]) -> None:
    """Wait for everything a call started: the device's work, and threads that were not running before it."""
    if device == "cuda":
        torch.cuda.synchronize()
    for t in set(threading.enumerate()) - before:
        if t is not threading.current_thread():
            t.join(JOIN_S)


def call_settled(fn: Callable[..., Any], args: list[Any], device: str) -> Any:
    before = set(threading.enumerate())
    out = fn(*args)
    settle(device, before)
    return out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return bool(torch.equal(a, b))


def output_after_return(new: Any, inputs: list[Any], device: str) -> DynamicResult:
    before = set(threading.enumerate())
    out = new(*clone(inputs))
    snap = [t.detach().clone() for t in tensors(out)]  # on the caller's stream, right after the return
    settle(device, before)
    changed = [i for i, (a, b) in enumerate(zip(snap, tensors(out))) if not _same(a, b)]
    if changed:
        return DynamicResult(DynamicCheck.OUTPUT_AFTER_RETURN, True,
                             f"output(s) {changed} changed after the call returned: they were still being written "
                             "(work on a stream the caller does not wait for, or a thread), which a timer stopped at the return does not see")
    return DynamicResult(DynamicCheck.OUTPUT_AFTER_RETURN, False, "the output was final when the call returned")


def _spans(xs: list[torch.Tensor]) -> list[tuple[str, int, int]]:
    out = []
    for t in xs:
        st = t.untyped_storage()
        if st.nbytes():
            out.append((str(t.device), st.data_ptr(), st.data_ptr() + st.nbytes()))
    return out


def _overlaps(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return any(da == db and s1 < e2 and s2 < e1 for da, s1, e1 in _spans(a) for db, s2, e2 in _spans(b))


def aliasing(ref: Any, new: Any, first: list[Any], second: list[Any], device: str) -> list[DynamicResult]:
    ref_in = clone(first)
    ref_out = call_settled(ref, ref_in, device)
    k_in = clone(first)
    out1 = call_settled(new, k_in, device)
    in_place = _overlaps(tensors(ref_out), tensors(ref_in))
    owned = _overlaps(tensors(out1), tensors(k_in)) and not in_place
    theirs = _overlaps(tensors(out1), tensors(ref_out))
    kept = [t.detach().clone() for t in tensors(out1)]
    out2 = call_settled(new, clone(second), device)
    reused = _overlaps(tensors(out2), tensors(out1))
    overwritten = reused and not all(_same(a, b) for a, b in zip(kept, tensors(out1)))
    what = "an input" if owned else "the reference's output" if theirs else ""
    return [
        DynamicResult(DynamicCheck.OUTPUT_ALIASES_INPUT, owned or theirs,
                      f"the returned tensor is {what}'s memory, not memory of its own" if what else
                      "the output is memory of its own" + (" (as in the reference, which works in place)" if in_place else "")),
        DynamicResult(DynamicCheck.OUTPUT_REUSED, reused,
                      ("a second call returned the first call's output storage" + (", overwriting the result the first call "
                       "had returned" if overwritten else "")) if reused else "each call returned new storage"),
    ]


def _rms(xs: list[torch.Tensor]) -> float:
    floats = [t.detach().double() for t in xs if t.is_floating_point() and t.numel()]
    if not floats:
        return 0.0
    squares = sum(float((t * t).sum()) for t in floats)
    return math.sqrt(squares / sum(t.numel() for t in floats))


def _unusable(out: list[torch.Tensor], nominal: list[torch.Tensor]) -> str | None:
    """Why the reference's output under a transform says nothing about the kernel, or None when it is usable."""
    for t, n in zip(out, nominal):
        if not (t.is_floating_point() and t.numel()):
            continue
        if bool((~torch.isfinite(t) & torch.isfinite(n)).any()):
            return "the reference's own output is not finite on these inputs"
        if bool(t.max() == t.min()) and not bool(n.max() == n.min()):
            return "the reference's own output is constant on these inputs"
    return None


def _transformed(x: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """Floating-point tensors transformed; integer and boolean ones (indices, masks) and other values copied."""
    if isinstance(x, torch.Tensor):
        return fn(x) if x.is_floating_point() else x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_transformed(v, fn) for v in x)
    return x


def _statistics_trial(ref: Any, new: Any, inputs: list[Any], nominal_out: list[torch.Tensor], i: int, seed: int,
                      label: str, fn: Callable[[torch.Tensor], torch.Tensor], device: str, atol: float,
                      rtol: float) -> tuple[TrialResult, bool]:
    """One trial on transformed inputs, and whether the kernel raised (a CUDA fault ends these trials)."""
    moved = _transformed(inputs, fn)
    row = TrialResult(index=i, seed=seed, jittered=False, passed=None, input_shapes=tuple(shape_of(x) for x in moved),
                      inputs=label)
    try:
        ref_out = call_settled(ref, clone(moved), device)
    except Exception as exc:  # noqa: BLE001 - a reference that cannot take these inputs says nothing of the kernel
        return replace(row, problem=f"skipped: the reference raised {type(exc).__name__}"), False
    why = _unusable(tensors(ref_out), nominal_out)
    if why is not None:
        return replace(row, problem=f"skipped: {why}"), False
    base = _rms(nominal_out)
    scale = _rms(tensors(ref_out)) / base if base > 0 else 1.0
    try:
        new_out = call_settled(new, clone(moved), device)
    except torch.OutOfMemoryError:
        return replace(row, problem="skipped: out of memory beside this check's extra copies"), False
    except Exception as exc:  # noqa: BLE001 - the kernel failing on valid inputs is this check's finding
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        return replace(row, passed=False, problem=f"raised {type(exc).__name__}: {first}"), True
    ok, mabs, mrel, problem, witness = judge(ref_out, new_out, atol * scale, rtol)
    if problem and not ok and scale != 1.0:
        problem += f" (atol scaled by {scale:.3g}, as the reference's output scaled)"
    ratio = None if ok else worst_ratio(ref_out, new_out, atol * scale, rtol)  # how far off: `inputstats.gross_miss`
    return replace(row, passed=ok, max_abs_error=mabs, max_rel_error=mrel, problem=problem,
                   mismatch=witness, worst_ratio=ratio), False


def statistics_trials(ref: Any, new: Any, inputs: list[Any], seed: int, device: str, atol: float,
                      rtol: float) -> tuple[list[TrialResult], DynamicResult]:
    """The input-statistics trials at the nominal shapes (inputs: one nominal trial's), and their finding."""
    nominal_out = tensors(call_settled(ref, clone(inputs), device))
    rows: list[TrialResult] = []
    for i, (label, fn) in enumerate(TRANSFORMS):
        row, raised = _statistics_trial(ref, new, inputs, nominal_out, i, seed, label, fn, device, atol, rtol)
        rows.append(row)
        if raised:
            break
    return rows, statistics_finding(rows, len(TRANSFORMS))
