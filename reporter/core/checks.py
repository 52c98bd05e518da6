"""Sanity checks on recorded values. A check never changes a value: it says what is wrong with it.

Each flag is keyed by the field it concerns (``group.field``) so the page can put it next to the number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from .gpus import GpuName, gpu_model, gpu_name  # noqa: F401 - re-exported: the rules' vocabulary
from .records import NsightMetrics, RecordedMetrics, Trace
from .units import UNIT_LABEL, UNIT_LADDER, UNIT_TO_US

# A CUDA kernel launch costs a few microseconds end to end; no timed forward pass can beat one launch.
LAUNCH_FLOOR_US = 2.0
# The largest integer the runs table holds (pandas Int64); a recorded integer beyond ±this is flagged and
# empty (<NA>) in tables and CSVs, while its page shows it as recorded.
TABLE_INT_LIMIT = 2**63 - 1


def fast_n(speeds: Sequence[float], p: float) -> int:
    """fast_p's numerator: the problems whose counting speedup is strictly above p (KernelBench's `> p`)."""
    return sum(1 for x in speeds if x > p)


def speedup_reported(correct: bool | None, suspect: bool | None) -> bool:
    """Whether a run's speedup is a result: only a correct kernel that is not suspect (or a reward hack) has
    one. An incorrect, failed or suspect kernel's time is still shown as measured or recorded, but its
    `speedup` is null in every table, export, page and summary line."""
    return correct is True and not suspect


@dataclass(frozen=True)
class Flag:
    field: str
    severity: Literal["error", "warn"]
    message: str


def bottleneck_label(sm_pct: float | None, mem_pct: float | None) -> str | None:
    """NVIDIA's SOLBottleneck rule (sections/SpeedOfLight.py)."""
    if sm_pct is None or mem_pct is None:
        return None
    hi = max(sm_pct, mem_pct)
    if hi >= 80:
        return "compute-bound (high throughput)" if sm_pct >= mem_pct else "memory-bound (high throughput)"
    if sm_pct < 60 and mem_pct < 60:
        return "latency-bound"
    if abs(sm_pct - mem_pct) >= 10:
        return "compute-bound" if sm_pct > mem_pct else "memory-bound"
    return "balanced"


def same_gpu(a: str | None, b: str | None) -> bool | None:
    """Whether two recorded GPU names are the same model (`gpu_relation`); None when either is unknown."""
    relation = gpu_relation(a, b)
    return None if relation is GpuRelation.UNKNOWN else relation is GpuRelation.SAME


def _pct_flags(prefix: str, name: str, value: float | None) -> list[Flag]:
    if value is None or 0.0 <= value <= 100.0:
        return []
    if value > 100:
        why = (f"{value:g}% is outside 0–100. ncu's .pct metrics are already percentages; multiplying one by 100 "
               f"again gives this (the value would be {value / 100:.4g}%), or a ratio was shown as a percent.")
    else:
        why = f"{value:g}% is negative: no percentage can be."
    return [Flag(f"{prefix}.{name}", "error", why)]


def usable(*values: float | int | None) -> bool:
    """True when every value is a real recorded measurement: present, finite and not negative."""
    return all(v is not None and math.isfinite(v) and v >= 0 for v in values)


def _impossible(where: str, value: object) -> Flag | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and math.isnan(value):
        return Flag(where, "error", "NaN was recorded: not a measurement (a failed run or a 0/0 upstream).")
    if isinstance(value, float) and math.isinf(value):
        return Flag(where, "error", f"{'-' if value < 0 else ''}Infinity was recorded: no measured value is infinite "
                                    "(an overflow or a division by zero upstream).")
    if value < 0:
        return Flag(where, "error", f"{value:g} is negative: no count, time, size, rate or ratio can be.")
    if isinstance(value, int) and value > TABLE_INT_LIMIT:
        return Flag(where, "warn", f"{value:.3g} is beyond the largest integer the tables hold (2^63 - 1): shown here as "
                                   "recorded, and empty in the leaderboards, grids and CSVs.")
    return None


