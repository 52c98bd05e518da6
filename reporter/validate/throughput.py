"""What one `reporter validate` call achieved, from its outcomes: kernels/hour, the GPUs' busy share,
GPU-exclusive seconds per kernel, compile CPU-seconds per build and where each kernel's time went.

`reporter validate` prints it at the end (one line with ``--quiet``) and writes it beside the results,
``DATA/validation/summary.json`` (this record) and ``summary.txt`` (the printed lines); the benchmarks
print the same lines. `measured` turns the same outcomes into the throughput model's inputs
(`capacity.Measured`). Standard library only.

GPU-exclusive seconds are the seconds a kernel held its GPU to itself: its timing windows (warm-up and
timed loops, graph replays) and those of its reference's own timing when its check took one; every
other check on that GPU stands stopped meanwhile, so they bound a GPU's rate at 1 / that per kernel.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..core.atomic import replace_file
from ..core.schema import EXCLUSIVE, HOST_QUIET, PHASES
from .capacity import Measured, busy_time
from .recorder import Outcome

SUMMARY_JSON, SUMMARY_TXT = "summary.json", "summary.txt"
RETRIED_PHASE = "check_shared_out_of_memory"  # the local executor's phase for a check's first, shared attempt


@dataclass(frozen=True)
class Split:
    """Mean seconds per checked kernel: its build, its wait for a check slot, its check outside timing windows,
    and its timing windows (the GPU to itself)."""

    compile_s: float
    queue_s: float
    check_s: float
    timing_s: float


@dataclass(frozen=True)
class Summary:
    kernels: int  # validated in this call (cached results not counted)
    checked: int  # of which reached their check (a compile error does not)
    wall_s: float  # the whole call: probing the machine and cache lookups included
    setup_s: float  # of which outside the pipeline: the machine's probe and cache lookups, problem checks outlasting it
    per_hour: float
    gpus: int
    cores: int
    gpu_busy: float  # share of the run with at least one check on a GPU, averaged over the GPUs
    exclusive_s: float  # GPU-exclusive seconds per checked kernel
    builds: int  # kernels compiled in this call (build-cache hits not counted)
    build_cpu_s: float | None  # median CPU-seconds per build
    split: Split
    references_timed: int  # reference timings taken on their own (in a worker that ran no submission) and used
    references_reused: int  # checks whose speedup used a stored reference timing
    verdicts: Mapping[str, int] = field(default_factory=dict)
    ncu_s: float | None = None  # median seconds of the Nsight Compute round per kernel (--ncu)
    retried: tuple[str, ...] = ()  # run ids checked again alone after running out of GPU memory beside other checks

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)


def _checked(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.check_s > 0]


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


def gpu_seconds(checked: Sequence[Outcome]) -> float:
    """Seconds with at least one of these checks running, summed over the GPUs they ran on."""
    by_gpu: dict[str, list[tuple[float, float]]] = {}
    for o in checked:
        by_gpu.setdefault(o.gpu or o.worker, []).append((o.finished_at - o.check_s, o.finished_at))
    return sum(busy_time(v) for v in by_gpu.values())


def summarize(outcomes: Sequence[Outcome], run_wall_s: float, wall_s: float, cores: int, gpus: int) -> Summary:
    """The call's summary: `run_wall_s` the executor's run, `wall_s` the whole call."""
    checked = _checked(outcomes)
    n = max(1, len(checked))
    built = sorted(o.compile_cpu_s for o in outcomes if o.build not in ("", "cached"))
    exclusive = [o.result.phase_s.get(EXCLUSIVE, 0.0) for o in checked]
    verdicts: dict[str, int] = {}
    for o in outcomes:
        verdicts[str(o.result.verdict)] = verdicts.get(str(o.result.verdict), 0) + 1
    split = Split(compile_s=_mean([o.compile_s for o in checked]), queue_s=_mean([o.queue_s for o in checked]),
                  check_s=_mean([o.check_s - e for o, e in zip(checked, exclusive, strict=True)]), timing_s=_mean(exclusive))
    ncu = [o.ncu_s for o in outcomes if o.ncu_s > 0]
    return Summary(
        kernels=len(outcomes), checked=len(checked), wall_s=wall_s, setup_s=max(0.0, wall_s - run_wall_s), per_hour=len(outcomes) * 3600.0 / max(wall_s, 1e-9),
        gpus=gpus, cores=cores, gpu_busy=min(1.0, gpu_seconds(checked) / max(1e-9, run_wall_s * max(1, gpus))),
        exclusive_s=sum(exclusive) / n, builds=len(built), build_cpu_s=statistics.median(built) if built else None,
        split=split, references_timed=sum(1 for o in checked if o.result.reference_from and o.result.reference_from.uses == 0),
        references_reused=sum(1 for o in checked if o.result.reference_from is not None),
        verdicts=dict(sorted(verdicts.items())), ncu_s=statistics.median(ncu) if ncu else None,
        retried=tuple(sorted(o.item.run_id for o in outcomes if RETRIED_PHASE in o.result.phase_s)))


def lines(s: Summary) -> list[str]:
    """The summary as `reporter validate` prints it."""
    cpu = f"{s.build_cpu_s:.1f} CPU-s per build (median)" if s.build_cpu_s is not None else "no build compiled (all cached)"
    sp = s.split
    out = [
        f"validated   {s.kernels} kernels in {s.wall_s:.1f} s: {s.per_hour:.0f} kernels/hour "
        f"({s.gpus} GPU{'s' if s.gpus != 1 else ''}, {s.cores} cores); " + ", ".join(f"{v} {k}" for k, v in s.verdicts.items()),
        f"GPU         busy {s.gpu_busy:.0%} of the run; GPU-exclusive {s.exclusive_s:.2f} s per kernel (its timing windows)",
        f"compile     {s.builds} builds, {cpu}",
        f"wall split  per kernel: compile {sp.compile_s:.1f} s, queue {sp.queue_s:.1f} s, check {sp.check_s:.1f} s, "
        f"timing {sp.timing_s:.1f} s; {s.setup_s:.1f} s outside the pipeline",
        f"references  {s.references_timed} timed on their own, used by {s.references_reused} checks",
    ]
    if s.ncu_s is not None:
        out.append(f"Nsight      {s.ncu_s:.1f} s per kernel (median)")
    if s.retried:
        out.append(f"retried     {len(s.retried)} check(s) ran out of GPU memory beside others (memory another check or "
                   f"process held) and were run again alone; only the second result counts: {', '.join(s.retried[:5])}"
                   + (" ..." if len(s.retried) > 5 else ""))
    return out


def one_line(s: Summary) -> str:
    """The summary in one line (`reporter validate --quiet`)."""
    cpu = f"{s.build_cpu_s:.1f}" if s.build_cpu_s is not None else "-"
    sp = s.split
    return (f"{s.kernels} kernels in {s.wall_s:.1f} s: {s.per_hour:.0f}/h; GPU busy {s.gpu_busy:.0%}, GPU-exclusive "
            f"{s.exclusive_s:.2f} s/kernel; {cpu} CPU-s/build; per kernel compile {sp.compile_s:.1f}, queue "
            f"{sp.queue_s:.1f}, check {sp.check_s:.1f}, timing {sp.timing_s:.1f} s")


def write(folder: Path, s: Summary) -> Path:
    """The summary beside the results (`folder`: DATA/validation), each file replaced whole; the JSON's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((SUMMARY_JSON, s.to_json() + "\n"), (SUMMARY_TXT, "\n".join(lines(s)) + "\n")):
        replace_file(folder / name, text)
    return folder / SUMMARY_JSON


