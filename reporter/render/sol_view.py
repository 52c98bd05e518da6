"""Page data for the hardware scores: a run's times against speed of light, and a problem's work.

Pure functions of a `collect.sol.SolReport`; every rule is `core.sol`'s and `core.work`'s, this module only
turns them into strings, CSS classes and a roofline figure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from markupsafe import Markup

from ..collect.floors import GpuBounds, bounds_on, default_tf32
from ..collect.sol import RECORDED, SideTime, SolReport, launched
from ..core.peaks import TABLE, Peaks
from ..core.schema import BASIS_LABEL, Basis
from ..core.sol import FLOOR_MARGIN, LAUNCH_S, SOL_SCORE_RULE, AboveCause, Bound, count_text, time_text
from ..core.work import BYTES_RULE, FLOOR_FLOPS_RULE, RULE, Kind, WorkCount
from . import charts, numbers
from .timing_view import DEFAULT_BASIS, TimingView

DROPPED = "below the hardware floor: no speedup"
BELOW_FLOOR = f"{numbers.DASH} (below the hardware floor: a time faster than the hardware allows has no fraction and no score)"
NO_SCORE = f"{numbers.DASH} (an incorrect or suspect kernel's score is no result, as its speedup)"
# The summary's fraction, likewise: a suspect kernel's time may be faked (a patched timer), an incorrect one's is not
# the problem's; the table below still lists each time against the floor, as evidence.
NO_FRACTION = f"{numbers.DASH} (no result for an incorrect or suspect kernel, as its speedup; each time is in the table below)"
ABOVE_ONE = ("A fraction above 100% is a time under T_SOL: the bound was wrong for this run, and the cause is named; "
             f"such a fraction counts in no geomean of SOL. Only a time below {FLOOR_MARGIN:.0%} of the floor is called impossible.")


def above_text(cause: AboveCause, work: WorkCount, b: GpuBounds) -> str:
    """One broken assumption of T_SOL, with its evidence (`core.sol.above_causes` decided it)."""
    p = b.peaks
    if cause is AboveCause.TENSOR_CORES:
        admits = "admits TF32, so T_SOL used the TF32 rate: a 16-bit" if b.tf32 else "does not admit TF32, so T_SOL used the fp32 CUDA cores: a TF32 or 16-bit"
        return f"tensor cores: the tolerance that scored the run {admits} tensor-core path reaches this time"
    if cause is AboveCause.LESS_WORK:
        return (f"less work: the reference computes {count_text(work.flops_of(Kind.MATMUL), 'FLOP')} of matmul, of which its "
                f"inputs force {count_text(work.floor_flops, 'FLOP')}; the rest is work on tensors the reference builds itself, "
                "which an equivalent kernel may skip (diag(a) @ b is a row scaling)")
    if cause is AboveCause.L2 and p is not None:
        how = "was not flushed" if b.flushed is False else "is not known to have been flushed (a harness's timing)"
        return (f"unflushed L2: {count_text(work.bytes, 'B')} of compulsory traffic against the {p.name}'s "
                f"{count_text(p.l2_bytes, 'B')} L2, which {how} between calls: repeated calls read it from L2")
    if cause is AboveCause.UNDER_LAUNCH:
        return f"under one launch: a time taken from the host is shorter than launching one kernel ({time_text(LAUNCH_S)})"
    if cause is AboveCause.SEVERAL:
        return "several: no one assumption explains the time; tensor cores, less work and an unflushed L2 together do"
    return "unknown: not even every assumption relaxed at once explains the time; the work count or the peak table may be wrong"


@dataclass(frozen=True)
class BoundRow:
    """One GPU's bounds for this problem."""

    where: str  # "recorded on L40S", "re-measured on H200"
    t_sol: str
    limiter: str  # "memory-bound: 4.30 GB at 4.8 TB/s"
    peak: str
    floor: str
    floor_level: str
    note: str


@dataclass(frozen=True)
class SolRow:
    """One basis: both times, their fractions of T_SOL, and the kernel's SOL score."""

    basis: str
    gpu: str
    kernel: str
    kernel_fraction: str
    reference: str
    reference_fraction: str
    score: str
    note: str
    css: str


