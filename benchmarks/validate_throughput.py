"""Validation throughput from cold caches: kernels/hour, the GPU's time to itself, and where the time goes.

    python benchmarks/validate_throughput.py [--n 30] [--executor local|ray] [--deadline-s S] [--out FILE]
    python benchmarks/validate_throughput.py --corpus RUNS --problems PROBLEMS --n 100 [--deadline-s S] [--out FILE]
    python benchmarks/validate_throughput.py --data DATA [--deadline-s S] [--out FILE]

Validates N real-shaped kernels: by default the sample data's and the KernelBench example's kernels, then the
hand-written load_inline kernels for KernelBench level-1/2 problems in `kernelbench_problems.py`; with
--corpus, the first N kernels (whole problems, in level and problem order: a sweep, models x samples) of a
tree of KernelBench run folders, imported with `reporter import kernelbench` (e.g. the shared
kernelbench-leaderboard-dev corpus, copied into an ignored folder for the GPU machine; never committed). Fresh
build cache, reference-timing store and results cache, so every kernel is compiled, checked and timed. Settings:
5 correctness trials at nominal shapes (plus the default jittered ones) and 100 timed calls per basis.

Prints each kernel's build, compile, queue and check time, its check's CPU time and phase times, then the
summary `reporter validate` prints (kernels/hour, GPU busy, GPU-exclusive seconds per kernel, compile CPU-s per
build, the per-kernel split) with the targets, and the throughput model (reporter/validate/capacity.py) fed with
this run's costs: its prediction for this machine beside the measurement, and for 2, 4 and 8 GPUs on one host
(32, 64, 128 cores) and 4 machines of 16 cores + 1 GPU (Ray). With --deadline-s the run is stopped there and
the report covers the kernels finished by then (it says so).

With --data, an existing DATA folder (e.g. the calibration sample of `calibration.py prepare`) is validated as
`reporter validate DATA` would: its default settings, and the runs that already have a result for this GPU
and settings are skipped (a call resumes where the last one stopped), so one call measures throughput and
adds to the calibration sample at once. The build cache and the reference-timing store are still fresh.

    python benchmarks/validate_throughput.py --replay FILE.json

prints the report again from a run's saved outcomes (`--save FILE.json` writes them), without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

# KernelBench's own pipeline (its parallel build_compile_cache, then eval_kernel_against_ref with 5
# correctness and 100 timed trials) on the same H200 kind, from cold: 15 kernels in 232 s (issue 24).
PEER = (15, 232.0)
TARGET_PER_HOUR = 700  # issue 35: 3x the peer and more
EXCLUSIVE_TARGET_S = 4.0  # issue 35: GPU-exclusive seconds per kernel
GPU_BUSY_TARGET = 0.70
MODEL_TOLERANCE = 0.15  # the prediction for the measured machine must land within this share of the run
HOSTS = (("1 GPU, 16 cores", 16, 1), ("2 GPUs, 32 cores", 32, 2), ("4 GPUs, 64 cores", 64, 4),
         ("8 GPUs, 128 cores", 128, 8))
KERNEL_FILE = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


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


def imported(folder: Path, runs: Path, problems: Path, n: int) -> Path:
    """DATA holding the first `n` kernels of a KernelBench runs tree, whole problems at a time (level, problem
    order: every model's samples of a problem together, as a sweep checks them)."""
    by_problem: dict[tuple[int, int], list[Path]] = {}
    for f in sorted(runs.glob("*/level_*_problem_*_sample_*_kernel.py")):
        m = KERNEL_FILE.search(f.name)
        if m:
            by_problem.setdefault((int(m.group(1)), int(m.group(2))), []).append(f)
    picked, chosen = 0, folder / "runs"
    for key in sorted(by_problem):
        if picked >= n:
            break
        for f in by_problem[key]:
            dest = chosen / f.parent.name
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest / f.name)
            picked += 1
    for run_dir in chosen.iterdir():  # each folder's recorded results, for the pages (not used to validate)
        if (runs / run_dir.name / "eval_results.json").is_file():
            shutil.copy2(runs / run_dir.name / "eval_results.json", run_dir / "eval_results.json")
    data = folder / "data"
    subprocess.run([sys.executable, "-m", "reporter.cli", "-q", "import", "kernelbench", str(chosen), "--problems",
                    str(problems), "--out", str(data)], check=True, cwd=ROOT.parent)
    return data