def measured(outcomes: Sequence[Outcome], run_wall_s: float, wall_s: float, paused_s: float | None = None,
             slots: int = 4, jobs: int = 0, cores: int = 0) -> Measured:
    """The throughput model's inputs from a call's outcomes (`paused_s`: the compile guard's stopped seconds,
    when it ran; else each check's host-quiet windows are summed; `jobs` compiles ran at once on `cores` cores)."""
    from .buildcache import PRIOR_BUILD_CPU_S, PRIOR_BUILD_WALL_S
    checked = _checked(outcomes)
    n = max(1, len(checked))
    real = [o for o in outcomes if o.build not in ("", "cached") and o.compile_cpu_s > 1]
    exclusive = sum(o.result.phase_s.get(EXCLUSIVE, 0.0) for o in checked) / n
    host = paused_s if paused_s is not None else sum(o.result.phase_s.get(HOST_QUIET, 0.0) for o in checked)
    # A check's phases outside its windows, less the share of them that other checks' windows kept it stopped.
    windows_share = min(0.9, exclusive * n / max(1e-9, run_wall_s * max(1, len({o.gpu or o.worker for o in checked}))))
    phases = [sum(v for k, v in o.result.phase_s.items() if k in PHASES and k not in ("reference",)) for o in checked]
    shared = max(0.0, _mean(phases) - exclusive) * (1 - windows_share)
    return Measured(
        build_share=len(real) / max(1, len(outcomes)),
        build_cpu_s=_mean([o.compile_cpu_s for o in real]) if real else PRIOR_BUILD_CPU_S,
        build_wall_s=_mean([o.compile_s for o in real]) if real else PRIOR_BUILD_WALL_S,
        exclusive_s=exclusive, shared_s=shared, host_quiet_s=host / n, check_cpu_s=_mean([o.check_cpu_s for o in checked]),
        check_wall_s=_mean([o.check_s for o in checked]), setup_s=max(0.0, wall_s - run_wall_s), slots=slots,
        quiet_share=host / max(1e-9, run_wall_s), jobs=jobs, cores=cores)
