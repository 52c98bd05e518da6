"""Page data for the evidence beside a run's verdict and flags: the witness of a failed trial, the last lines of a
dead worker, the launch attribution table and the dynamic checks (`collect.suspicion` names where each goes)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import suspects
from ..core.records import ValidationResult
from ..core.schema import GROUP_LABEL, Attribution, DynamicCheck, LaunchGroup, Mismatch, TrialResult, Verdict
from . import numbers, text

DYNAMIC_LABEL = {DynamicCheck.OUTPUT_AFTER_RETURN: "output changes after the call returned",
                 DynamicCheck.OUTPUT_ALIASES_INPUT: "output is an input's or the reference's memory",
                 DynamicCheck.OUTPUT_REUSED: "output reuses an earlier call's output",
                 DynamicCheck.INPUT_STATISTICS: "right on other input distributions",
                 DynamicCheck.HARNESS_PATCHED: "a timer, comparison or harness function replaced",
                 DynamicCheck.NONDETERMINISTIC: "two calls on the same inputs differ beyond the tolerance",
                 DynamicCheck.L2_PERSISTENCE: "persisting L2 set aside across the timer's flush"}
NOT_MEASURED = "not measured: this result was written before the check existed (re-validate to measure it)"


@dataclass(frozen=True)
class VerdictEvidence:
    title: str
    lines: tuple[str, ...]
    output_tail: str = ""


@dataclass(frozen=True)
class GroupRow:
    css: str
    group: str
    launches: str
    time: str
    share: str
    streams: str


@dataclass(frozen=True)
class AttributionView:
    measured: bool
    rows: tuple[GroupRow, ...] = ()
    kernels: tuple[tuple[str, str, str, str, str], ...] = ()  # name, group, stream, launches, time
    flags: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class DynamicRow:
    anchor: str
    css: str
    check: str
    result: str
    detail: str


def witness_lines(m: Mismatch | None, atol: float | None, rtol: float | None) -> tuple[str, ...]:
    """A failed comparison's witness, in the allclose rule's terms."""
    if m is None:
        return ()
    where = f"output {m.output}, index [{', '.join(str(i) for i in m.index)}]" if m.index else f"output {m.output} (a scalar)"
    return (f"First value outside the tolerance: {where}: expected {numbers.witness(m.expected)}, got {numbers.witness(m.actual)}.",
            f"{text.num(m.bad)} of {text.num(m.total)} values fail |a − b| ≤ atol + rtol·|b| (atol {text.num(atol, 6)}, rtol "
            f"{text.num(rtol, 6)}; b is the reference); the largest |a − b| is {numbers.witness(m.max_error)} where "
            f"{numbers.witness(m.allowed)} is allowed.")


def _trial_evidence(t: TrialResult, label: str, atol: float | None, rtol: float | None) -> VerdictEvidence:
    head = (f"{label}: seed {t.seed}, input shapes {' '.join(t.input_shapes) or text.DASH}" if t.seed >= 0 else
            f"{label}: input shapes {' '.join(t.input_shapes) or text.DASH}")
    return VerdictEvidence(head, (f"Failed: {t.problem}.", *witness_lines(t.mismatch, atol, rtol)))


def verdict_evidence(res: ValidationResult) -> VerdictEvidence | None:
    """The witness of a verdict other than correct: the failed trial, the failed re-check, or the worker's last lines."""
    atol, rtol = res.settings.atol.get(res.precision or "fp32"), res.settings.rtol.get(res.precision or "fp32")
    if res.verdict == Verdict.INCORRECT:
        bad = next((t for t in res.trials if t.passed is False), None)
        if bad is not None:
            kind = "jittered" if bad.jittered else "nominal"
            return _trial_evidence(bad, f"Trial {bad.index} ({kind} shapes)", atol, rtol)
        if res.recheck is not None and res.recheck.passed is False:  # the re-check's, or a timed call's own output
            what = res.recheck.inputs
            label = what[0].upper() + what[1:] if what else "The re-check after the timed loop"
            return _trial_evidence(res.recheck, label, atol, rtol)
        return VerdictEvidence("Why incorrect", (res.reason,))
    if res.verdict in (Verdict.CRASHED, Verdict.TIMEOUT):
        return VerdictEvidence("The last lines the worker wrote", (res.reason,), res.output_tail or "(no output kept)")
    if res.verdict in (Verdict.RUNTIME_ERROR, Verdict.COMPILE_ERROR):
        return VerdictEvidence("The error", (res.reason,), res.log[-3000:] if res.log else "")
    return None