@dataclass(frozen=True)
class SolView:
    why: str  # no bound at all: why ("" when there is one)
    work: str  # the counts in one line
    how: str  # how they were counted
    bounds: tuple[BoundRow, ...] = ()
    rows: tuple[SolRow, ...] = ()
    flags: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    headline: str = numbers.DASH  # for the summary: the headline basis's fraction
    score: str = numbers.DASH
    score_rule: str = SOL_SCORE_RULE
    compare: str = ""  # the harness's recorded Nsight "SOL score" beside ours, where both exist


def _bytes(n: float) -> str:
    return count_text(n, "B")


def work_line(w: WorkCount) -> str:
    ai = w.intensity
    return (f"{count_text(w.flops, 'FLOP')} · {_bytes(w.bytes)} compulsory traffic ({_bytes(w.read_bytes)} read, "
            f"{_bytes(w.write_bytes)} written) · {numbers.num(ai) if ai is not None else numbers.DASH} FLOP/B · "
            f"{w.dtype or 'no floating-point'} inputs")


def how_line(w: WorkCount) -> str:
    where = {"meta": "on meta tensors (shapes only, nothing allocated)", "cpu": "on CPU tensors"}.get(w.how.value, w.how.value)
    est = f"; estimated by the 1-FLOP-per-element rule: {', '.join(w.estimated)}" if w.estimated else ""
    return f"Counted {where} with torch {w.torch}{'; ' + w.why if w.why else ''}{est}."


def _gpu(b: GpuBounds) -> str:
    return b.peaks.name if b.peaks is not None else (b.device or "unknown GPU")


def _limiter(s: Bound) -> str:
    if s.limiter == "memory":
        text = f"memory-bound: {_bytes(s.bytes)} at {_bytes(s.bytes / s.memory_s if s.memory_s else 0)}/s"
    else:
        text = f"compute-bound: {count_text(s.flops, 'FLOP')} at {count_text(s.peak, 'FLOP/s')}"
    if s.seconds < LAUNCH_S:  # `Bound.least`
        text += f"; under one launch, so a time taken from the host is held against {time_text(LAUNCH_S)}"
    return text


def bound_row(where: str, b: GpuBounds) -> BoundRow:
    if b.sol is None or b.floor is None:
        return BoundRow(where, numbers.DASH, "", "", numbers.DASH, "", b.why or b.note)
    s, f = b.sol, b.floor
    unit = numbers.common_unit((s.seconds * 1e3, f.seconds * 1e3))  # T_SOL and its floor side by side
    return BoundRow(where, numbers.time_ms(s.seconds * 1e3, unit), _limiter(s), f"{s.peak_label}, {s.clock_mhz} MHz",
                    numbers.time_ms(f.seconds * 1e3, unit), f.level, b.note)


def _fraction(x: float | None) -> str:
    return numbers.percent(x)


def above_label(causes: tuple[AboveCause, ...]) -> str:
    """A short mark for a fraction above 100%: "above T_SOL: tensor cores; unflushed L2" ("" when not above)."""
    return f"above T_SOL: {'; '.join(causes)}" if causes else ""


def score_text(score: float | None) -> str:
    """SOL-ExecBench's score, which exceeds 1 only when the kernel beat T_SOL: then the bound, not the kernel, was wrong."""
    if score is not None and score > 1:
        return f"{numbers.num(score)} (above 1: T_SOL was wrong for this run)"
    return numbers.num(score)


RECORDED_FLAGGED = "a recorded time here is flagged (see its flag in the summary): its fraction is no measure"


