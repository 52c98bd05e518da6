"""Run-time defences beside the dynamic checks (issue 48), each a `DynamicResult` whose trip makes a run suspect.

- harness patched: the timers, the comparisons and this harness's own functions are the very objects the worker
  held before the kernel's module loaded, after it loaded and after the timed loop (a kernel that replaces
  `torch.cuda.Event.elapsed_time`, `time.perf_counter` or the comparison fools every measurement a pattern cannot
  see: it can build the replacement at run time from strings). Objects are compared by identity, and the old ones
  are held, so an id can never be reused by a replacement.
- nondeterministic output: the kernel called twice on the same inputs. Bits that differ within the tolerance are an
  unordered reduction (atomics), noted and not tripped; values that differ beyond it mean a race or uninitialised
  memory (one of the two answers is wrong, whichever a trial happened to see), unless the reference itself varies
  as much.

Standard library and torch only: the isolated worker imports this.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from ..core.schema import DynamicCheck, DynamicResult
from .allclose import judge
from .dynamic import call_settled
from .inputs import clone, tensors

# Objects a kernel could replace to fool the timer or the comparison, by where they live (a dotted path from a module).
WATCHED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("torch.cuda.Event", ("elapsed_time", "record", "synchronize", "query", "wait")),
    ("torch.cuda", ("synchronize", "Event", "Stream", "current_stream", "default_stream", "graph", "CUDAGraph")),
    ("torch", ("allclose", "isclose", "equal", "isfinite", "isnan")),
    ("torch.Tensor", ("clone", "copy_", "detach", "to", "__eq__")),
    ("time", ("perf_counter", "perf_counter_ns", "monotonic", "time")),
)
# The harness's own modules: every callable bound in them (their functions and what they imported) is watched too.
PACKAGE = __name__.split(".")[0]  # "reporter": every module of ours loaded in the worker is watched, none by hand


def harness() -> list[str]:
    """The names of every reporter module loaded in this process: the worker's, the checks', the records they use (a
    module listed by hand missed the strengthening and the replay, whose functions a kernel could replace)."""
    return sorted(n for n in list(sys.modules) if n == PACKAGE or n.startswith(PACKAGE + "."))


_held: dict[str, Any] = {}  # the objects as the worker started: what every later look is compared with
_changed: dict[str, str] = {}  # name -> when its replacement was first seen


def _resolve(path: str) -> Any:
    root, *rest = path.split(".")
    obj: Any = sys.modules.get(root)
    for part in rest:
        obj = getattr(obj, part, None)
    return obj


def watched() -> dict[str, Any]:
    """Name -> object, for every watched attribute as it is now."""
    out: dict[str, Any] = {}
    for owner, names in WATCHED:
        holder = _resolve(owner)
        if holder is not None:
            out |= {f"{owner}.{n}": getattr(holder, n, None) for n in names}
    for name in harness():
        mod = sys.modules.get(name)
        if mod is not None:
            out |= {f"{name}.{k}": v for k, v in vars(mod).items() if callable(v) and not k.startswith("__")}
    return out


def remember() -> None:
    """Before the kernel's module loads: the objects every later look compares with."""
    _held.clear()
    _changed.clear()
    _held.update(watched())


def look(when: str) -> None:
    """Note every watched object that is no longer the one held, and when it was first seen replaced."""
    now = watched()
    for name, obj in _held.items():
        if now.get(name) is not obj:
            _changed.setdefault(name, when)


def harness_result() -> DynamicResult:
    """The harness-identity finding, after a last look."""
    if not _held:
        return DynamicResult(DynamicCheck.HARNESS_PATCHED, None, "not run: no objects were held before the kernel loaded")
    look("after the timed loop")
    if _changed:
        what = "; ".join(f"{name} (seen {when})" for name, when in sorted(_changed.items()))
        return DynamicResult(DynamicCheck.HARNESS_PATCHED, True,
                             f"replaced while the kernel ran: {what}. A replaced timer or comparison decides what the "
                             "harness measures, so no time or verdict of this run is its own")
    return DynamicResult(DynamicCheck.HARNESS_PATCHED, False,
                         f"all {len(_held)} watched timers, comparisons and harness functions are the objects the worker "
                         "started with")


def _differing(a: list[torch.Tensor], b: list[torch.Tensor]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return max(x.numel(), y.numel())
        same = (x == y) | (torch.isnan(x) & torch.isnan(y)) if x.is_floating_point() else x == y
        n += int((~same).sum())
    return n


def _twice(fn: Any, inputs: list[Any], device: str) -> tuple[Any, Any]:
    first = clone(call_settled(fn, clone(inputs), device))  # kept apart: a second call may reuse the first's storage
    return first, call_settled(fn, clone(inputs), device)


def same_bits(fn: Any, inputs: list[Any], device: str) -> bool:
    """Whether two calls on the same inputs return the same bits (`WorkerResult.deterministic`)."""
    a, b = _twice(fn, inputs, device)
    return _differing(tensors(a), tensors(b)) == 0


def determinism(ref: Any, new: Any, inputs: list[Any], device: str, atol: float, rtol: float) -> DynamicResult:
    """The kernel twice on the same inputs (`inputs`: one nominal trial's)."""
    a, b = _twice(new, inputs, device)
    differ = _differing(tensors(a), tensors(b))
    if not differ:
        return DynamicResult(DynamicCheck.NONDETERMINISTIC, False, "two calls on the same inputs returned the same bits")
    ok, worst, _, problem, _ = judge(a, b, atol, rtol)
    if ok:
        return DynamicResult(DynamicCheck.NONDETERMINISTIC, False,
                             f"{differ} values differ bitwise between two calls on the same inputs, all within the tolerance "
                             f"(largest difference {worst:.2g}): an unordered reduction, not a wrong answer")
    r1, r2 = _twice(ref, inputs, device)
    if not judge(r1, r2, atol, rtol)[0]:
        return DynamicResult(DynamicCheck.NONDETERMINISTIC, False,
                             f"{differ} values differ between two calls beyond the tolerance, but the reference's own output "
                             "varies as much on the same inputs: nothing to hold against the kernel")
    return DynamicResult(DynamicCheck.NONDETERMINISTIC, True,
                         f"two calls on the same inputs differ in {differ} values, beyond the tolerance ({problem}): a race or "
                         "uninitialised memory; whichever answer a trial saw, the other is wrong")
