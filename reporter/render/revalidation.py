"""Page data for a run's re-validation: what we measured, beside what the harness recorded.

Every agree/disagree decision comes from `checks`; this module only turns results into the strings and
CSS classes the template prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..collect.validation import CachedValidation
from ..core import checks
from ..core.records import DEFAULT_PRECISION, RecordedMetrics, ValidationResult
from ..core.schema import Basis, LaunchStats, TimingFigures, TrialResult, Verdict
from ..core.vocab import RevalidationState
from . import numbers, text
from .timing_view import TimingView, timing_view

# Said once above the trials when a passing one shows an error above its bound (checks.passes_beyond_tolerance).
ALLCLOSE_WHY = ("A pass can show a max relative error above rtol (or a max absolute error above atol): relative error is "
                "|kernel − reference| ÷ (|reference| + atol), and the rule adds the two bounds, so elements where the "
                "reference is near 0 are held to atol and large ones to rtol·|reference|.")


@dataclass(frozen=True)
class ComparisonRow:
    label: str
    recorded: str
    reproduced: str
    agrees: bool | None
    reason: str

    @property
    def css(self) -> str:
        return "bad" if self.agrees is False else "good" if self.agrees else ""


@dataclass(frozen=True)
class TrialRow:
    css: str
    index: int
    seed: int
    kind: str
    shapes: str
    max_abs: str
    max_rel: str
    result: str


@dataclass(frozen=True)
class ValidationView:
    """What the run page shows of a re-validation, or why there is none."""

    state: RevalidationState
    result: ValidationResult | None = None
    where: str = ""
    comparisons: tuple[ComparisonRow, ...] = ()
    timing: TimingView | None = None
    launch_rows: tuple[tuple[str, ...], ...] = ()
    trial_rows: tuple[TrialRow, ...] = ()
    tolerance_note: str = ""
    verdict_flip: str | None = None
    errors: tuple[str, ...] = field(default_factory=tuple)
    launch_note: str = ""  # why the launch table's CUDA time differs from device time, when it does

    @property
    def disagreements(self) -> int:
        return sum(1 for c in self.comparisons if c.agrees is False)

    @property
    def disagreement_text(self) -> str:
        n = self.disagreements
        return f"{n} disagreement{'s' if n != 1 else ''}" if n else ""


def _wall_ms(figs: TimingFigures | None) -> float | None:
    return figs.wall.median_ms if figs and figs.wall else None


def _with_unit(value: float | int | None, unit: str) -> str:
    return f"{text.num(value)} {unit}" if value is not None else text.DASH


def comparisons(m: RecordedMetrics, recorded_verdict: str | None, res: ValidationResult,
                recorded_gpu: str | None = None) -> tuple[ComparisonRow, ...]:
    """The recorded-vs-reproduced table, one row per figure both sides can have.

    Times are compared on wall time, the harness's own basis, and only claim agreement on the same GPU model.
    """
    rows = [ComparisonRow("verdict", recorded_verdict or text.DASH, res.verdict,
                          None if recorded_verdict is None else recorded_verdict == res.verdict,
                          checks.verdict_flip(recorded_verdict, res.verdict) or "")]
    t = m.timing
    unit = t.unit if t else "ms"
    relation = checks.gpu_relation(recorded_gpu, res.environment.gpu)
    ours = numbers.common_unit((_wall_ms(res.kernel_timing), _wall_ms(res.reference_timing)))
    for label, rec, figs in (("runtime (wall time)", t.runtime if t else None, res.kernel_timing),
                             ("ref runtime (wall time)", t.ref_runtime if t else None, res.reference_timing)):
        agree, why = checks.compare_runtime(rec, unit, _wall_ms(figs), relation)
        # the recorded side stays in the unit the harness claimed: a ~1000x mix-up shows as a flag, not as a fix
        rows.append(ComparisonRow(label, numbers.recorded_time_html(rec, unit), numbers.time_html(_wall_ms(figs), ours), agree, why))
    rec_sp, sp = (t.speedup if t else None), res.speedup_on(Basis.WALL)
    correct = res.verdict == Verdict.CORRECT
    rows.append(ComparisonRow("speedup (wall time)", text.speedup(rec_sp), text.speedup(sp) if correct else "kernel incorrect",
                              *checks.compare_speedup(rec_sp, sp, relation, correct)))
    worst_abs = max((x.max_abs_error for x in res.trials if x.max_abs_error is not None), default=None)
    worst_rel = max((x.max_rel_error for x in res.trials if x.max_rel_error is not None), default=None)
    p = m.precision
    rows.append(ComparisonRow("max abs error", text.num(p.max_abs_error) if p else text.DASH, text.num(worst_abs), None, ""))
    rows.append(ComparisonRow("max rel error", text.num(p.max_rel_error) if p else text.DASH, text.num(worst_rel), None, ""))
    la = m.launches
    for label, rec_n, st in (("kernel launches", la.kernel_launches if la else None, res.kernel_launches),
                             ("ref launches", la.ref_launches if la else None, res.reference_launches)):
        got = st.launches if st else None
        rows.append(ComparisonRow(label, text.num(rec_n), text.num(got),
                                  *checks.compare_count(rec_n, got, "torch.profiler, kernels only")))
    mem = m.memory
    for label, rec_mb, got_b in (("kernel peak memory", mem.kernel_peak_mb if mem else None, res.kernel_peak_bytes),
                                 ("ref peak memory", mem.ref_peak_mb if mem else None, res.reference_peak_bytes)):
        got_mb = got_b / 1e6 if got_b is not None else None
        rows.append(ComparisonRow(label, _with_unit(rec_mb, "MB"), _with_unit(got_mb, "MB"), *checks.compare_ratio(rec_mb, got_mb)))
    return tuple(rows)


def _launch_rows(res: ValidationResult) -> tuple[tuple[str, ...], ...]:
    if not (res.kernel_launches or res.reference_launches):
        return ()
    rows = []
    pairs: tuple[tuple[str, LaunchStats | None, int | None], ...] = (
        ("kernel", res.kernel_launches, res.kernel_peak_bytes), ("reference", res.reference_launches, res.reference_peak_bytes))
    unit = numbers.common_unit(la.cuda_time_us / 1e3 for _, la, _ in pairs if la)  # the column in one unit
    for label, la, peak in pairs:
        rows.append((label, text.num(la.launches) if la else text.DASH,
                     numbers.time_ms(la.cuda_time_us / 1e3, unit) if la else text.DASH,
                     f"{la.memcpy} / {la.memset}" if la else text.DASH,
                     _with_unit(peak / 1e6 if peak is not None else None, "MB")))
    return tuple(rows)


def _bounds(res: ValidationResult, recorded: str | None) -> tuple[str, float | None, float | None]:
    """(precision, atol, rtol) the result was checked at."""
    # The result says which precision it checked; results written before it did used the trace's, or the default.
    precision = res.precision or recorded or DEFAULT_PRECISION
    return precision, res.settings.atol.get(precision), res.settings.rtol.get(precision)


def _trial_rows(res: ValidationResult, recorded: str | None, trials: tuple[TrialResult, ...] | None = None) -> tuple[TrialRow, ...]:
    _, atol, rtol = _bounds(res, recorded)

    def result(t: TrialResult) -> str:
        why = checks.passes_beyond_tolerance(t.max_abs_error, t.max_rel_error, atol, rtol) if t.passed else None
        return (("pass" if t.passed else "FAIL" if t.passed is False else "skipped") + (f" — {text.home_paths(t.problem)}" if t.problem else "")
                + (f" ({why}: passes by the rule above)" if why else ""))
    return tuple(TrialRow(
        css="good" if t.passed else "bad" if t.passed is False else "", index=t.index, seed=t.seed,
        kind=t.inputs or ("jittered" if t.jittered else "nominal"), shapes=" ".join(t.input_shapes),
        max_abs=text.num(t.max_abs_error), max_rel=text.num(t.max_rel_error), result=result(t),
    ) for t in (res.trials if trials is None else trials))


def statistics_rows(res: ValidationResult, recorded: str | None = None) -> tuple[TrialRow, ...]:
    """The input-statistics trials (nominal shapes, other input distributions), as trial rows."""
    return _trial_rows(res, recorded, res.statistics_trials)


def _launch_note(res: ValidationResult) -> str:
    """Why the profiled call's CUDA time differs from the device time in the timing table, when it does."""
    sides = []
    for side, la, figs in (("kernel", res.kernel_launches, res.kernel_timing), ("reference", res.reference_launches,
                                                                                res.reference_timing)):
        device = figs.device.median_ms if figs and figs.device else None
        if la is not None and device and la.cuda_time_us > 0 and not checks.within_tolerance(la.cuda_time_us / 1e3, device):
            unit = numbers.common_unit((la.cuda_time_us / 1e3, device))
            sides.append(f"{side} {numbers.time_ms(la.cuda_time_us / 1e3, unit)} here, {numbers.time_ms(device, unit)} device time")
    if not sides:
        return ""
    return (f"CUDA time and device time differ ({'; '.join(sides)}) because they time different calls: CUDA time is one "
            "call profiled right after another on the same inputs, kernels only, with the GPU's caches warm; device time "
            f"is the median over many calls, each after a {res.settings.flush_l2_mb} MB L2 flush, copies included.")