def _rows(rep: SolReport, recorded_flagged: bool = False) -> list[SolRow]:
    out = []
    sides = [(RECORDED, "recorded (harness)", rep.recorded)]
    sides += [(b.value, BASIS_LABEL[b], rep.measured) for b in Basis] if rep.measured is not None else []
    # the re-measured rows read down in one unit; the recorded row (another GPU, another harness) in its own
    units = {kind: numbers.common_unit(t.seconds * 1e3 for t in rep.times if t.seconds and (t.basis == RECORDED) == kind)
             for kind in (True, False)}

    def shown(t: SideTime | None) -> str:
        return numbers.time_ms(t.seconds * 1e3, units[t.basis == RECORDED]) if t is not None and t.seconds else numbers.DASH
    for basis, label, bounds in sides:
        k, r = rep.time("kernel", basis), rep.time("reference", basis)
        if bounds is None or ((k is None or k.seconds is None) and (r is None or r.seconds is None)):
            continue
        note = DROPPED if rep.dropped(basis) else RECORDED_FLAGGED if basis == RECORDED and recorded_flagged else ""
        above = above_label(k.above) if k is not None and not note else ""
        out.append(SolRow(label, _gpu(bounds), shown(k), _fraction(k.fraction if k else None), shown(r),
                          _fraction(r.fraction if r else None), score_text(rep.scores.get(basis)), note or above,
                          "bad" if note else "above" if above else "headline" if basis == DEFAULT_BASIS.value else ""))
    return out


def _headline(rep: SolReport) -> tuple[str, str]:
    basis = DEFAULT_BASIS.value if rep.measured is not None and rep.time("kernel", DEFAULT_BASIS.value) else RECORDED
    b = rep.measured if basis != RECORDED else rep.recorded
    k = rep.time("kernel", basis)
    if rep.dropped(basis):
        return BELOW_FLOOR, f"{numbers.DASH} (below the hardware floor)"
    if b is None or b.sol is None or k is None or k.fraction is None:
        return numbers.DASH, numbers.DASH
    where = f"{BASIS_LABEL[Basis(basis)]} on {_gpu(b)}" if basis != RECORDED else f"recorded on {_gpu(b)}"
    t_sol = b.sol.least(launched(basis))
    mark = f" · {above_label(k.above)}" if k.above else ""
    text = f"{_fraction(k.fraction)} · T_SOL {numbers.time_ms(t_sol * 1e3)} ({where}){mark}"
    return text, score_text(rep.scores.get(basis))


def _notes(rep: SolReport, recorded_flagged: bool) -> list[str]:
    notes = []
    for basis, b in [(RECORDED, rep.recorded), *((x.value, rep.measured) for x in Basis)]:
        k = rep.time("kernel", basis)
        if b is None or rep.work is None or k is None or not k.above or (basis == RECORDED and recorded_flagged):
            continue  # a flagged recorded time is explained by its flag
        where = "recorded time" if basis == RECORDED else BASIS_LABEL[Basis(basis)]
        notes.append(f"The kernel's {where} is {_fraction(k.fraction)} of speed of light on the {_gpu(b)}: "
                     + "; ".join(above_text(c, rep.work, b) for c in k.above) + ".")
    if notes:
        notes.append(ABOVE_ONE)
    return notes


def _compare(headline: str, nsight: float | None) -> str:
    if nsight is None or headline == numbers.DASH:
        return ""
    return (f"The harness recorded an Nsight “SOL score” of {numbers.num(nsight, 3)} for the kernel: the larger of its SM and "
            "memory throughput as a share of peak while its launches ran, i.e. how busy the busiest unit was. Ours is "
            f"{headline}: how close the whole call came to the least time the problem's work allows. A kernel can keep a "
            "unit busy doing work the problem does not need, so the two can disagree.")


def sol_view(rep: SolReport, recorded_flagged: bool = False, scored: bool = True, nsight: float | None = None) -> SolView:
    """`recorded_flagged`: the recorded kernel time carries a flag (a unit mix-up, the floor), which explains it;
    `scored`: the kernel's speedup is a result (correct, not suspect), so its SOL score is one too; `nsight`: the
    harness's recorded Nsight SOL score (0-1), compared with ours."""
    w = rep.work
    if rep.why or w is None:
        return SolView(rep.why or "not counted", "", "")
    bounds = [bound_row(f"recorded on {_gpu(rep.recorded)}" if rep.recorded.peaks else "recorded", rep.recorded)] \
        if rep.recorded is not None else []
    if rep.measured is not None:
        bounds.append(bound_row(f"re-measured on {_gpu(rep.measured)}", rep.measured))
    headline, score = _headline(rep)
    rows = [r if scored else replace(r, score=numbers.DASH) for r in _rows(rep, recorded_flagged)]
    return SolView("", work_line(w), how_line(w), tuple(bounds), tuple(rows), tuple(f.message for f in rep.flags),
                   tuple(_notes(rep, recorded_flagged)), headline if scored else NO_FRACTION, score if scored else NO_SCORE,
                   compare=_compare(headline, nsight))


