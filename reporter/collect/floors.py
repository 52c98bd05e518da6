"""Hardware bounds for one GPU and one problem, and the floor under the times a harness recorded.

A recorded time is the harness's: its GPU is `run.recorded_gpu`, its clock and L2 flushing unknown, so
its floor assumes the rated clock and an L2 that may hold the working set (the lowest floor those allow).
A harness times a call from the host, so a recorded time's floor holds one kernel launch (`core.sol.LAUNCH_S`),
with or without a work count. A recorded time below the floor gets an error flag on the value itself (`timing.runtime`,
`timing.ref_runtime`), joined to any flag already there, and the recorded speedup is no result.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.checks import Flag, usable
from ..core.peaks import Peaks, peaks_for
from ..core.records import DEFAULT_PRECISION, Trace
from ..core.rules import rules_named
from ..core.schema import CheckSettings
from ..core.sol import Bound, admits_tf32, below_floor, floor_bound, floor_message, sol_bound
from ..core.units import to_ms
from ..core.work import WorkCount

NOT_COUNTED = "not counted yet: `reporter work DATA` counts each reference's FLOPs and bytes (no GPU needed)"


@dataclass(frozen=True)
class GpuBounds:
    """T_SOL and the floor of one problem on one GPU, or why there are none."""

    device: str | None  # the GPU's name as recorded
    peaks: Peaks | None
    note: str  # what was assumed about the name, or why there are no peaks
    sol: Bound | None = None
    floor: Bound | None = None
    tf32: bool = False
    clock_mhz: int | None = None  # the SM clock T_SOL was scaled to (None: rated)
    flushed: bool | None = None  # whether the timing flushed the L2 (None: not known to)

    @property
    def why(self) -> str:
        return "" if self.sol is not None else self.note


def work_why(reference: str | None, work: WorkCount | None) -> str:
    """Why a run has no hardware bound from its work, or "" when it has a count."""
    if reference is None:
        return "the trace holds no reference, so there is no work to count"
    if work is None:
        return NOT_COUNTED
    return "" if work.counted else f"counting the reference's work failed: {work.why}"


def bounds_on(device: str | None, work: WorkCount | None, *, clock_mhz: int | None, flushed: bool | None,
              tf32: bool) -> GpuBounds:
    """Bounds on one recorded device name; `flushed` None when the L2 flush is unknown (assumed not flushed)."""
    match = peaks_for(device)
    if match.peaks is None or work is None or not work.counted:
        return GpuBounds(device, match.peaks, match.why if match.peaks is None else "")
    return GpuBounds(device, match.peaks, match.why, sol_bound(work, match.peaks, clock_mhz, tf32),
                     floor_bound(work, match.peaks, bool(flushed)), tf32, clock_mhz, flushed)


def default_tf32(precision: str | None) -> bool:
    """Whether our default tolerance at a precision admits TF32."""
    s = CheckSettings()
    p = precision or DEFAULT_PRECISION
    return admits_tf32(s.atol.get(p), s.rtol.get(p))


def recorded_tf32(trace: Trace) -> bool:
    """Whether the tolerance that scored the run admits TF32: its rule set's (`run.rules`), else our default."""
    if trace.run.rules is None:
        return default_tf32(trace.run.precision)
    return admits_tf32(*rules_named(trace.run.rules).tolerance(trace.run.precision or DEFAULT_PRECISION))


def recorded_bounds(trace: Trace, work: WorkCount | None) -> GpuBounds:
    return bounds_on(trace.run.recorded_gpu, work, clock_mhz=None, flushed=None, tf32=recorded_tf32(trace))


def recorded_seconds(trace: Trace) -> tuple[float | None, float | None]:
    """The recorded kernel and reference times in seconds, read in the unit the harness claimed."""
    t = trace.metrics.timing
    if t is None:
        return None, None

    def s(v: float | None) -> float | None:
        ms = to_ms(v, t.unit) if usable(v) else None
        return ms / 1e3 if ms else None
    return s(t.runtime), s(t.ref_runtime)


def recorded_floor_flags(trace: Trace, work: WorkCount | None) -> list[Flag]:
    """An error flag on each recorded time below the floor of the recorded GPU."""
    b = recorded_bounds(trace, work)
    out = []
    for name, what, seconds in zip(("runtime", "ref_runtime"), ("the recorded runtime", "the recorded reference runtime"),
                                   recorded_seconds(trace)):
        # A harness times a call from the host: the launch floor holds with or without a work count.
        if seconds is not None and below_floor(seconds, b.floor, launched=True):
            # A reference time cannot be a kernel's trick: the harness timed a smaller problem than this reference.
            why = ("; the reference the harness timed did less work than this one, so this problem file is likely "
                   "another version than the one the run was scored with") if name == "ref_runtime" and b.floor is not None else ""
            out.append(Flag(f"timing.{name}", "error", floor_message(what, seconds, b.floor, launched=True) + why))
    return out


def merged(flags: list[Flag], more: list[Flag]) -> list[Flag]:
    """`flags` with `more` added; a field flagged twice keeps one flag (the worst severity) saying both."""
    out = {f.field: f for f in flags}
    for f in more:
        old = out.get(f.field)
        out[f.field] = f if old is None else Flag(f.field, "error" if "error" in (old.severity, f.severity) else "warn",
                                                  f"{old.message.rstrip('.')}. Also: {f.message}")
    return list(out.values())

