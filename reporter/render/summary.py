"""One run reduced to what listing tables need: its group and problem, and a summary row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from ..collect.sol import RECORDED, sol_report, speedup_dropped
from ..collect.suspicion import evidence_anchor, flag_count, suspicion
from ..collect.traces import RunRecord
from ..core import suspects
from ..core.checks import Flag, speedup_reported
from ..core.judgement import Judgement, judge_run
from ..core.units import to_ms
from ..core.vocab import MISSING_KEY, RevalidationState, RunVerdict, Source
from . import numbers, text
from .revalidation import ValidationView
from .sol_view import DROPPED, above_label
from .timing_view import DEFAULT_BASIS


@dataclass(frozen=True)
class RunSummary:
    """The key figures an index row shows for a run."""

    verdict: str  # a RunVerdict, or a recorded verdict outside it, shown as written
    verdict_source: Source
    turns: str
    runtime_value: float | None  # in `time_unit`
    ref_runtime_value: float | None
    time_unit: str  # "ms" when re-measured; the unit the harness claimed when recorded
    speedup: str
    speedup_value: float | None
    runtime_flag: Flag | None
    flags: int  # flagged recorded values, and the cheat findings that make the run suspect
    evidence: str = ""  # the run page's anchor of the evidence for the verdict shown (why suspect, why incorrect)
    correct: bool = False  # its verdict (ours, else the harness's) is correct, whatever mark `verdict` shows instead
    caveats: tuple[str, ...] = ()  # on a re-validated run: "weak check", "checks incomplete" (`core.suspects`)
    sol_value: float | None = None  # the kernel's fraction of speed of light where its speedup is a result
    sol_gpu: str = ""  # the GPU that fraction is of
    sol_above: str = ""  # a fraction above 100%: "above T_SOL: tensor cores" (`sol_view.above_label`), else ""
    # The run's own rules' verdict where it differs from our audit's ("kernelbench-2025: correct · tolerance"), so a
    # listing never shows our verdict alone when the benchmark that scored the run said otherwise.
    benchmark_note: str = ""

    @property
    def sol(self) -> str:
        return numbers.percent(self.sol_value)

    def _html(self, value: float | None) -> Markup:
        if self.verdict_source == Source.RECORDED:
            return numbers.recorded_time_html(value, self.time_unit)
        # kernel and reference side by side in one unit: never "0.448 ms" beside "49.2 µs"
        return numbers.time_html(value, numbers.common_unit((self.runtime_value, self.ref_runtime_value)))

    def _sort(self, value: float | None) -> str:
        ms = to_ms(value, self.time_unit) if value is not None and self.time_unit else None
        return repr(ms) if ms is not None else ""

    @property
    def runtime(self) -> Markup:
        return self._html(self.runtime_value)

    @property
    def ref_runtime(self) -> Markup:
        return self._html(self.ref_runtime_value)

    @property
    def runtime_sort(self) -> str:
        """The runtime in ms, for sorting a column whose cells show different units."""
        return self._sort(self.runtime_value)

    @property
    def ref_runtime_sort(self) -> str:
        return self._sort(self.ref_runtime_value)


WEAK_CHECK = "weak check"  # a caveat on a correct verdict: its problem's comparison accepts a wrong answer
CHECKS_INCOMPLETE = "checks incomplete"  # a caveat: a suspect check (or the check strength) did not run


def title(r: RunRecord) -> str:
    run = r.trace.run
    if run.level is not None and run.problem_id is not None:
        return f"L{run.level} · problem {run.problem_id}"
    return run.title or r.run_id


def group_key(r: RunRecord) -> tuple[str, str]:
    """(benchmark, configuration): the group a run is listed and ranked in."""
    run = r.trace.run
    return (run.benchmark or MISSING_KEY, run.configuration or MISSING_KEY)


def problem_key(r: RunRecord) -> tuple[int, int, str] | None:
    run = r.trace.run
    if not run.complete or run.level is None or run.problem_id is None:
        return None
    return (run.level, run.problem_id, run.problem_file or run.title or "")


def _marked(r: RunRecord, v: ValidationView, verdict: str) -> tuple[str, str, int]:
    """The verdict a listing shows (a reward hack or suspect run says so first), its evidence's anchor, and
    the run's flags: its flagged recorded values and the findings that make it suspect (never "0" beside "suspect")."""
    sus = suspicion(r, v.result)
    shown = RunVerdict.REWARD_HACK if sus.reward_hack else RunVerdict.CONTAMINATION if sus.contaminated \
        else RunVerdict.SUSPECT if sus.suspect else verdict
    return shown, evidence_anchor(sus, v.result), flag_count(r, sus)