def impossible_values(trace: Trace) -> list[Flag]:
    """NaN, ±Infinity and negative numbers anywhere in the recorded numbers: none can be a measurement.

    JSON has no NaN or Infinity, but Python's json (and so most harnesses) writes and reads them, and a
    number too large for a float (1e400) reads as Infinity: such traces are read and their values flagged.
    """
    groups: list[tuple[str, BaseModel | None]] = [("run", trace.run)]
    groups += [(name, getattr(trace.metrics, name)) for name in type(trace.metrics).model_fields]
    groups += [(f"turns[{i}]", t) for i, t in enumerate(trace.turns)]
    flags: list[Flag] = []
    for prefix, model in groups:
        if model is None:
            continue
        for name in type(model).model_fields:
            if name == "index":
                continue
            value = getattr(model, name)
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, item in items:
                flag = _impossible(f"{prefix}.{name}" + (f".{key}" if key is not None else ""), item)
                if flag is not None:
                    flags.append(flag)
    return flags


def check_trace(trace: Trace) -> list[Flag]:
    """Every problem found in the recorded values of one trace; an impossible value gets that flag only."""
    impossible = impossible_values(trace)
    bad = {f.field for f in impossible}
    rest = _run_flags(trace) + _timing_flags(trace.metrics) + _ratio_flags(trace.metrics)
    if trace.metrics.nsight is not None:
        rest += _nsight_flags(trace.metrics.nsight)
    return impossible + [f for f in rest if f.field not in bad]


def _run_flags(trace: Trace) -> list[Flag]:
    flags: list[Flag] = []
    run = trace.run
    chars = sum(t.chars or 0 for t in trace.turns) or sum(len(t.reasoning) for t in trace.turns)
    if run.tokens_total == 0 and chars > 1000:
        flags.append(Flag("run.tokens_total", "warn",
                          f"0 tokens recorded beside {chars:,} characters of model output: tokens were not counted."))
    if run.turns_used is not None and trace.turns and run.turns_used != len(trace.turns):
        flags.append(Flag("run.turns_used", "warn", f"{run.turns_used} turns recorded, but the trace holds {len(trace.turns)}."))
    n_calls = sum(len(t.calls) for t in trace.turns)
    if run.tool_calls is not None and trace.turns and run.tool_calls != n_calls:
        flags.append(Flag("run.tool_calls", "warn", f"{run.tool_calls} tool calls recorded, but the trace holds {n_calls}."))
    t = trace.metrics.timing
    if t is not None and same_gpu(t.ref_gpu, run.recorded_gpu) is False:
        flags.append(Flag("timing.ref_gpu", "warn",
                          f"baseline from another GPU: the reference was timed on {t.ref_gpu}, the kernel on "
                          f"{run.recorded_gpu}; the recorded speedup compares two machines."))
    return flags


def _timing_flags(m: RecordedMetrics) -> list[Flag]:
    flags: list[Flag] = []
    if m.timing is None:
        return flags
    t = m.timing
    to_us = UNIT_TO_US[t.unit]
    if usable(t.runtime, t.ref_runtime, t.speedup) and t.ref_runtime and t.runtime > 0.005:  # type: ignore[operator]
        # Recorded values are often rounded to 2 decimals: only flag what no rounding explains.
        lo = (t.ref_runtime - 0.005) / (t.runtime + 0.005)  # type: ignore[operator]
        hi = (t.ref_runtime + 0.005) / (t.runtime - 0.005)  # type: ignore[operator]
        if not lo * 0.99 <= t.speedup <= hi * 1.01:  # type: ignore[operator]
            flags.append(Flag("timing.speedup", "warn",
                              f"speedup {t.speedup:g}x does not match ref/runtime = {t.ref_runtime / t.runtime:.3g}x."))  # type: ignore[operator]
    for name, value in (("runtime", t.runtime), ("ref_runtime", t.ref_runtime)):
        if value is None or not usable(value):
            continue
        us = value * to_us
        reasons = []
        if us < LAUNCH_FLOOR_US:
            reasons.append(f"{value:g} {UNIT_LABEL[t.unit]} is below the ~{LAUNCH_FLOOR_US:g} µs that even one kernel launch takes")
        cuda_us = m.launches.total_cuda_time_us if m.launches else None
        if name == "runtime" and usable(cuda_us) and cuda_us and us > 0 and cuda_us / us > 100:
            reasons.append(f"the recorded total CUDA time is {cuda_us:g} µs, {cuda_us / us:,.0f}× longer")
        if reasons:
            flags.append(Flag(f"timing.{name}", "error",
                              "; ".join(reasons) + f". The value is likely in ms, not {UNIT_LABEL[t.unit]}: KernelBench stores ms "
                              "under a field commented `# in us`."))
    likely = unit_hint(t.runtime, t.ref_runtime, t.unit) if t.runtime is not None and t.ref_runtime is not None else None
    if likely is not None and not any(f.field == "timing.runtime" for f in flags):
        # What the importer warns of, on the page too: a hint, never a fix (the value stays as written).
        alt = t.ref_runtime / (t.runtime * UNIT_TO_US[likely] / to_us)  # type: ignore[operator]
        flags.append(Flag("timing.runtime", "warn", f"{t.runtime:g} {UNIT_LABEL[t.unit]} is ~1,000x the reference's "
                          f"{t.ref_runtime:g} {UNIT_LABEL[t.unit]}: if it was recorded in {UNIT_LABEL[likely]}, the speedup "
                          f"is {alt:.3g}x, not {t.ref_runtime / t.runtime:.3g}x; shown as written"))  # type: ignore[operator]
    return flags


