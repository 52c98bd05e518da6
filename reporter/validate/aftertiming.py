"""The comparisons after the timed loop: only correctness decides a verdict, and these are correctness checks.

- `recheck`: the kernel's last timed inputs, at the address it saw them, with new values written into them, through
  both models: a cache keyed on an address the kernel saw (a `data_ptr()` map, in Python or C++) or on the shape
  returns its old answer here.
- `timed_outputs`: the kernel's own outputs of timed calls (one per basis and input set), against the reference on
  those calls' inputs: a kernel that answers differently while it is timed (it sniffed the loop from the call stack, or it
  replays a saved output once warm) fails, however right it is when called anywhere else.

Standard library and torch only: the isolated worker imports this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.schema import TrialResult
from .allclose import judge
from .dynamic import call_settled
from .inputs import clone, shape_of, tensors

TIMED_OUTPUT = "the kernel's output of a timed call ({basis} basis, input set {set})"  # such a row's `inputs` label


def recheck(ref: Any, new: Any, inputs: list[Any], fresh: list[Any], device: str, atol: float, rtol: float) -> TrialResult:
    """`inputs`: the kernel's last timed inputs (their tensors are written); `fresh`: another seed's inputs, whose values
    go into them. A tensor that cannot take them (another shape, or one whose elements share memory, as an expanded
    one does) keeps its values."""
    for old, values in zip(tensors(inputs), tensors(fresh)):
        if old.shape == values.shape and old.dtype == values.dtype:
            try:
                old.copy_(values)
            except RuntimeError:  # "more than one element of the written-to tensor refers to a single memory location"
                continue
    ref_out = ref(*clone(inputs))
    # the set's own tensors, not copies: a copy sits at an address the kernel never saw
    ok, mabs, mrel, problem, witness = judge(ref_out, call_settled(new, inputs, device), atol, rtol)
    return TrialResult(index=-1, seed=-1, jittered=False, passed=ok, input_shapes=tuple(shape_of(x) for x in inputs),
                       max_abs_error=mabs, max_rel_error=mrel, problem=problem, mismatch=witness)


def timed_outputs(ref: Any, sets: list[list[Any]], kept: Mapping[tuple[str, int], tuple[int, Any]], atol: float,
                  rtol: float) -> TrialResult | None:
    """The first kept timed output that fails (`kept`: (basis, set) -> (round, output), `timing.time_all`'s), or None.
    Round r timed set r % len(sets); no call was handed the sets' own tensors (`fresh`), so they hold what was timed."""
    for (basis, _), (round_, got) in sorted(kept.items(), key=lambda kv: kv[0]):
        inputs = sets[round_ % len(sets)]
        ok, mabs, mrel, problem, witness = judge(ref(*clone(inputs)), got, atol, rtol)
        if not ok:
            return TrialResult(index=-1, seed=-1, jittered=False, passed=False, input_shapes=tuple(shape_of(x) for x in inputs),
                               max_abs_error=mabs, max_rel_error=mrel, problem=problem, mismatch=witness,
                               inputs=TIMED_OUTPUT.format(basis=basis, set=round_ % len(sets) + 1))
    return None
