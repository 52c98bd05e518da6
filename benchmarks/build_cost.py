"""CPU-seconds per load_inline build, before and after light headers, on real-shaped kernels.

    python benchmarks/build_cost.py [--n 30] [--jobs J] [--deadline-s 300] [--out FILE] [--no-cuda-torch]

Builds each kernel twice, from empty build folders, J builds at a time with the two kinds interleaved
so both see the same contention: "before" as the validator's first attempt built it until now (as
written: `torch/extension.h`; nvcc dependency files off, GPU hidden) and "after" with light headers on
top (reporter/validate/lightbuild.py). Kernels: the first `--n` (default 30) of the hand-written ones of
`kernelbench_problems.py` (26), then those of the sample data and of the KernelBench example that call
load_inline (agents' runs before the demo sweep), each distinct source once. A build not started
`--deadline-s` seconds into the run is left out (the report says how many), so the default run ends
in about six minutes on a 16-core host (60 builds, ~70 CPU-s each). Each build runs the validator's own worker (`worker.main(["compile", ...])`) in a
fresh niced process; the figure is the CPU time of what it ran (ninja, nvcc and its passes, g++, the
linker), read from the process's own children's rusage, so interpreter start-up is left out.

`--no-cuda-torch` is for a machine whose torch has no CUDA (torch's CPU wheel): torch is told where
nvcc is and given the one generated CUDA header the wheel lacks, both objects compile, and the link
fails for want of libtorch_cuda; a build then counts as compiled when both objects exist.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

KINDS = ("before", "after")
NOT_STARTED = "not started: past the deadline"


@dataclass(frozen=True)
class Build:
    kernel: str
    kind: str
    cpu_s: float  # ninja and the compilers it ran
    wall_s: float
    compiled: bool
    headers: str  # the worker's build line (light, or why not)
    reason: str


def kernels(n: int) -> list[tuple[str, str, str]]:
    """(name, reference, kernel source) of the first `n` distinct load_inline kernels: the benchmark's
    problems, then the sample data's, then the KernelBench example's (its run before its demo sweep)."""
    from kernelbench_problems import problems

    from reporter.collect import collect
    found = [(f"kernelbench/l{p.level}-{p.file[:-3]}", p.reference, p.kernel) for p in problems()]
    runs = [r for data in (ROOT.parent / "data", ROOT.parent / "examples" / "kernelbench") for r in collect(data).runs]
    for run in sorted(runs, key=lambda r: ("sweep" in r.run_id, r.run_id)):  # agents' runs before the demo sweep
        fk, ref = run.source.final_kernel, run.source.reference_source
        if fk is not None and ref is not None and "load_inline" in fk.source:
            found.append((run.run_id, ref, fk.source))
    first: dict[str, tuple[str, str, str]] = {}
    for name, ref, src in found:
        first.setdefault(src, (name, ref, src))
    return list(first.values())[:n]


def child(job_dir: Path, no_cuda_torch: bool) -> None:
    """In the build process: the worker's compile mode, then what its children cost."""
    os.nice(10)  # as the validator's compiles (buildcache.COMPILE_NICE)
    if no_cuda_torch:
        from torch.utils import cpp_extension
        cpp_extension.CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    from reporter.validate import worker
    worker.main(["compile", str(job_dir)])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    (job_dir / "cost.json").write_text(json.dumps({"cpu_s": usage.ru_utime + usage.ru_stime}), encoding="utf-8")


def _env(kind: str, ext_dir: Path, arch: str, stub: Path | None) -> dict[str, str]:
    from reporter.validate import lightbuild
    from reporter.validate.process import package_env
    env = package_env({"TORCH_EXTENSIONS_DIR": str(ext_dir), "TORCH_CUDA_ARCH_LIST": arch,
                       "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES": "1", "CUDA_VISIBLE_DEVICES": "",
                       lightbuild.ENV: "1" if kind == "after" else None, lightbuild.LABEL_ENV: "accelerated"})
    if stub is not None:
        env["CPATH"] = str(stub) + os.pathsep + env.get("CPATH", "")
    return env


def build(work: Path, index: int, kind: str, kernel: tuple[str, str, str], arch: str, stub: Path | None,
          deadline: float = float("inf")) -> Build:
    from reporter.core.schema import CheckSettings, Verdict, WorkerJob, WorkerResult
    name, reference, source = kernel
    if time.perf_counter() > deadline:
        return Build(name, kind, 0.0, 0.0, False, "-", NOT_STARTED)
    job_dir = work / f"{index:02d}-{kind}"
    job_dir.mkdir(parents=True)
    # The worker's compile mode reads the sources only; the rest of the job is the validator's defaults.
    job = WorkerJob(reference, source, CheckSettings(), "cuda", extensions_dir=str(job_dir / "ext"))
    (job_dir / "job.json").write_text(job.to_json(), encoding="utf-8")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(job_dir)] + (["--no-cuda-torch"] if stub else [])
    t0 = time.perf_counter()
    with open(job_dir / "build.log", "wb") as log:
        subprocess.run(cmd, env=_env(kind, job_dir / "ext", arch, stub), stdout=log, stderr=subprocess.STDOUT, check=False)
    wall = time.perf_counter() - t0
    done = job_dir / "compile.json"
    out = WorkerResult.from_json(done.read_text(encoding="utf-8")) if done.is_file() else None
    cost = json.loads((job_dir / "cost.json").read_text(encoding="utf-8")) if (job_dir / "cost.json").is_file() else {}
    objects = {p.name for p in (job_dir / "ext").rglob("*.o")}
    compiled = {"main.o", "cuda.cuda.o"} <= objects if stub else out is not None and out.verdict == Verdict.CORRECT
    return Build(name, kind, float(cost.get("cpu_s", 0.0)), wall, compiled, (out and out.build_note) or "-",
                 (out.reason if out else "no result")[:120])