def _timed(res: Any) -> int:
    """Timed calls of the kernel: the most of any basis (adaptive timing stops each on its own)."""
    k = res.kernel_timing
    return max((b.n for b in (k.device, k.graph, k.wall) if b is not None), default=0) if k else 0


def _checked(outs: list) -> list:
    return [o for o in outs if o.check_s > 0]


def _phases(results: dict) -> list[str]:
    """The phases these results record, in the worker's order (older names, as saved runs hold, after them)."""
    from reporter.core.schema import PHASES, TOTALS
    seen = {k for r, _ in results.values() for k in r.phase_s if k != "compile"}
    return [p for p in PHASES if p in seen] + [p for p in TOTALS if p in seen] + sorted(seen - set(PHASES) - set(TOTALS))


def kernel_table(results: dict, outs: list) -> list[str]:
    phases = _phases(results)
    lines = [f"{'run':<46} {'verdict':<14} {'build':<12} {'compile s':>9} {'CPU s':>7} {'queue s':>8} {'check s':>8} "
             f"{'chk CPU s':>9} " + " ".join(f"{p[:10]:>10}" for p in phases) + f" {'ref':>6} {'timed':>6} {'done at':>8}"]
    for o in outs:
        res = results[o.item.run_id][0]
        ref = "reused" if res.reference_from is not None and res.reference_from.uses else \
            "own" if res.reference_from is not None else "beside" if res.reference_timing else "-"
        lines.append(f"{o.item.run_id[:46]:<46} {res.verdict:<14} {o.build:<12} {o.compile_s:>9.1f} {o.compile_cpu_s:>7.1f} "
                     f"{o.queue_s:>8.2f} {o.check_s:>8.2f} {o.check_cpu_s if o.check_s > 0 else 0.0:>9.1f} "
                     + " ".join(f"{res.phase_s[p]:>10.2f}" if p in res.phase_s else f"{'-':>10}" for p in phases)
                     + f" {ref:>6} {_timed(res):>6} {o.finished_at:>8.1f}")
    return lines


def check_lines(results: dict, outs: list) -> list[str]:
    """The median of each phase over the checked kernels, and how the references were timed."""
    checked = _checked(outs)
    if not checked:
        return ["check time         no kernel reached its check"]
    phases = [(p, statistics.median(results[o.item.run_id][0].phase_s.get(p, 0.0) for o in checked)) for p in _phases(results)]
    starts = [results[o.item.run_id][0].phase_s.get("start", 0.0) + results[o.item.run_id][0].phase_s.get("cuda", 0.0)
              + results[o.item.run_id][0].phase_s.get("load", 0.0) for o in checked]
    return [f"check time         median {statistics.median(o.check_s for o in checked):.2f} s per kernel over {len(checked)} "
            f"checks; max {max(o.check_s for o in checked):.2f} s",
            "check phases       median s: " + ", ".join(f"{p} {v:.2f}" for p, v in phases),
            f"before 1st trial   median {statistics.median(starts):.2f} s (start: request to the worker's first line; cuda: "
            "device initialisation; load: the extension and the models)"]


def model_lines(m: Any, cores: int, gpus: int, jobs: int, n: int, wall: float) -> list[str]:
    from reporter.validate.capacity import Plan, predict
    here = predict(m, Plan(cores=cores, gpus=gpus, jobs=jobs or None), n)
    off = here.wall_s / wall - 1
    lines = [
        f"measured           {m.build_share:.0%} of the kernels compiled something: {m.build_cpu_s:.1f} CPU-s and {m.build_wall_s:.1f} s "
        f"per build; GPU-exclusive {m.exclusive_s:.2f} s, shared {m.shared_s:.2f} s over {m.slots} slots, host quiet "
        f"{m.host_quiet_s:.2f} s, check CPU {m.check_cpu_s:.1f} CPU-s per kernel; one check {m.check_wall_s:.1f} s; "
        f"setup {m.setup_s:.1f} s",
        f"model, this run    {cores} cores + {gpus} GPU, {here.jobs} compiles at once, {here.waves} waves: {here.wall_s:.1f} s = "
        f"{here.kernels_per_hour:.0f} kernels/hour, against {wall:.1f} s measured: {off:+.0%} "
        f"({'within' if abs(off) <= MODEL_TOLERANCE else 'OUTSIDE'} the {MODEL_TOLERANCE:.0%} target)",
    ]
    plans = [(label, Plan(cores=c, gpus=g)) for label, c, g in HOSTS] + \
        [("4 x (16 cores + 1 GPU), Ray", Plan(cores=16, gpus=1, machines=4, jobs=16))]
    for label, plan in plans:
        p = predict(m, plan, max(n, 1000))
        lines.append(f"model, {label:<30} a long sweep {p.steady_per_hour:.0f} kernels/hour ({p.bound}-bound)")
    lines.append("assumptions        builds and checks cost what they cost here; a GPU takes a kernel every GPU-exclusive + "
                 "shared / slots seconds; compiles stop while any GPU of their host times with the host quiet; a build "
                 "takes its measured wall, less this run's stops and core contention, with the predicted run's; Ray: builds "
                 "move for free (reporter/validate/capacity.py)")
    return lines


