"""One run reduced to what tables and aggregates need: a summary row and a leaderboard outcome."""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import Flag
from ..collect.traces import RunRecord
from ..units import UNIT_LABEL, UNIT_TO_US
from ..validate.schema import Basis, TimingFigures, Verdict
from . import leaderboard as lb
from . import text
from .revalidation import ValidationView

UNKNOWN = "unknown"
# The verdict of a run whose kernel trips an error-level static cheat check that no reviewer cleared.
SUSPECT = "suspect"
# Verdicts a harness writes when it never judged the kernel: such a run says nothing about compiling.
UNJUDGED = ("unknown", "not_evaluated")


@dataclass(frozen=True)
class RunSummary:
    """The key figures an index row shows for a run."""

    verdict: str
    verdict_source: str  # "re-validated" | "recorded" | "partial"
    turns: str
    runtime: str
    ref_runtime: str
    speedup: str
    speedup_value: float | None
    runtime_flag: Flag | None
    flags: int


def title(r: RunRecord) -> str:
    run = r.trace.run
    if run.level is not None and run.problem_id is not None:
        return f"L{run.level} · problem {run.problem_id}"
    return run.title or r.run_id


def group_key(r: RunRecord) -> tuple[str, str]:
    """(benchmark, configuration): the group a run is listed and ranked in."""
    run = r.trace.run
    return (run.benchmark or UNKNOWN, run.configuration or UNKNOWN)


def problem_key(r: RunRecord) -> tuple[int, int, str] | None:
    run = r.trace.run
    if not run.complete or run.level is None or run.problem_id is None:
        return None
    return (run.level, run.problem_id, run.problem_file or run.title or "")


def run_summary(r: RunRecord, v: ValidationView) -> RunSummary:
    run, t = r.trace.run, r.trace.metrics.timing
    flags = {f.field: f for f in r.flags}
    turns = f"{run.turns_used if run.turns_used is not None else len(r.trace.turns)} / {text.num(run.max_turns)}"
    if not run.complete:
        return RunSummary("partial", "partial", turns, text.DASH, text.DASH, text.DASH, None, None, len(r.flags))
    if v.state == "measured" and v.result is not None:
        res = v.result
        kd = res.kernel_timing.device if res.kernel_timing else None
        rd = res.reference_timing.device if res.reference_timing else None
        # The headline is device time; an incorrect kernel's speedup is no result, so the verdict stands in for it.
        correct = res.verdict == Verdict.CORRECT
        return RunSummary(SUSPECT if r.suspect else res.verdict, "re-validated", turns, text.ms(kd.median_ms if kd else None),
                          text.ms(rd.median_ms if rd else None), text.speedup(res.speedup) if correct else "kernel incorrect",
                          res.speedup if correct else None, None, len(r.flags))
    unit = UNIT_LABEL[t.unit] if t else ""
    return RunSummary(SUSPECT if r.suspect else run.recorded_verdict or UNKNOWN, "recorded", turns,
                      f"{text.num(t.runtime)} {unit}" if t and t.runtime is not None else text.DASH,
                      f"{text.num(t.ref_runtime)} {unit}" if t and t.ref_runtime is not None else text.DASH,
                      text.speedup(t.speedup if t else None), t.speedup if t else None,
                      flags.get("timing.runtime"), len(r.flags))


def _device_ms(figs: TimingFigures | None) -> float | None:
    return figs.device.median_ms if figs and figs.device else None


def outcome(r: RunRecord, v: ValidationView, href: str) -> lb.Outcome | None:
    """The aggregate view of one run; partial runs and runs without a problem identity have none."""
    problem = problem_key(r)
    if problem is None:
        return None
    run, t = r.trace.run, r.trace.metrics.timing
    res = v.result if v.state == "measured" else None
    measured = res is not None and res.kernel_timing is not None and res.reference_timing is not None
    to_ms = UNIT_TO_US[t.unit] / 1e3 if t else 1.0
    verdict = res.verdict if res is not None else (run.recorded_verdict or UNKNOWN)
    static_error = any(f.severity == "error" for f in r.findings)
    return lb.Outcome(
        run_id=r.run_id, href=href, model=run.model or UNKNOWN, group=group_key(r), problem=problem,
        recorded_correct=None if run.recorded_verdict is None else run.recorded_verdict == "correct",
        revalidated_correct=None if res is None else res.verdict == "correct",
        compiled=(verdict != "compile_error") if verdict not in UNJUDGED and r.trace.final_kernel is not None else None,
        submitted=r.trace.final_kernel is not None,
        speedup=res.speedup if measured and res is not None else (t.speedup if t else None),
        speedup_source="re-validated" if measured else ("recorded" if t and t.speedup is not None else ""),
        speedups=tuple((b.value, res.speedup_on(b)) for b in Basis) if measured and res is not None else (),
        kernel_ms=_device_ms(res.kernel_timing) if measured and res else (t.runtime * to_ms if t and t.runtime is not None else None),
        ref_ms=_device_ms(res.reference_timing) if measured and res else
        (t.ref_runtime * to_ms if t and t.ref_runtime is not None else None),
        turns=run.turns_used if run.turns_used is not None else len(r.trace.turns),
        tokens=run.tokens_total, flagged=bool(r.flags) or v.disagreements > 0 or static_error, suspect=r.suspect,
        verdict=verdict)