def _stub(work: Path) -> Path:
    """The generated header torch's CPU wheel leaves out (c10/cuda's build-time macros: none needed here)."""
    stub = work / "stub"
    (stub / "c10" / "cuda" / "impl").mkdir(parents=True)
    (stub / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h").write_text("#pragma once\n", encoding="utf-8")
    return stub


def report(builds: list[Build], jobs: int, cores: int, wall: float, machine: str) -> list[str]:
    by = {(b.kernel, b.kind): b for b in builds}
    names = list(dict.fromkeys(b.kernel for b in builds))
    lines = [f"# {machine}: {len(names)} kernels built twice, {jobs} builds at a time on {cores} cores, {wall:.0f} s in all",
             f"{'kernel':<48} {'before CPU s':>12} {'after CPU s':>11} {'after/before':>12} {'before wall':>11} "
             f"{'after wall':>10}  after build"]
    for n in names:
        b, a = by[(n, "before")], by[(n, "after")]
        ratio = a.cpu_s / b.cpu_s if b.cpu_s > 0 else float("nan")
        tag = a.headers if a.compiled else a.reason if NOT_STARTED in (a.reason, b.reason) else f"DID NOT COMPILE: {a.reason}"
        lines.append(f"{n[-48:]:<48} {b.cpu_s:>12.1f} {a.cpu_s:>11.1f} {ratio:>12.2f} {b.wall_s:>11.1f} {a.wall_s:>10.1f}  {tag}")
    both = [n for n in names if by[(n, "before")].compiled and by[(n, "after")].compiled]
    late = [n for n in names if NOT_STARTED in (by[(n, "before")].reason, by[(n, "after")].reason)]
    lines.append("")
    if late:
        lines.append(f"late    {len(late)} of {len(names)} kernels not built both ways before the deadline (left out below): "
                     + ", ".join(late))
    for kind in KINDS:
        cpu = [by[(n, kind)].cpu_s for n in both]
        walls = [by[(n, kind)].wall_s for n in both]
        if cpu:
            lines.append(f"{kind:<7} median {statistics.median(cpu):6.1f} CPU-s per build (min {min(cpu):.1f}, max {max(cpu):.1f}, "
                         f"total {sum(cpu):.0f}), median wall {statistics.median(walls):.1f} s, over the {len(both)} kernels both built")
    failed = [n for n in names if not by[(n, "after")].compiled and n not in late]
    lines.append(f"light   {len(names) - len(failed) - len(late)} of {len(names) - len(late)} compiled light" +
                 (f"; did not: {', '.join(failed)} (the validator rebuilds those as written)" if failed else ""))
    if both:
        ratio = statistics.median(by[(n, "after")].cpu_s / max(1e-9, by[(n, "before")].cpu_s) for n in both)
        lines.append(f"saving  median after/before {ratio:.2f}: {1 - ratio:.0%} fewer CPU-seconds per build")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="kernels (spread evenly over the list)")
    ap.add_argument("--jobs", type=int, default=None, help="builds at a time (default: the validator's pool size)")
    ap.add_argument("--deadline-s", type=float, default=300.0, help="start no build after this many seconds")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    ap.add_argument("--no-cuda-torch", action="store_true", help="this torch has no CUDA: compile the objects, skip the link")
    ap.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.no_cuda_torch)
        return
    from reporter.validate import buildcache
    from reporter.validate.recorder import _compute_capability
    cores = len(os.sched_getaffinity(0))
    arch = _compute_capability() or "9.0"
    work = Path(tempfile.mkdtemp(prefix="reporter-build-cost-"))
    stub = _stub(work) if args.no_cuda_torch else None
    chosen = kernels(args.n)
    tasks = [(i, kind) for i in range(len(chosen)) for kind in (KINDS if i % 2 == 0 else KINDS[::-1])]
    jobs = args.jobs or buildcache.pool_size(cores, buildcache.PRIOR_BUILD_WALL_S, buildcache.PRIOR_BUILD_CPU_S, len(tasks))
    t0 = time.perf_counter()
    deadline = t0 + args.deadline_s
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        builds = list(pool.map(lambda t: build(work, t[0], t[1], chosen[t[0]], arch, stub, deadline), tasks))
    machine = f"{os.uname().nodename}, TORCH_CUDA_ARCH_LIST={arch}" + (", torch without CUDA (objects only)" if stub else "")
    text = "\n".join(report(builds, jobs, cores, time.perf_counter() - t0, machine)) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