def _tolerance_note(res: ValidationResult, recorded: str | None) -> str:
    s = res.settings
    precision, atol, rtol = _bounds(res, recorded)
    assumed = res.precision_assumed or recorded is None
    why = f" (no precision recorded in the trace: checked at {precision}, the default)" if assumed else ""
    beyond = any(t.passed and checks.passes_beyond_tolerance(t.max_abs_error, t.max_rel_error, atol, rtol) for t in res.trials)
    return (f"Tolerance for {precision}{why}: atol {text.num(atol, 6)}, rtol {text.num(rtol, 6)}; a trial passes when "
            f"{checks.ALLCLOSE_RULE}.{' ' + ALLCLOSE_WHY if beyond else ''} Jittered trials resize the "
            f"problem by up to ±{s.jitter_fraction:.0%} through popcorn_pri.jitter_int."
            + (f" This problem: {res.jitter_note}, so no trial counts as jittered." if res.jitter_note else ""))


def validation_view(has_kernel: bool, cached: CachedValidation | None, m: RecordedMetrics,
                    recorded_verdict: str | None, precision: str | None, recorded_gpu: str | None = None) -> ValidationView:
    if not has_kernel:
        return ValidationView(RevalidationState.NO_KERNEL)
    if cached is None:
        return ValidationView(RevalidationState.NOT_VALIDATED)
    res = cached.result
    env = res.environment
    where = (f"{env.gpu or 'unknown GPU'} · torch {env.torch or '?'} · CUDA {env.cuda or '?'} · driver {env.driver or '?'}"
             f" · measured {res.measured_at or 'at an unknown time'} · {cached.shown_path}")
    return ValidationView(
        RevalidationState.MEASURED, res, where, comparisons(m, recorded_verdict, res, recorded_gpu), timing_view(res, recorded_gpu),
        _launch_rows(res),
        _trial_rows(res, precision), _tolerance_note(res, precision), checks.verdict_flip(recorded_verdict, res.verdict),
        tuple(str(e) for e in cached.errors), _launch_note(res))
