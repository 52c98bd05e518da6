"""Page data for re-measured timings: the three bases, host-bound marks, GPU labels and machine state.

Pure functions from a ValidationResult to strings and CSS classes; the templates only place them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ..core.checks import HOST_BOUND_RATIO, HOST_BOUND_SENTENCE, gpu_label, gpu_relation, host_bound, tolerance_note
from ..core.records import MachineState, ValidationResult
from ..core.schema import BASIS_LABEL, NOT_MEASURED, Basis, BasisStats, GpuReading, StopReason, TimingFigures, Verdict
from . import text
from .numbers import common_unit, time_html

DEFAULT_BASIS = Basis.DEVICE  # the headline and leaderboards: the basis that repeats
BASIS_NOTE = {
    Basis.DEVICE: "summed GPU time of the kernels and copies one call launches (CUPTI via torch.profiler)",
    Basis.GRAPH: "the call captured once as a CUDA graph and replayed; launch overhead gone, gaps between kernels kept",
    Basis.WALL: "CUDA events around the eager call, L2 flushed, inputs rotated: KernelBench's basis, host time included",
}


@dataclass(frozen=True)
class BasisView:
    """One timing basis as a leaderboard or grid shows it; only the default one is visible without a choice."""

    key: str  # the value kept in the URL: #basis=<key>
    label: str
    note: str
    hidden: bool
    rows: Any = None


def basis_view(basis: Basis, rows: Any) -> BasisView:
    return BasisView(basis.value, BASIS_LABEL[basis], BASIS_NOTE[basis], basis is not DEFAULT_BASIS, rows)


@dataclass(frozen=True)
class TimingRow:
    side: str
    basis: str
    median: str
    iqr: str
    spread: str  # min – max
    n: str
    stop: str
    note: str = ""
    css: str = ""


@dataclass(frozen=True)
class TimingView:
    rows: list[TimingRow]
    method: str  # how the figures were taken, for the section heading
    speedups: list[tuple[str, str, str]]  # (basis label, speedup text, css)
    host_bound: list[str]  # one sentence per host-bound side
    gpu: str  # "recorded on H100 · re-measured on H200"
    tolerance: str
    machine: str
    old_format: str  # non-empty for results written by an older harness
    reference: str = ""  # which reference timing the speedup used, when it was not this check's own


def _stop(st: BasisStats, target_pct: float) -> str:
    if st.stop is StopReason.CONVERGED:
        return f"95% CI within ±{target_pct:g}%"
    if st.stop is StopReason.TIME_CAP:
        half = (st.ci_high_ms - st.ci_low_ms) / 2 / st.median_ms * 100 if st.ci_high_ms and st.ci_low_ms and st.median_ms else None
        return "time cap" + (f" (CI ±{half:.1f}%)" if half is not None else "")
    return "—"


def _rows(side: str, figs: TimingFigures, target_pct: float, unit: str | None) -> list[TimingRow]:
    rows = []
    for basis in Basis:
        st = figs.on(basis)
        note = {Basis.DEVICE: figs.device_note, Basis.GRAPH: figs.graph_note, Basis.WALL: figs.wall_note}.get(basis) or ""
        if st is None:
            refused = note and "format-3" not in note and not note.startswith(NOT_MEASURED)
            shown = "dropped" if note.startswith("not used") else "not capturable" if basis is Basis.GRAPH and refused else text.DASH
            rows.append(TimingRow(side, BASIS_LABEL[basis], shown, text.DASH, text.DASH, text.DASH, text.DASH, note, "missing"))
            continue
        rows.append(TimingRow(side, BASIS_LABEL[basis], time_html(st.median_ms, unit), time_html(st.iqr_ms, unit),
                              Markup("{} – {}").format(time_html(st.min_ms, unit), time_html(st.max_ms, unit)), str(st.n),
                              _stop(st, target_pct),
                              css="headline" if basis is DEFAULT_BASIS else ""))
    return rows


def host_bound_sentences(res: ValidationResult) -> list[str]:
    out = []
    for side, figs in (("The kernel", res.kernel_timing), ("The reference", res.reference_timing)):
        if figs and figs.wall and figs.device and host_bound(figs.wall.median_ms, figs.device.median_ms):
            out.append(f"{side} is host-bound: {HOST_BOUND_SENTENCE.format(ratio=HOST_BOUND_RATIO)}")
    return out


def machine_line(m: MachineState | None) -> str:
    if m is None:
        return "clocks and load not recorded"
    parts = [f"SM clock {m.sm_clock_mhz} MHz" + (f" of {m.sm_clock_max_mhz}" if m.sm_clock_max_mhz else "")
             if m.sm_clock_mhz else "SM clock unknown",
             f"memory clock {m.mem_clock_mhz} MHz" if m.mem_clock_mhz else "memory clock unknown",
             f"power limit {m.power_limit_w:g} W" if m.power_limit_w else "power limit unknown",
             {True: "persistence on", False: "persistence off", None: "persistence unknown"}[m.persistence_mode],
             f"load average {m.load_avg_1m:g}" + (f" on {m.cpu_count} CPUs" if m.cpu_count else "")
             if m.load_avg_1m is not None else "load unknown"]
    return " · ".join(parts)


def timing_view(res: ValidationResult, recorded_gpu: str | None) -> TimingView:
    rows: list[TimingRow] = []
    sides = [(side, figs) for side, figs in (("kernel", res.kernel_timing), ("reference (eager)", res.reference_timing),
                                             ("reference (torch.compile)", res.compile_timing)) if figs is not None]
    # One unit for the whole table, so a column reads down without "0.137 ms" under "30.5 µs".
    unit = common_unit(st.median_ms for _, figs in sides for b in Basis if (st := figs.on(b)) is not None)
    for side, figs in sides:
        rows += _rows(side, figs, res.settings.ci_target_pct, unit)
    correct = res.verdict == Verdict.CORRECT
    speedups = [(BASIS_LABEL[b], text.speedup(res.speedup_on(b)) if correct else "kernel incorrect",
                 "headline" if b is DEFAULT_BASIS else "") for b in Basis]
    s = res.settings
    how = "the kernel timed here, the reference's stored timing reused" if res.reference_from else "kernel and reference interleaved"
    method = (f"three bases, {how}; each repeated until the median's 95% CI is within "
              f"±{s.ci_target_pct:g}% or {s.time_cap_s:g} s have passed")
    old = (f"Measured by an older harness (format {res.format}): wall time only, no IQR or confidence interval."
           if res.format < 4 else "")
    return TimingView(rows, method, speedups, host_bound_sentences(res), gpu_label(recorded_gpu, res.environment.gpu),
                      tolerance_note(gpu_relation(recorded_gpu, res.environment.gpu)), machine_line(res.machine), old,
                      reference_line(res))


def reading_text(r: GpuReading) -> str:
    parts = [f"SM clock {r.sm_clock_mhz} MHz" if r.sm_clock_mhz else "", f"{r.temperature_c} °C" if r.temperature_c is not None else ""]
    return ", ".join(p for p in parts if p) or "clock and temperature not read"


def reference_line(res: ValidationResult) -> str:
    """Which reference timing the speedup used and when it was taken, when it was not this check's own
    interleaved timing; or why a stored one was not used."""
    ref = res.reference_from
    if ref is not None:
        uses = "the first check to use it" if ref.uses == 0 else f"used by {ref.uses} check{'s' if ref.uses != 1 else ''} before this one"
        where = "on the CPU" if ref.gpu == "cpu" else f"on this GPU ({reading_text(ref.reading)})"
        line = (f"The reference's timing was taken on its own at {ref.taken_at}, in a worker that ran no submission, {where}, "
                f"and reused: {uses}.")
        return line + (f" It replaced an earlier timing: {ref.replaced}." if ref.replaced else "")
    if res.reference_not_reused:
        return f"A stored timing of the reference was not used ({res.reference_not_reused}): the reference was timed here."
    return ""
