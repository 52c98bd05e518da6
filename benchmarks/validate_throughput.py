"""Validation throughput from a cold build cache: kernels/hour and where the time goes.

    python benchmarks/validate_throughput.py [--n 30] [--executor local|ray] [--out FILE]

Validates N real-shaped kernels: the sample data's and the KernelBench example's kernels, then the
hand-written load_inline kernels for KernelBench level-1/2 problems in `kernelbench_problems.py`. Fresh
build cache and fresh results cache, so every kernel is compiled and checked. Settings: 5 correctness
trials at nominal shapes (plus the default jittered ones) and 100 timed calls per kernel.

Prints each kernel's compile, queue wait and check time, then kernels/hour, the time split, the
compile-CPU bound measured in this run (cores / median CPU-seconds per build) and the share reached.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

TARGET_PER_HOUR = 670.0
PEER = (15, 241.0)  # KernelBench's own pipeline: 15 kernels in 241 s on the same H200 kind


def corpus(folder: Path, n: int) -> Path:
    """DATA with the examples first, then the KernelBench problems; no cached results."""
    from kernelbench_problems import problems
    data = folder / "data"
    shutil.copytree(ROOT.parent / "data", data, ignore=shutil.ignore_patterns("validation"))
    shutil.copytree(ROOT.parent / "examples" / "kernelbench", data / "examples", ignore=shutil.ignore_patterns("validation"))
    for p in problems():
        run = {"configuration": "throughput-benchmark", "benchmark": "kernelbench", "model": "hand-written",
               "level": p.level, "problem_id": p.problem_id, "problem_file": p.file, "recorded_verdict": "correct",
               "backend": "cuda", "precision": "fp32"}
        doc = {"schema_version": 2, "run": run, "turns": [], "reference_source": p.reference,
               "final_kernel": {"source": p.kernel}}
        dest = data / "kernelbench" / f"l{p.level}-{p.file[:-3]}"
        dest.mkdir(parents=True)
        (dest / "trace.json").write_text(json.dumps(doc), encoding="utf-8")
    return data


def _split(outcomes: list, wall: float, workers: int) -> list[str]:
    built = [o for o in outcomes if o.build != "cached"]
    checked = [o for o in outcomes if o.check_s > 0]
    gpu_busy = sum(o.check_s for o in checked)
    return [
        f"compile   {sum(o.compile_s for o in built):8.1f} s wall summed over {len(built)} builds, "
        f"{sum(o.compile_cpu_s for o in built):8.1f} CPU-s",
        f"queue     {sum(o.queue_s for o in checked):8.1f} s summed (mean {sum(o.queue_s for o in checked) / max(1, len(checked)):.2f} s, "
        f"max {max((o.queue_s for o in checked), default=0):.2f} s) between a build being ready and its check starting",
        f"check     {gpu_busy:8.1f} s summed over {len(checked)} checks (mean {gpu_busy / max(1, len(checked)):.2f} s); "
        f"check slots busy {gpu_busy / max(1e-9, wall * workers):.0%} of the run",
    ]


def report(results: dict, stats, wall: float, n: int, cores: int) -> list[str]:
    outs = sorted(stats.outcomes, key=lambda o: o.finished_at)
    lines = [f"{'run':<46} {'verdict':<14} {'build':<12} {'compile s':>9} {'CPU s':>7} {'queue s':>8} {'check s':>8} "
             f"{'load':>6} {'correct':>8} {'timing':>7} {'profile':>8} {'trials':>6} {'timed':>6} {'done at':>8}"]
    for o in outs:
        res = results[o.item.run_id][0]
        p = res.phase_s
        timed = res.kernel_timing.trials if res.kernel_timing else 0
        lines.append(f"{o.item.run_id[:46]:<46} {res.verdict:<14} {o.build:<12} {o.compile_s:>9.1f} {o.compile_cpu_s:>7.1f} "
                     f"{o.queue_s:>8.2f} {o.check_s:>8.2f} {p.get('load', 0):>6.2f} {p.get('correctness', 0):>8.2f} "
                     f"{p.get('timing', 0):>7.2f} {p.get('profile', 0):>8.2f} {len(res.trials):>6} {timed:>6} {o.finished_at:>8.1f}")
    checked = [results[o.item.run_id][0] for o in outs if o.check_s > 0]
    per_hour = n / wall * 3600
    cpus = sorted(o.compile_cpu_s for o in outs if o.build not in ("cached",) and o.compile_cpu_s > 1)
    cpu_build = cpus[len(cpus) // 2] if cpus else float("nan")
    bound = cores * 3600 / cpu_build if cpus else float("nan")
    last_compile = max((o.compiled_at for o in outs), default=0.0)
    lines += [
        "",
        f"kernels            {n} validated in {wall:.1f} s from a cold build cache: {per_hour:.0f} kernels/hour",
        "verdicts           " + ", ".join(f"{v} {sum(1 for r, _ in results.values() if r.verdict == v)}"
                                           for v in sorted({r.verdict for r, _ in results.values()})),
        f"per kernel         correctness trials {min((len(r.trials) for r in checked), default=0)}-"
        f"{max((len(r.trials) for r in checked), default=0)} (5 at nominal shapes), timed calls "
        f"{min((r.kernel_timing.trials for r in checked if r.kernel_timing), default=0)} (kernels that reached timing)",
        f"workers            {stats.compile_jobs} compiles at once on {cores} cores, {stats.check_workers} check slots",
        *["time split         " + s for s in _split(outs, wall, stats.check_workers)],
        f"timing gate        {stats.timing_windows} windows, compiles paused {stats.paused_s:.1f} s in all",
        f"first result       written at {min(stats.stored_at.values(), default=0):.1f} s; last compile ended at "
        f"{last_compile:.1f} s; last result at {max(stats.stored_at.values(), default=0):.1f} s "
        f"(tail after the last compile: {stats.wall_s - last_compile:.1f} s; before the first compile started: "
        f"{wall - stats.wall_s:.1f} s of environment probe, cache lookups and setup)",
        f"compile-CPU bound  median {cpu_build:.1f} CPU-s per build x {n} builds on {cores} cores = "
        f"{cpu_build * n / cores:.1f} s minimum, i.e. {bound:.0f} kernels/hour; reached {per_hour / bound:.0%} of it",
        f"target             {TARGET_PER_HOUR:.0f} kernels/hour: {'met' if per_hour >= TARGET_PER_HOUR else 'MISSED'} "
        f"({per_hour / TARGET_PER_HOUR:.0%} of target; {per_hour - TARGET_PER_HOUR:+.0f}/h)",
        f"peer               KernelBench's pipeline: {PEER[0]} kernels in {PEER[1]:.0f} s = {PEER[0] / PEER[1] * 3600:.0f}/h; "
        f"this run is {per_hour / (PEER[0] / PEER[1] * 3600):.2f}x that",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--executor", choices=["local", "ray"], default="local")
    ap.add_argument("--jobs", type=int, default=None, help="compiles at once (default: sized by the validator)")
    ap.add_argument("--checks-per-gpu", type=int, default=4)
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="reporter-throughput-"))
    os.environ["REPORTER_BUILD_CACHE"] = str(work / "builds")  # cold: nothing built yet
    from reporter.collect import collect
    from reporter.records import ValidationSettings
    from reporter.validate import validate_runs

    data = corpus(work, args.n)
    runs = [r for r in collect(data).runs if r.trace.final_kernel is not None][: args.n]
    settings = ValidationSettings(nominal_trials=5, perf_trials=100)
    cores = len(os.sched_getaffinity(0))
    stats: list = []
    t0 = time.perf_counter()
    results = validate_runs(data, runs, settings, force=True, progress=True, jobs=args.jobs, executor=args.executor,
                            checks_per_gpu=args.checks_per_gpu, stats=stats)
    wall = time.perf_counter() - t0
    lines = report(results, stats[0], wall, len(runs), cores)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