def run_summary(r: RunRecord, v: ValidationView) -> RunSummary:
    run, t = r.trace.run, r.trace.metrics.timing
    flags = {f.field: f for f in r.flags}
    used = run.turns_used if run.turns_used is not None else len(r.trace.turns) or None  # no transcript: unknown, not 0
    turns = f"{text.num(used)} / {text.num(run.max_turns)}" if used is not None or run.max_turns is not None else "not recorded"
    if not run.complete:
        return RunSummary(RunVerdict.PARTIAL, Source.PARTIAL, turns, None, None, "", text.DASH, None, None, len(r.flags))
    if v.state is RevalidationState.MEASURED and v.result is not None:
        res = v.result
        kd = res.kernel_timing.device if res.kernel_timing else None
        rd = res.reference_timing.device if res.reference_timing else None
        # The headline is device time; an incorrect kernel's speedup is no result, so the verdict stands in for it.
        shown, anchor, flagged = _marked(r, v, res.verdict)
        speed = _reported(r, v, str(res.verdict), res.speedup, DEFAULT_BASIS.value)
        caveats = (WEAK_CHECK,) * bool(suspects.weak_check(res)) + (CHECKS_INCOMPLETE,) * bool(suspects.missing_checks(res))
        j = judge_run(r.trace.run, res)  # correct as the boards count it (`Judgement.counted`)
        return RunSummary(shown, Source.RE_VALIDATED, turns, kd.median_ms if kd else None,
                          rd.median_ms if rd else None, "ms", *speed, None, flagged, anchor, bool(j.counted),
                          caveats, **_sol(r, v, DEFAULT_BASIS.value, speed[1] is not None), benchmark_note=_benchmark_note(j))
    # Recorded times stay in the unit the harness claimed: a ~1000x mix-up is flagged, never "fixed".
    shown, anchor, flagged = _marked(r, v, run.recorded_verdict or RunVerdict.UNKNOWN)
    speed = _reported(r, v, str(run.recorded_verdict), t.speedup if t else None, RECORDED)
    return RunSummary(shown, Source.RECORDED, turns,
                      t.runtime if t else None, t.ref_runtime if t else None, t.unit if t else "ms",
                      *speed, flags.get("timing.runtime"), flagged, anchor, run.recorded_verdict == RunVerdict.CORRECT,
                      **_sol(r, v, RECORDED, speed[1] is not None))


def _benchmark_note(j: Judgement) -> str:
    """The run's own rules' verdict and the cause, where the replay disagrees with our audit (`core.judgement`)."""
    return f"{j.rules.name}: {j.benchmark} · {j.cause_class}" if j.disagree else ""


def _sol(r: RunRecord, v: ValidationView, basis: str, reported: bool) -> dict[str, Any]:
    """The kernel's fraction of speed of light on the basis its speedup is on, where that speedup is a result."""
    rep = sol_report(r, v.result)
    t, b = rep.time("kernel", basis), rep.measured if basis != RECORDED else rep.recorded
    if not reported or t is None or t.fraction is None or b is None or b.peaks is None:
        return {}
    return {"sol_value": t.fraction, "sol_gpu": b.peaks.name, "sol_above": above_label(t.above)}


def _reported(r: RunRecord, v: ValidationView, verdict: str, speedup: float | None, basis: str) -> tuple[str, float | None]:
    """The speedup a listing shows, and its value: none for an incorrect, failed or suspect kernel
    (`checks.speedup_reported`), nor for times under the hardware floor; the verdict or the mark stands in for it."""
    excluded = suspicion(r, v.result).excluded
    if speedup_reported(verdict == RunVerdict.CORRECT, excluded):
        if speedup_dropped(r, v.result, basis):
            return DROPPED, None
        return text.speedup(speedup), speedup
    return "suspect: no speedup" if excluded else "kernel incorrect" if verdict == RunVerdict.INCORRECT else text.DASH, None
