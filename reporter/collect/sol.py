"""Every time of a run against the hardware: fraction of speed of light, SOL-ExecBench's score, the floor.

One `SolReport` per run, from its work count and its times: recorded ones on the recorded GPU, re-measured
ones on the GPU that measured them, each basis on its own. What the floor does to a time is decided here:
- the kernel's re-measured device time below the floor makes the run suspect: work escapes the timer
  (`floor_flags` with `SUSPECT_FIELD`, read by `collect.suspicion`);
- any other re-measured time below it drops that basis: no speedup on it (`dropped`);
- a recorded time below it is flagged on the value and leaves no recorded speedup (`collect.floors`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.checks import Flag
from ..core.frozen import freeze
from ..core.peaks import peaks_for
from ..core.records import DEFAULT_PRECISION, ValidationResult
from ..core.schema import BASIS_LABEL, Basis, TimingFigures
from ..core.sol import AboveCause, Bound, above_causes, admits_tf32, below_floor, floor_message, fraction, sol_score
from ..core.work import WorkCount
from .floors import GpuBounds, bounds_on, recorded_bounds, recorded_floor_flags, recorded_seconds, work_why
from .traces import RunRecord

SUSPECT_FIELD = "sol.kernel.device"  # the one floor flag that makes a run suspect
SOL_ANCHOR = "sol"  # the run page's section (`templates/run.html`)
RECORDED = "recorded"  # the basis name of a harness's own times


@dataclass(frozen=True)
class SideTime:
    """One time of one side on one basis, against the bounds of the GPU that took it."""

    side: str  # "kernel" or "reference"
    basis: str  # "recorded", or a `Basis` value
    seconds: float | None
    fraction: float | None  # T_SOL / T
    below_floor: bool
    above: tuple[AboveCause, ...] = ()  # a time under T_SOL, not under the floor: the assumptions it broke

    def __post_init__(self) -> None:
        freeze(self, ("above",))


@dataclass(frozen=True)
class SolReport:
    work: WorkCount | None
    why: str  # why there is no bound at all ("" when the work was counted)
    recorded: GpuBounds | None  # on the recorded GPU (None without a count)
    measured: GpuBounds | None  # on the re-measuring GPU (None without a count or a re-validation)
    times: tuple[SideTime, ...] = ()
    scores: Mapping[str, float | None] = field(default_factory=dict)  # basis -> the kernel's SOL score
    flags: tuple[Flag, ...] = ()  # one per re-measured time below the floor, field "sol.<side>.<basis>"

    def __post_init__(self) -> None:
        freeze(self, ("times", "flags"), ("scores",))

    def time(self, side: str, basis: str) -> SideTime | None:
        return next((t for t in self.times if t.side == side and t.basis == basis), None)

    def dropped(self, basis: str) -> bool:
        """No speedup on this basis: one of its two times is below the floor."""
        return any(t.below_floor for t in self.times if t.basis == basis)

    @property
    def suspect_flag(self) -> Flag | None:
        return next((f for f in self.flags if f.field == SUSPECT_FIELD), None)


def _measured_bounds(r: RunRecord, res: ValidationResult, work: WorkCount | None) -> GpuBounds:
    precision = res.precision or r.trace.run.precision or DEFAULT_PRECISION
    tf32 = admits_tf32(res.settings.atol.get(precision), res.settings.rtol.get(precision))
    peaks = peaks_for(res.environment.gpu).peaks
    flushed = peaks is not None and res.settings.flush_l2_mb * 2**20 >= peaks.l2_bytes  # the flush outgrows the L2
    clock = res.machine.sm_clock_mhz if res.machine is not None else None
    return bounds_on(res.environment.gpu, work, clock_mhz=clock, flushed=flushed, tf32=tf32)


def _median_s(figs: TimingFigures | None, basis: Basis) -> float | None:
    st = figs.on(basis) if figs is not None else None
    return st.median_ms / 1e3 if st is not None and st.median_ms > 0 else None


def launched(basis: str) -> bool:
    """Whether a time on `basis` includes a launch: all but the device time (a harness's recorded one does)."""
    return basis != Basis.DEVICE.value


def _side(b: GpuBounds, side: str, basis: str, seconds: float | None, work: WorkCount | None) -> SideTime:
    low = below_floor(seconds, b.floor, launched(basis))
    above: tuple[AboveCause, ...] = ()
    if seconds is not None and not low and work is not None and b.peaks is not None and b.sol is not None:
        above = above_causes(work, b.peaks, b.clock_mhz, b.tf32, b.flushed, seconds, launched(basis))
    # A time under the floor has no fraction of speed of light either: it counts nowhere, as its speedup does not.
    return SideTime(side, basis, seconds, None if low else fraction(b.sol, seconds, launched(basis)), low, above)


def sol_report(r: RunRecord, res: ValidationResult | None) -> SolReport:
    """The run's times against the hardware; without a work count, only why there is none."""
    work = r.work
    why = work_why(r.source.reference_source, work)
    rec = recorded_bounds(r.trace, work)
    k, ref = recorded_seconds(r.trace)
    # Without a work count (`why`) there is no bound, but the launch floor under a time from the host still holds.
    times = [_side(rec, "kernel", RECORDED, k, work), _side(rec, "reference", RECORDED, ref, work)]
    scores: dict[str, float | None] = {RECORDED: None if any(t.below_floor for t in times) else
                                       sol_score(k, ref, rec.sol.least(True) if rec.sol else None)}
    flags: list[Flag] = []
    meas = _measured_bounds(r, res, work) if res is not None else None
    if res is not None and meas is not None:
        for basis in Basis:
            ks, rs = _median_s(res.kernel_timing, basis), _median_s(res.reference_timing, basis)
            pair = [_side(meas, "kernel", basis.value, ks, work), _side(meas, "reference", basis.value, rs, work)]
            times += pair
            scores[basis.value] = None if any(t.below_floor for t in pair) else \
                sol_score(ks, rs, meas.sol.least(launched(basis.value)) if meas.sol else None)
            flags += [Flag(f"sol.{t.side}.{basis.value}", "error", floor_message(f"the {t.side}'s {BASIS_LABEL[basis]}",
                                                                                  t.seconds, meas.floor, launched(basis.value)))
                      for t in pair if t.below_floor and t.seconds is not None]
    return SolReport(work, why, rec, meas, tuple(times), scores, tuple(flags))


def floor_flags(r: RunRecord, res: ValidationResult | None) -> list[Flag]:
    """The suspect-level floor flag (the kernel's device time under the floor): work escapes the timer."""
    flag = sol_report(r, res).suspect_flag
    if flag is None:
        return []
    return [Flag(flag.field, "error", f"{flag.message}. Part of the work escapes the timer: done before the call, "
                                      "cached from an earlier one, or on a stream or device the profiler did not see")]


def speedup_dropped(r: RunRecord, res: ValidationResult | None, basis: str) -> bool:
    """Whether the speedup on `basis` ("recorded" or a `Basis` value) is no result: one of its times is under the floor."""
    if basis == RECORDED:
        return bool(recorded_floor_flags(r.trace, r.work))
    return sol_report(r, res).dropped(basis)


def _ms(b: GpuBounds | None, which: str, basis: str = Basis.DEVICE.value) -> float | None:
    """T_SOL or the floor in ms, for a time on `basis` (a recorded one includes a launch: `Bound.least`)."""
    bound: Bound | None = getattr(b, which) if b is not None else None
    return bound.least(launched(basis)) * 1e3 if bound is not None else None


def _frac(rep: SolReport, side: str, basis: str) -> float | None:
    t = rep.time(side, basis)
    return t.fraction if t is not None else None


def _cause(rep: SolReport, basis: str) -> str | None:
    """The kernel's time under T_SOL on `basis`: the assumptions it broke ("tensor cores; unflushed L2"), else None."""
    t = rep.time("kernel", basis)
    return "; ".join(t.above) if t is not None and t.above else None


def sol_row(rep: SolReport, reported: bool) -> dict[str, object]:
    """A run's hardware columns; `reported`: whether its speedup is a result (correct, not suspect)."""
    w = rep.work
    row: dict[str, object] = {"work_note": rep.why or None}
    row["below_floor"] = "; ".join(f"{t.side} {t.basis}" for t in rep.times if t.below_floor) or None
    # The one place an impossible recorded time is decided: every aggregate on the recorded basis reads this column.
    row["recorded_impossible"] = rep.dropped(RECORDED)
    if w is None or rep.why:
        return row
    row.update(work_flops=w.flops, work_bytes=w.bytes, work_intensity=w.intensity, work_dtype=w.dtype,
               recorded_sol_ms=_ms(rep.recorded, "sol", RECORDED), recorded_floor_ms=_ms(rep.recorded, "floor", RECORDED),
               recorded_sol_fraction=_frac(rep, "kernel", RECORDED), recorded_ref_sol_fraction=_frac(rep, "reference", RECORDED),
               recorded_sol_exec_score=rep.scores.get(RECORDED), recorded_sol_cause=_cause(rep, RECORDED),
               sol_ms=_ms(rep.measured, "sol"), floor_ms=_ms(rep.measured, "floor"))
    for b in Basis:
        row.update({f"sol_fraction_{b.value}": _frac(rep, "kernel", b.value), f"ref_sol_fraction_{b.value}": _frac(rep, "reference", b.value),
                    f"sol_exec_score_{b.value}": rep.scores.get(b.value), f"sol_cause_{b.value}": _cause(rep, b.value)})
    measured = rep.measured is not None and row[f"sol_fraction_{Basis.DEVICE.value}"] is not None
    basis, bounds = (Basis.DEVICE.value, rep.measured) if measured else (RECORDED, rep.recorded)
    if reported and not rep.dropped(basis) and bounds is not None and bounds.peaks is not None:
        row.update(sol_fraction=_frac(rep, "kernel", basis), sol_exec_score=rep.scores.get(basis), sol_gpu=bounds.peaks.name,
                   sol_cause=_cause(rep, basis))
    return row