def _ratio_flags(m: RecordedMetrics) -> list[Flag]:
    flags: list[Flag] = []
    mem, la = m.memory, m.launches
    if mem is not None and usable(mem.kernel_peak_mb, mem.ref_peak_mb, mem.ratio) and mem.kernel_peak_mb and mem.ref_peak_mb:
        expect = mem.kernel_peak_mb / mem.ref_peak_mb
        if abs(expect - mem.ratio) > 0.02:  # type: ignore[operator]
            flags.append(Flag("memory.ratio", "warn", f"ratio {mem.ratio:g} does not match kernel/ref = {expect:.3g}."))
    if la is not None and usable(la.kernel_launches, la.ref_launches, la.fusion_ratio) and la.kernel_launches and la.ref_launches:
        expect = la.ref_launches / la.kernel_launches
        if abs(expect - la.fusion_ratio) > 0.02 * expect:  # type: ignore[operator]
            flags.append(Flag("launches.fusion_ratio", "warn",
                              f"fusion ratio {la.fusion_ratio:g} does not match ref/kernel launches = {expect:.3g}."))
    return flags


def _nsight_flags(n: NsightMetrics) -> list[Flag]:
    flags: list[Flag] = []
    for name in ("dram_util_pct", "compute_util_pct", "dominant_pipe_pct", "fp32_util_pct", "occupancy_pct",
                 "l1_hit_pct", "l2_hit_pct"):
        flags += _pct_flags("nsight", name, getattr(n, name))
    if n.sol_score is not None and not 0 <= n.sol_score <= 1:
        flags.append(Flag("nsight.sol_score", "error", f"SOL score {n.sol_score:g} is outside 0–1."))
    for reason, value in n.warp_stalls_pct.items():
        if value > 100:
            flags.append(Flag(f"nsight.warp_stalls_pct.{reason}", "error",
                              f"{value:g}% is impossible. ncu's smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio "
                              f"is cycles per issued instruction ({value / 100:g} here), not a share; shown ×100 as a percent. "
                              "A true share divides by the sum over all stall reasons."))
    total = sum(n.warp_stalls_pct.values())
    if total > 100.5:
        flags.append(Flag("nsight.warp_stalls_pct", "error", f"the top stall shares add up to {total:,.1f}%, more than 100%."))
    label = bottleneck_label(n.compute_util_pct, n.dram_util_pct)
    if n.bottleneck and label and label.split(" ")[0] != n.bottleneck.split(" ")[0]:
        flags.append(Flag("nsight.bottleneck", "warn",
                          f"'{n.bottleneck}' contradicts the recorded utilisation (SM {n.compute_util_pct:g}%, DRAM "
                          f"{n.dram_util_pct:g}%): NVIDIA's SOLBottleneck rule calls this {label}."))
    if usable(n.peak_bw_gbps, n.peak_fp32_tflops, n.ridge_point) and n.peak_bw_gbps and n.ridge_point:
        expect = n.peak_fp32_tflops * 1e3 / n.peak_bw_gbps  # type: ignore[operator]
        if abs(expect - n.ridge_point) > 0.05 * expect:
            flags.append(Flag("nsight.ridge_point", "warn", f"ridge point {n.ridge_point:g} ≠ peak FLOP/s ÷ peak BW = {expect:.3g}."))
    return flags


# A recorded figure agrees with ours when within this fraction of it (runtimes, speedups, peak memory).
AGREEMENT_TOLERANCE = 0.25
# A "~1000x" unit mix-up is called when the recorded value, rescaled by one unit step, is within this factor.
UNIT_MIXUP_BAND = 2.0
IMPLAUSIBLE_GAP = 100.0  # a recorded time this many times off ours is flagged even across GPU models