def dropped_speedups(timing: TimingView | None, rep: SolReport) -> TimingView | None:
    """The timing table's speedups without those of a basis under the floor."""
    if timing is None:
        return None
    labels = {BASIS_LABEL[b]: b.value for b in Basis}
    return replace(timing, speedups=[(label, DROPPED if rep.dropped(labels.get(label, "")) else sp, css)
                                     for label, sp, css in timing.speedups])


def roofline_json(rep: SolReport) -> Markup | None:
    """The roofline of the GPU that timed the headline times, with the kernel and the reference as points."""
    basis = DEFAULT_BASIS.value if rep.measured is not None and rep.measured.sol is not None else RECORDED
    b = rep.measured if basis != RECORDED else rep.recorded
    w = rep.work
    if b is None or b.sol is None or b.peaks is None or w is None or not w.flops or not w.bytes:
        return None
    p: Peaks = b.peaks.at_clock(b.sol.clock_mhz)
    points = [(side, w.flops / w.bytes, w.flops / t.seconds / 1e12) for side in ("kernel", "reference")
              if (t := rep.time(side, basis)) is not None and t.seconds]
    if not points:
        return None
    fig = charts.roofline(b.sol.peak / 1e12, p.dram / 1e9, points, compute=b.sol.peak_label,
                          title=f"Speed of light on the {p.name} ({'recorded' if basis == RECORDED else BASIS_LABEL[Basis(basis)]})")
    return charts.to_json(fig)


RULES = {"flops": RULE, "bytes": BYTES_RULE, "floor_flops": FLOOR_FLOPS_RULE}


@dataclass(frozen=True)
class OpRow:
    kind: str
    dtype: str
    flops: str
    calls: str
    floor: str
    rule: str


@dataclass(frozen=True)
class TensorRow:
    role: str
    shape: str
    dtype: str
    size: str
    moved: str


@dataclass(frozen=True)
class WorkView:
    """One reference's work on its problem page: the counts, how each was made, and T_SOL on every GPU we know."""

    sha: str
    line: str
    how: str
    ops: tuple[OpRow, ...] = ()
    tensors: tuple[TensorRow, ...] = ()
    gpus: tuple[BoundRow, ...] = ()
    bytes_rule: str = BYTES_RULE
    floor_rule: str = FLOOR_FLOPS_RULE


def work_view(w: WorkCount) -> WorkView:
    if not w.counted:
        return WorkView(w.reference_sha256[:12], f"not counted: {w.why}", "")
    ops = tuple(OpRow(o.kind.value, o.dtype, count_text(o.flops, "FLOP"), numbers.num(o.calls),
                      count_text(o.floor_flops, "FLOP") if o.floor_flops else numbers.DASH, RULE[o.kind]) for o in w.ops)
    tensors = tuple(TensorRow(t.role, "×".join(map(str, t.shape)) or "scalar", t.dtype, _bytes(t.nbytes), _bytes(t.moved))
                    for t in w.tensors)
    gpus = tuple(bound_row(name, bounds_on(name, w, clock_mhz=None, flushed=True, tf32=default_tf32(w.dtype)))
                 for name in sorted({p.name for p in TABLE.values()}))
    return WorkView(w.reference_sha256[:12], work_line(w), how_line(w), ops, tensors, gpus)


def problem_works(works: list[str | None]) -> tuple[WorkView, ...]:
    """The distinct work counts of a problem's runs (one per reference the runs used), in a stable order."""
    views = [work_view(WorkCount.from_json(text)) for text in sorted({w for w in works if w is not None})]
    return tuple(views if len(views) > 1 else [replace(v, sha="") for v in views])  # one reference needs no name