def _streams(att: Attribution, group: LaunchGroup) -> str:
    found = sorted({k.stream for k in att.kernels if k.group == group})
    marked = [f"{s} (not waited for)" if s in att.unwaited_streams else f"{s} (not ordered after the caller)"
              if s in att.unordered_streams else str(s) for s in found]
    return ", ".join(marked) or text.DASH


def attribution_view(res: ValidationResult | None) -> AttributionView:
    att = res.kernel_launches.attribution if res is not None and res.kernel_launches else None
    if res is None or res.environment.gpu in (None, "cpu"):
        return AttributionView(False, note="not measured: launches are profiled on a CUDA device only")
    if att is None:
        return AttributionView(False, note=NOT_MEASURED)
    flagged = {f.field for f in suspects.attribution_flags(att)}
    rows = tuple(GroupRow("bad" if g is LaunchGroup.SUBMISSION and "attribution.submission" in flagged else "", GROUP_LABEL[g],
                          text.num(att.launches(g)), f"{text.num(att.device_us(g), 1)} µs", numbers.percent(att.share(g)),
                          _streams(att, g)) for g in LaunchGroup)
    kernels = tuple((k.name, GROUP_LABEL[k.group], str(k.stream), text.num(k.launches), f"{text.num(k.device_us, 1)} µs")
                    for k in att.kernels)
    names = ", ".join(att.source_kernels) or "none found"
    note = (f"One profiled call. The submission's kernels are those its source or extension defines ({names}). "
            f"The caller's stream is {att.call_stream if att.call_stream is not None else 'unknown'}; "
            f"The own-kernel share is {numbers.percent(suspects.own_kernel_share(att))}: a measured property, not a verdict "
            "(leaving a GEMM to cuBLAS and fusing the rest is allowed, as in KernelBench); the run is suspect only when none "
            f"of the submitted kernels runs. The boards' strict view keeps runs whose own kernels do at least "
            f"{suspects.STRICT_OWN_SHARE:.0%} of the kernel time.")
    return AttributionView(True, rows, kernels, tuple(f.message for f in suspects.attribution_flags(att)), note)


def dynamic_rows(res: ValidationResult | None) -> tuple[DynamicRow, ...]:
    if res is None:
        return ()
    if not res.dynamic_checks:
        return ()  # measured before these checks existed: the page says "not measured"
    return tuple(DynamicRow(f"evidence-dynamic-{d.check}", "bad" if d.tripped else "good" if d.tripped is False else "",
                            DYNAMIC_LABEL.get(DynamicCheck(d.check), d.check), "TRIPPED" if d.tripped else "passed" if d.tripped is False else "not run",
                            d.detail) for d in suspects.dynamic_findings(res))


def strength_lines(res: ValidationResult | None) -> tuple[str, ...]:
    """What the run page says of its problem's comparison (`validate.strength`): can it fail, and how it was made to."""
    if res is None:
        return ()
    cs = res.check_strength
    if cs is None:
        return ("Check strength: not measured (a result written before problems' checks were tested); whether this "
                "problem's comparison can fail is unknown.",)
    if cs.note:
        return (f"Check strength: {cs.note}.",)
    if not cs.weak:
        return ("Check strength: zeros, another input's answer, the input itself and mutants of the reference all fail "
                "this problem's comparison on its own inputs.",)
    out = [f"Check strength: on the problem's own inputs the comparison also accepts {', '.join(cs.passes)}."]
    if cs.strengthen:
        out.append(f"So the correctness trials above include inputs under which they fail ({', '.join(cs.strengthen)}), "
                   "compared as strictly as the problem's own.")
    if cs.still_pass:
        out.append(f"Still accepted even so: {', '.join(cs.still_pass)}. A \"correct\" here is a weak result, and the "
                   "boards do not count it as a win.")
    if cs.equivalent:
        out.append(f"Not counted, as they pass on every input tried (the same function within tolerance): {', '.join(cs.equivalent)}.")
    return tuple(out)