# A call whose eager wall time exceeds this multiple of its device time spends most of it on the host:
# its eager speedup depends on the CPU that ran it.
HOST_BOUND_RATIO = 2.0
HOST_BOUND_SENTENCE = ("its wall time is more than {ratio:g}× its GPU time, so its eager (wall-time) speedup "
                       "depends on the CPU, Python and the launch path more than on the GPU.")


class GpuRelation(StrEnum):
    """How the GPU a harness recorded on relates to the one we re-measured on."""

    SAME = "same"
    DIFFERENT = "different"
    UNKNOWN = "unknown"


def gpu_relation(recorded: str | None, measured: str | None) -> GpuRelation:
    """SAME when the models match and the form factors do not contradict each other: a name that gives no
    form factor (torch calls the SXM H100 "NVIDIA H100 80GB HBM3") matches any; two named ones must agree."""
    rec, got = gpu_name(recorded), gpu_name(measured)
    if rec is None or got is None:
        return GpuRelation.UNKNOWN
    if rec.model != got.model or (rec.form and got.form and rec.form != got.form):
        return GpuRelation.DIFFERENT
    return GpuRelation.SAME


def gpu_label(recorded: str | None, measured: str | None) -> str:
    """Where each figure came from, e.g. "recorded on L40S · re-measured on H200"."""
    rec_name, got_name = gpu_name(recorded), gpu_name(measured)
    got = got_name.label if got_name else "an unknown GPU"
    if gpu_relation(recorded, measured) is GpuRelation.SAME:
        return f"recorded and re-measured on {got}"
    rec = f"recorded on {rec_name.label}" if rec_name else "recorded GPU unknown"
    return f"{rec} · re-measured on {got}"


def tolerance_note(relation: GpuRelation) -> str:
    if relation is GpuRelation.SAME:
        return f"Same GPU model: recorded and re-measured times agree when within ±{AGREEMENT_TOLERANCE:.0%} of ours."
    return ("Different or unknown GPU: both figures are shown side by side, with no agree/disagree claim about times; "
            f"only a gap of {IMPLAUSIBLE_GAP:,.0f}× or more, which no GPU difference explains (a unit mix-up), is flagged.")


def host_bound(wall_ms: float | None, device_ms: float | None) -> bool:
    return wall_ms is not None and device_ms is not None and device_ms > 0 and wall_ms > HOST_BOUND_RATIO * device_ms


def unit_hint(runtime: float, reference: float, unit: str) -> str | None:
    """The unit a recorded runtime is likely in when it is ~1,000x its reference time (within UNIT_MIXUP_BAND):
    the next one down the ladder (µs written as ms) or up; None when nothing says so. A hint, never a fix."""
    if not usable(runtime, reference) or runtime <= 0 or reference <= 0 or unit not in UNIT_LADDER:
        return None
    at = UNIT_LADDER.index(unit)
    for factor, step in ((1e3, -1), (1e-3, 1)):
        if 1 / UNIT_MIXUP_BAND <= runtime / reference / factor <= UNIT_MIXUP_BAND and 0 <= at + step < len(UNIT_LADDER):
            return UNIT_LADDER[at + step]
    return None