def report(results: dict, stats: Any, wall: float, n: int, cores: int, gpus: int = 1, stopped: str = "") -> list[str]:
    from reporter.validate import throughput
    outs = sorted(stats.outcomes, key=lambda o: o.finished_at)
    lines = kernel_table(results, outs)
    summary = throughput.summarize(outs, stats.wall_s, wall, cores, gpus)
    m = throughput.measured(outs, stats.wall_s, wall, slots=max(1, stats.check_workers // max(1, gpus)),
                            jobs=stats.compile_jobs, cores=cores)
    per_hour = summary.per_hour
    lines += ["", *throughput.lines(summary)]
    if stopped:
        lines.append(f"stopped            {stopped}")
    lines += [
        *check_lines(results, outs),
        f"workers            {stats.compile_jobs} compiles at once on {cores} cores, {stats.check_workers} check slots; "
        f"{stats.timing_windows} timing windows, GPU held {stats.exclusive_s:.1f} s, compiles stopped {stats.paused_s:.1f} s",
        f"targets            {per_hour:.0f} kernels/hour (target >= {TARGET_PER_HOUR}: {'met' if per_hour >= TARGET_PER_HOUR else 'MISSED'}); "
        f"GPU-exclusive {summary.exclusive_s:.2f} s per kernel (target <= {EXCLUSIVE_TARGET_S:g}: "
        f"{'met' if summary.exclusive_s <= EXCLUSIVE_TARGET_S else 'MISSED'}); GPU busy {summary.gpu_busy:.0%}",
        *(model_lines(m, cores, gpus, stats.compile_jobs, n, wall) if _checked(outs) else ["model              no kernel reached its check"]),
        f"peer               KernelBench's pipeline: {PEER[0]} kernels in {PEER[1]:.0f} s = {PEER[0] / PEER[1] * 3600:.0f}/h; "
        f"this run is {per_hour / (PEER[0] / PEER[1] * 3600):.2f}x that",
    ]
    return lines


OUTCOME_FIELDS = ("build", "compile_s", "compile_cpu_s", "queue_s", "check_s", "compiled_at", "finished_at", "worker", "gpu",
                  "ncu_s")
STATS_FIELDS = ("wall_s", "compile_jobs", "check_workers", "paused_s", "timing_windows", "exclusive_s")


def save(path: Path, results: dict, stats: Any, wall: float, cores: int, stopped: str) -> None:
    """What `report` reads, as JSON: each outcome's times, the results, the run's stats."""
    doc = {"wall": wall, "cores": cores, "stopped": stopped, "stats": {k: getattr(stats, k) for k in STATS_FIELDS},
           "outcomes": [{"run_id": o.item.run_id, "cpu_s": o.check_cpu_s,
                         **{k: getattr(o, k) for k in OUTCOME_FIELDS}} for o in stats.outcomes],
           "results": {k: r.model_dump(mode="json") for k, (r, _) in results.items()}}
    path.write_text(json.dumps(doc), encoding="utf-8")


def replay(path: Path) -> tuple[dict, Any, float, int, int, int, str]:
    """`report`'s arguments from a saved run."""
    from reporter.core.records import ValidationResult
    doc = json.loads(path.read_text(encoding="utf-8"))
    results = {k: (ValidationResult.model_validate(v), False) for k, v in doc["results"].items()}
    outs = tuple(SimpleNamespace(item=SimpleNamespace(run_id=o["run_id"]), check_cpu_s=o["cpu_s"],
                                 result=results[o["run_id"]][0], **{k: o[k] for k in OUTCOME_FIELDS}) for o in doc["outcomes"])
    stats = SimpleNamespace(**doc["stats"], outcomes=outs)
    return results, stats, doc["wall"], len(outs), doc["cores"], 1, doc.get("stopped", "")


class Deadline(Exception):
    """The benchmark's time ran out (--deadline-s)."""


def run(data: Path, n: int, settings: Any, args: argparse.Namespace) -> tuple[dict, Any | None, float, str]:
    """Validate the first n kernels under DATA; (results, stats, wall seconds, why it stopped early or "")."""
    from reporter.collect import collect
    from reporter.validate import validate_runs
    runs = [r for r in collect(data).runs if r.trace.final_kernel is not None][:n]
    resume = args.data is not None  # a sample validated over several calls: skip what a call before stored
    live: list = []
    stats: list = []

    def out_of_time(*_: object) -> None:
        raise Deadline
    signal.signal(signal.SIGALRM, out_of_time)
    if args.deadline_s:
        signal.alarm(int(args.deadline_s))
    t0 = time.perf_counter()
    stopped = ""
    try:
        results = validate_runs(data, runs, settings, force=not resume, progress=True, jobs=args.jobs, executor=args.executor,
                                checks_per_gpu=args.checks_per_gpu, stats=stats, outcomes=live)
    except Deadline:
        stopped = f"at the {args.deadline_s:g} s deadline, {len(live)} of {len(runs)} kernels finished; the report covers those"
    finally:
        signal.alarm(0)
    wall = time.perf_counter() - t0
    if stopped:
        from reporter.core.cache import lookup
        results = {o.item.run_id: (lookup(data, o.item.key)[0], False) for o in live}  # type: ignore[index]
        stats = [SimpleNamespace(wall_s=wall, compile_jobs=args.jobs or 0, check_workers=args.checks_per_gpu, paused_s=0.0,
                                 timing_windows=0, exclusive_s=0.0, outcomes=tuple(live))]
    return results, stats[0] if stats else None, wall, stopped  # None: every run had a result (--data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--executor", choices=["local", "ray"], default="local")
    ap.add_argument("--jobs", type=int, default=None, help="compiles at once (default: sized by the validator)")
    ap.add_argument("--checks-per-gpu", type=int, default=4)
    ap.add_argument("--corpus", type=Path, default=None, help="a tree of KernelBench run folders to take the kernels from")
    ap.add_argument("--problems", type=Path, default=None, help="the corpus's problem folder (level1/, level2/, ...)")
    ap.add_argument("--timeout-s", type=float, default=600.0, help="a check's time limit (default: the validator's)")
    ap.add_argument("--deadline-s", type=float, default=0.0, help="stop the run here and report what finished")
    ap.add_argument("--data", type=Path, default=None, help="validate this DATA folder as `reporter validate` would (resumes)")
    ap.add_argument("--keep", type=Path, default=None, help="keep DATA and the build cache here (for validate_rounds.py)")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    ap.add_argument("--save", type=Path, default=None, help="also write the run's outcomes here (JSON), for --replay")
    ap.add_argument("--replay", type=Path, default=None, help="report a saved run instead of running one")
    args = ap.parse_args()
    if args.replay:
        text = "\n".join(report(*replay(args.replay))) + "\n"
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="reporter-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["REPORTER_BUILD_CACHE"] = str(work / "builds")  # cold: nothing built, no reference timed yet
    from reporter.core.records import ValidationSettings
    if args.data:
        data, settings = args.data, ValidationSettings(timeout_s=args.timeout_s)
        args.n = 10**9
    else:
        data = imported(work, args.corpus, args.problems, args.n) if args.corpus else corpus(work, args.n)
        settings = ValidationSettings(nominal_trials=5, perf_trials=100, timeout_s=args.timeout_s)
    cores = len(os.sched_getaffinity(0))
    results, stats, wall, stopped = run(data, args.n, settings, args)
    if stats is None:
        print(f"nothing to validate: every run under {data} already has a result for this GPU and settings")
        return
    if args.save:
        save(args.save, results, stats, wall, cores, stopped)
    text = "\n".join(report(results, stats, wall, len(stats.outcomes), cores, stopped=stopped)) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
