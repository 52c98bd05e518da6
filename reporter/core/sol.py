"""Speed of light: the least time a problem's work can take on a GPU, how close a time comes to it, and
the floor no honest time goes under. Every rule and margin of the hardware scores is named here.

Two bounds from one `WorkCount` and one row of `core.peaks`:
- `sol_bound` (T_SOL, for scores): max(matmul FLOPs / the peak of their dtype, other FLOPs / fp32 CUDA
  cores, compulsory bytes / DRAM bandwidth), at the recorded SM clock. fp32 matmuls count at the fp32
  CUDA-core peak unless the tolerance that scored the run admits TF32 (`TF32_TOLERANCE`); a kernel faster
  than that bound has used tensor cores, and the page says so (`AboveCause.TENSOR_CORES`). A time that includes a
  launch (CUDA events around a call, a graph replay) is held against T_SOL or `LAUNCH_S`, whichever is
  longer (`Bound.least`): no call, however little work it does, is faster than launching one kernel.
- `floor_bound` (the floor, for flags): as generous as physics allows: only the FLOPs the problem's own
  inputs force (`core.work.FLOOR_FLOPS_RULE`) at the fastest 16-bit tensor rate, at the rated clock, and
  memory at the level the timer allows (DRAM after an L2 flush; L2 for what fits when nothing flushes).
A time below `FLOOR_MARGIN` of the floor is "faster than the hardware allows".

A time under T_SOL that is not under the floor broke one of T_SOL's assumptions; `above_causes` names which
(`AboveCause`), by relaxing each alone and seeing which lets the time through.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .checks import LAUNCH_FLOOR_US
from .peaks import Peaks
from .units import UNIT_LABEL
from .work import Kind, WorkCount

# A time below this fraction of the floor is called impossible. The floor is already optimistic (datasheet
# peaks, perfect overlap of compute and memory); the margin absorbs what the counts cannot know: a kernel
# that skips part of an input the reference reads, or runs an algorithm with fewer FLOPs than the reference's.
FLOOR_MARGIN = 0.5
# An fp32 tolerance (atol and rtol both) at or above this admits TF32 tensor cores: TF32 keeps 10 mantissa
# bits, so each operand is rounded by up to ~4.9e-4 relative; KernelBench's fp32 1e-4 does not admit it.
TF32_TOLERANCE = 1e-3
# The least time of a call that launches a kernel, timed from the host's side (CUDA events, a graph replay): the
# launch floor the recorded-value checks already use (`core.checks.LAUNCH_FLOOR_US`). A device time (the kernels'
# own durations) leaves the launch out, and so does its bound.
LAUNCH_S = LAUNCH_FLOOR_US * 1e-6
SOL_SCORE_RULE = "S = 1 / (1 + (T_kernel − T_SOL) / (T_reference − T_SOL)): 0.5 at the reference's time, 1 at the speed of light"


def time_text(seconds: float) -> str:
    """A duration for a sentence (pages format their own columns): 3 significant digits, a unit that fits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), (UNIT_LABEL["us"], 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def count_text(n: float, unit: str) -> str:
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {prefix}{unit}"
    return f"{n:.3g} {unit}"


@dataclass(frozen=True)
class Bound:
    """A least time for one problem on one GPU, and everything it assumed."""

    seconds: float
    compute_s: float
    memory_s: float
    flops: int
    bytes: int
    peak: float  # FLOP/s of the compute unit that bounds the problem's matmul FLOPs (or fp32 CUDA cores)
    peak_label: str  # "fp32 CUDA cores", "TF32 tensor cores", ...
    level: str  # the memory level(s) assumed
    gpu: str
    clock_mhz: int

    @property
    def limiter(self) -> str:
        return "compute" if self.compute_s >= self.memory_s else "memory"

    def least(self, launched: bool) -> float:
        """T_SOL for a time that includes a launch (`launched`: CUDA events, graph replay) or not (device time)."""
        return max(self.seconds, LAUNCH_S) if launched else self.seconds

    def assumed(self) -> str:
        """What a floor or bound assumed, for a flag's message."""
        return (f"{count_text(self.flops, 'FLOP')} at {count_text(self.peak, 'FLOP/s')} ({self.peak_label}) and "
                f"{count_text(self.bytes, 'B')} moved at {self.level}, on the {self.gpu} at {self.clock_mhz} MHz")


def admits_tf32(atol: float | None, rtol: float | None) -> bool:
    return atol is not None and rtol is not None and min(atol, rtol) >= TF32_TOLERANCE


def _peak(p: Peaks, dtype: str, tf32: bool) -> tuple[float, str]:
    """The unit an honest kernel uses for matmuls of this dtype under this tolerance."""
    rate = p.tensor(dtype) if dtype in ("fp16", "bf16", "fp8") else None
    if dtype == "fp8" and rate is None:  # a part without FP8 runs it as 16-bit
        return p.bf16, "BF16 tensor cores (no FP8 on this GPU)"
    if rate is not None:
        return rate, f"{dtype.upper()} tensor cores"
    if tf32:
        return p.tf32, "TF32 tensor cores (the tolerance admits TF32)"
    return p.fp32, "fp32 CUDA cores"


def _compute_s(work: WorkCount, p: Peaks, tf32: bool, *, tensor: bool = False, forced: bool = False) -> float:
    """Compute time: matmul FLOPs at their dtype's unit (`tensor`: all at the fastest 16-bit tensor rate; `forced`:
    only the FLOPs the inputs force, `FLOOR_FLOPS_RULE`), the rest at the fp32 CUDA cores."""
    rows = [o for o in work.ops if o.kind is Kind.MATMUL]
    matmul_s = sum((o.floor_flops if forced else o.flops) / (p.fastest_16bit if tensor else _peak(p, o.dtype, tf32)[0])
                   for o in rows)
    return max(matmul_s, work.flops_of(*(k for k in Kind if k is not Kind.MATMUL)) / p.fp32)


def _memory_s(work: WorkCount, p: Peaks, l2: bool = False) -> float:
    """Memory time at DRAM bandwidth; `l2`: what fits the L2 at L2 bandwidth (an unflushed L2 holding the working set)."""
    near = min(work.bytes, p.l2_bytes) if l2 else 0
    return near / p.l2_bw + (work.bytes - near) / p.dram


def sol_bound(work: WorkCount, peaks: Peaks, sm_mhz: int | None, tf32: bool) -> Bound:
    """T_SOL at the clock the time was measured at (`Peaks.at_clock`); memory at DRAM, as SOL-ExecBench."""
    p = peaks.at_clock(sm_mhz)
    main = max((o for o in work.ops if o.kind is Kind.MATMUL), key=lambda o: o.flops, default=None)
    peak, label = _peak(p, main.dtype if main else (work.dtype or "fp32"), tf32)
    compute, memory = _compute_s(work, p, tf32), _memory_s(work, p)
    clock = min(sm_mhz, peaks.boost_mhz) if sm_mhz else peaks.boost_mhz
    return Bound(max(compute, memory), compute, memory, work.flops, work.bytes, peak, label, "DRAM bandwidth", p.name, clock)


class AboveCause(StrEnum):
    """Which assumption of T_SOL a time under it broke (each, relaxed alone, lets the time through)."""

    TENSOR_CORES = "tensor cores"  # fp32 matmuls run on tensor cores (TF32 or lower precision inside the kernel)
    LESS_WORK = "less work"  # the reference computes FLOPs its output does not need (diag(a) @ b is a row scaling)
    L2 = "unflushed L2"  # the working set fits the L2 and the timing did not flush it between calls
    UNDER_LAUNCH = "under one launch"  # a time that includes a launch, shorter than one (`LAUNCH_S`)
    SEVERAL = "several"  # no assumption alone explains the time, all of them together do
    UNKNOWN = "unknown"  # not even all of them together: the count or the peak table may be wrong


def above_causes(work: WorkCount, peaks: Peaks, sm_mhz: int | None, tf32: bool, flushed: bool | None,
                 seconds: float, launched: bool) -> tuple[AboveCause, ...]:
    """Why `seconds` beats T_SOL (`Bound.least`): every assumption that, relaxed alone, lets it through; () when
    it does not beat T_SOL. `flushed`: whether the timing flushed the L2 (None: not known to)."""
    if seconds >= sol_bound(work, peaks, sm_mhz, tf32).least(launched):
        return ()
    if launched and seconds < LAUNCH_S:  # no relaxation of the work's bound explains a call shorter than its launch
        return (AboveCause.UNDER_LAUNCH,)
    p = peaks.at_clock(sm_mhz)
    base_c, base_m = _compute_s(work, p, tf32), _memory_s(work, p)
    tensor = base_c > _compute_s(work, p, tf32, tensor=True)
    less = work.floor_flops < work.flops_of(Kind.MATMUL)
    cached = not flushed and work.bytes > 0
    relaxed = {AboveCause.TENSOR_CORES: max(_compute_s(work, p, tf32, tensor=True), base_m) if tensor else None,
               AboveCause.LESS_WORK: max(_compute_s(work, p, tf32, forced=True), base_m) if less else None,
               AboveCause.L2: max(base_c, _memory_s(work, p, l2=True)) if cached else None}
    alone = tuple(c for c, t in relaxed.items() if t is not None and seconds >= t)
    if alone:
        return alone
    together = max(_compute_s(work, p, tf32, tensor=tensor, forced=less), _memory_s(work, p, l2=cached))
    return (AboveCause.SEVERAL,) if seconds >= together else (AboveCause.UNKNOWN,)


def floor_bound(work: WorkCount, peaks: Peaks, flushed: bool) -> Bound:
    """The floor: rated clock, the fastest 16-bit tensor rate for the FLOPs the inputs force, and memory at
    DRAM after an L2 flush (the L2 may still absorb writes up to its size), else at L2 for what fits."""
    p, l2 = peaks, peaks.l2_bytes
    reads, writes = work.read_bytes, work.write_bytes
    mb = f"{l2 / 2**20:.0f} MB"
    if flushed:
        absorbed = min(writes, l2)
        memory = reads / p.dram + absorbed / p.l2_bw + (writes - absorbed) / p.dram
        level = f"DRAM bandwidth (L2 flushed before each call; writes up to the {mb} L2 at L2 bandwidth)"
    else:
        near = min(reads + writes, l2)
        memory = near / p.l2_bw + (reads + writes - near) / p.dram
        fits = "the working set fits" if reads + writes <= l2 else f"the first {mb} at L2 bandwidth, the rest at DRAM"
        level = f"L2 bandwidth (the L2 was not known to be flushed; {fits})"
    compute = work.floor_flops / p.fastest_16bit
    return Bound(max(compute, memory), compute, memory, work.floor_flops, reads + writes, p.fastest_16bit,
                 "the fastest 16-bit tensor rate", level, p.name, p.boost_mhz)


def floor_seconds(floor: Bound | None, launched: bool) -> float:
    """The floor under a time: the work's (`floor_bound`, absent without a count) and, for a time that includes a
    launch, `LAUNCH_S`, whichever is longer; 0 when there is neither."""
    work = floor.seconds if floor is not None else 0.0
    return max(work, LAUNCH_S) if launched else work


def below_floor(seconds: float | None, floor: Bound | None, launched: bool = False) -> bool:
    """The one rule for an impossible time: below `FLOOR_MARGIN` of `floor_seconds`."""
    return seconds is not None and seconds < FLOOR_MARGIN * floor_seconds(floor, launched)


def floor_message(what: str, seconds: float, floor: Bound | None, launched: bool = False) -> str:
    """The flag on a time under the floor: the time, the floor, and what the floor assumed."""
    least = floor_seconds(floor, launched)
    head = f"{what} {time_text(seconds)} is faster than the hardware allows: below {FLOOR_MARGIN:.0%} of the {time_text(least)} "
    if floor is None or floor.seconds < least:
        work = f" (the work alone needs {time_text(floor.seconds)})" if floor is not None else ""
        return head + f"it takes to launch one kernel, timed from the host{work}"
    return head + f"floor, which assumes {floor.assumed()}"


def fraction(bound: Bound | None, seconds: float | None, launched: bool = False) -> float | None:
    """Fraction of speed of light, T_SOL / T (above 1: faster than the bound)."""
    if bound is None or seconds is None or seconds <= 0:
        return None
    return bound.least(launched) / seconds


def sol_score(t_kernel: float | None, t_reference: float | None, t_sol: float | None) -> float | None:
    """SOL-ExecBench's score (`SOL_SCORE_RULE`); None when a time is missing or the reference is not slower
    than the bound (the score's denominator would vanish or change sign)."""
    if t_kernel is None or t_reference is None or t_sol is None or t_reference <= t_sol:
        return None
    return 1.0 / (1.0 + (t_kernel - t_sol) / (t_reference - t_sol))