def compare_runtime(recorded: float | None, unit: str, measured_ms: float | None,
                    relation: GpuRelation = GpuRelation.SAME) -> tuple[bool | None, str]:
    """A recorded runtime against our wall time (the harness's own basis).

    Across GPU models (or when the recorded GPU is unknown) times differ for honest reasons: no
    agree/disagree claim then, except that a ~1,000x unit mix-up is still called.
    """
    if not usable(recorded, measured_ms) or not recorded or not measured_ms:
        return None, ""  # a recorded 0 (or NaN, infinity, a negative) is flagged where it is shown; nothing to compare
    assert recorded is not None and measured_ms is not None
    rec_ms = recorded * UNIT_TO_US[unit] / 1e3
    ratio = rec_ms / measured_ms
    if within_tolerance(rec_ms, measured_ms):
        return (True, "") if relation is GpuRelation.SAME else (None, "")
    ladder = list(UNIT_LADDER)
    same = relation is GpuRelation.SAME  # across GPU models the rescaled gap is no claim (see `tolerance_note`)
    for factor, step in ((1e-3, 1), (1e3, -1)):
        fixed = ratio / factor
        at = ladder.index(unit) + step
        if 1 / UNIT_MIXUP_BAND <= fixed <= UNIT_MIXUP_BAND and 0 <= at < len(ladder):
            gap = f", {recorded:g} {UNIT_LABEL[ladder[at]]} is {(fixed - 1) * 100:+.0f}% off what we measured" if same else ""
            return False, f"unit mix-up: ~1,000× off. Read as {UNIT_LABEL[ladder[at]]} instead of {UNIT_LABEL[unit]}{gap}"
    if ratio < 1 / IMPLAUSIBLE_GAP or ratio > IMPLAUSIBLE_GAP:
        at = ladder.index(unit) + (1 if ratio < 1 else -1)
        if 0 <= at < len(ladder):
            fixed = ratio / (1e-3 if ratio < 1 else 1e3)
            gap = f", but even read as {UNIT_LABEL[ladder[at]]} it is {(fixed - 1) * 100:+.0f}% off what we measured" if same else ""
            return False, f"{1 / ratio if ratio < 1 else ratio:,.0f}× off: looks like a unit mix-up{gap}"
    if not same:
        return None, ""
    return False, f"off by {(ratio - 1) * 100:+.0f}% (more than ±{AGREEMENT_TOLERANCE:.0%})"


def compare_speedup(recorded: float | None, measured: float | None, relation: GpuRelation,
                    correct: bool) -> tuple[bool | None, str]:
    """A recorded speedup against ours: no claim for an incorrect kernel, nor across GPU models."""
    if not correct:
        return None, "kernel incorrect: its speedup is not a result"
    if relation is not GpuRelation.SAME:
        return None, ""
    return compare_ratio(recorded, measured)


def within_tolerance(recorded: float, measured: float) -> bool:
    """The one agreement rule: |recorded / measured - 1| <= AGREEMENT_TOLERANCE."""
    return measured != 0 and abs(recorded / measured - 1) <= AGREEMENT_TOLERANCE


def compare_ratio(recorded: float | None, measured: float | None) -> tuple[bool | None, str]:
    """Speedups and peak memory: agree within the tolerance, else say by how much."""
    if recorded is None or measured is None or measured == 0:
        return None, ""
    if within_tolerance(recorded, measured):
        return True, ""
    return False, f"off by {(recorded / measured - 1) * 100:+.0f}% (more than ±{AGREEMENT_TOLERANCE:.0%})"


def compare_count(recorded: int | None, counted: int | None, how: str) -> tuple[bool | None, str]:
    """Launch counts must match exactly: a count has no measurement noise."""
    if recorded is None or counted is None:
        return None, ""
    if recorded == counted:
        return True, ""
    return False, f"recorded {recorded}, counted {counted} ({how})"


def verdict_flip(recorded: str | None, reproduced: str) -> str | None:
    """The message when the harness's verdict and ours differ; None when they agree or none was recorded."""
    if recorded is None or recorded == reproduced:
        return None
    return f"verdict flip: recorded {recorded}, reproduced {reproduced}"


def check_measured(figures: Mapping[str, object]) -> dict[str, Flag]:
    """Flags for counters we measured ourselves: ncu can report a percentage above 100 too."""
    out: dict[str, Flag] = {}
    for key, fig in figures.items():
        value, unit = getattr(fig, "value", None), getattr(fig, "unit", "")
        if unit == "%" and isinstance(value, (int, float)) and not 0 <= value <= 100:
            out[key] = Flag(key, "warn", f"ncu itself reported {value:.2f}%: its counters come from separate replay "
                                         "passes and can overshoot; read as about 100%." if value > 100 else
                                         f"ncu reported {value:.2f}%, below 0.")
    return out


ALLCLOSE_RULE = "|kernel − reference| ≤ atol + rtol·|reference| at every element (torch.allclose)"  # how a trial passes


def passes_beyond_tolerance(max_abs: float | None, max_rel: float | None, atol: float | None, rtol: float | None) -> str | None:
    """What reads like a failure in a passing trial ("max rel error 4.71e-03 > rtol 0.0001"), or None."""
    above = [f"max rel error {max_rel:.2e} > rtol {rtol:g}"] if max_rel is not None and rtol is not None and max_rel > rtol else []
    above += [f"max abs error {max_abs:.2e} > atol {atol:g}"] if max_abs is not None and atol is not None and max_abs > atol else []
    return " and ".join(above) or None
