"""Stage 2: re-validate submitted kernels on this machine's GPU, one isolated process per kernel.

The parent never imports torch at module level and never executes trace content: `harness.py` does,
in a child process with a timeout. Compiles run in parallel (they are CPU-bound); correctness and
timing run one at a time so kernels do not disturb each other's clocks. No rendering imports here:
the GPU machine has no plotly.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cache
from .cheats import scan
from ..errors import Problem
from ..records import DEFAULT_PRECISION, Environment, StaticFinding, ValidationResult, ValidationSettings, sha256_text

if TYPE_CHECKING:
    from ..collect.traces import RunRecord

EXT_CACHE = Path(os.environ.get("REPORTER_BUILD_CACHE", Path.home() / ".cache" / "reporter" / "torch_extensions"))
NCU_METRICS = ",".join([
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes.sum",
])
NCU_SECTIONS = ["SpeedOfLight", "SpeedOfLight_RooflineChart", "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis",
                "Occupancy", "LaunchStats", "WarpStateStats"]


# Device nodes a usable GPU leaves behind: NVIDIA on Linux, WSL2's GPU bridge, ROCm.
GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")


def import_torch() -> Any:
    """torch, without its "Failed to initialize NumPy" warning: the parent never hands torch a NumPy array,
    and torch's CPU wheel does not depend on NumPy, so a fresh install warned on every build."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        import torch
    return torch


def gpu_available() -> bool:
    # Importing torch takes seconds; on a machine with no GPU device at all there is nothing to ask it.
    if not any(Path(n).exists() for n in GPU_NODES) and shutil.which("nvidia-smi") is None:
        return False
    try:
        torch = import_torch()
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def environment() -> Environment:
    torch = import_torch()
    driver = None
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            driver = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                    text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            driver = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return Environment(gpu=gpu, torch=torch.__version__, cuda=torch.version.cuda, driver=driver,
                       python=platform.python_version(), host=platform.node())


def _key(run: "RunRecord") -> str | None:
    fk, ref = run.trace.final_kernel, run.trace.reference_source
    if fk is None or ref is None:
        return None
    return cache.content_key(fk.source, ref)


def cached_lookup(data: Path, run: "RunRecord", problems: list[Problem] | None = None) -> tuple[ValidationResult, Path] | None:
    """The newest result for this kernel and reference, whatever machine and settings measured it."""
    key = _key(run)
    return cache.lookup(data, key, problems=problems) if key else None


def _child_env(ext_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["TORCH_EXTENSIONS_DIR"] = str(ext_dir)
    env["PYTHONUNBUFFERED"] = "1"
    pkg_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_worker(mode: str, job: dict[str, Any], job_dir: Path, timeout_s: float,
               prefix: list[str] | None = None) -> dict[str, Any]:
    """Run the harness in its own process; a crash, hang or sticky CUDA error becomes a verdict."""
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
    ext_dir = Path(job["extensions_dir"])
    ext_dir.mkdir(parents=True, exist_ok=True)
    cmd = (prefix or []) + [sys.executable, "-m", "reporter.validate.worker", mode, str(job_dir)]
    log_path = job_dir / f"{mode}.log"
    result_path = job_dir / f"{mode}.json"
    result_path.unlink(missing_ok=True)
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=_child_env(ext_dir), timeout=timeout_s,
                                  start_new_session=True)
            rc: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-6000:]
    if rc is None:
        return {"verdict": "timeout", "reason": f"{mode} did not finish within {timeout_s:g} s (killed)", "log": tail, "phase_s": {}}
    if result_path.is_file():
        out: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
        out["log"] = (out.pop("traceback", "") + "\n" + tail).strip()[-6000:]
        return out
    why = f"the worker died (exit code {rc}{', signal ' + str(-rc) if rc < 0 else ''}) before writing a result"
    return {"verdict": "crashed", "reason": why, "log": tail, "phase_s": {}}


def _job(run: "RunRecord", settings: ValidationSettings, device: str) -> dict[str, Any]:
    fk = run.trace.final_kernel
    assert fk is not None and run.trace.reference_source is not None
    return {"reference": run.trace.reference_source, "kernel": fk.source, "settings": settings.model_dump(mode="json"),
            "device": device, "precision": run.trace.run.precision or DEFAULT_PRECISION,
            "extensions_dir": str(EXT_CACHE / sha256_text(fk.source)[:16])}


def _profile_ncu(job: dict[str, Any], work: Path, settings: ValidationSettings) -> dict[str, Path]:
    ncu = shutil.which("ncu")
    if ncu is None:
        return {}
    files: dict[str, Path] = {}
    for role in ("kernel", "reference"):
        rdir = work / f"ncu-{role}"
        rep = rdir / "profile"
        prefix = [ncu, "--target-processes", "all", "--clock-control", "none", "--nvtx", "--nvtx-include", "measured/",
                  *[a for s in NCU_SECTIONS for a in ("--section", s)], "--metrics", NCU_METRICS, "-f", "-o", str(rep)]
        out = run_worker("profile", {**job, "role": role}, rdir, settings.timeout_s * 3, prefix)
        report = rep.with_suffix(".ncu-rep")
        if out.get("verdict") != "correct" or not report.is_file():
            continue
        csv_path = rdir / "raw.csv"
        with open(csv_path, "w", encoding="utf-8") as fh:
            subprocess.run([ncu, "-i", str(report), "--page", "raw", "--csv", "--print-units", "base"], stdout=fh,
                           stderr=subprocess.DEVNULL, timeout=300, check=False)
        if csv_path.stat().st_size > 0:
            files[role] = csv_path
    return files


def validate_runs(data: Path, runs: list["RunRecord"], settings: ValidationSettings, *, ncu: bool = False,
                  force: bool = False, progress: bool = False, jobs: int = 4,
                  device: str | None = None) -> dict[str, tuple[ValidationResult, bool]]:
    """Validate every run that has a final kernel; returns run id -> (result, came from cache)."""
    env = environment()
    device = device or ("cuda" if env.gpu != "cpu" else "cpu")
    results: dict[str, tuple[ValidationResult, bool]] = {}
    todo = []
    for run in runs:
        key = _key(run)
        if key is None:
            continue
        hit = None if force else cache.lookup(data, key, env, settings)
        if hit is not None and (not ncu or hit[0].ncu_files):
            results[run.run_id] = (hit[0], True)
        else:
            todo.append((run, key))
    if not todo:
        return results
    work = Path(tempfile.mkdtemp(prefix="reporter-validate-"))
    say = (lambda msg: print(msg, file=sys.stderr, flush=True)) if progress else (lambda msg: None)
    try:
        # Compiles are CPU-bound and independent: run them side by side, each in its own process.
        job_of = {key: _job(run, settings, device) for run, key in todo}

        def compile_one(item: tuple["RunRecord", str]) -> dict[str, Any]:
            return run_worker("compile", job_of[item[1]], work / item[1], settings.timeout_s)

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            compiled = list(pool.map(compile_one, todo))
        for n, ((run, key), comp) in enumerate(zip(todo, compiled), start=1):
            say(f"[{n}/{len(todo)}] {run.run_id}: compile {comp['verdict']}")
            if run.trace.run.precision is None:
                say(f"[{n}/{len(todo)}] {run.run_id}: the trace records no precision; checking at {DEFAULT_PRECISION}")
            job = job_of[key]
            out = comp if comp["verdict"] != "correct" else run_worker("check", job, work / key, settings.timeout_s)
            out.setdefault("phase_s", {}).update({k: v for k, v in comp.get("phase_s", {}).items()})
            # Profile whatever ran at the nominal shapes, even if it later failed at jittered ones.
            ncu_files = _profile_ncu(job, work / key, settings) if ncu and out.get("kernel_timing") else {}
            fk = run.trace.final_kernel
            assert fk is not None and run.trace.reference_source is not None
            findings = [StaticFinding(check=f.check, severity=f.severity, line=f.line, text=f.text, message=f.message)  # type: ignore[arg-type]
                        for f in scan(fk.source, run.trace.run.backend)]
            fields = {k: out.get(k) for k in ("verdict", "reason", "log", "weights_note", "trials", "kernel_timing",
                                              "reference_timing", "compile_timing", "kernel_launches", "reference_launches",
                                              "kernel_peak_bytes", "reference_peak_bytes", "deterministic") if out.get(k) is not None}
            result = ValidationResult(
                precision=job["precision"], precision_assumed=run.trace.run.precision is None,
                kernel_sha256=sha256_text(fk.source), reference_sha256=sha256_text(run.trace.reference_source),
                settings=settings, environment=env, measured_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                problem_names=comp.get("problem_names") or out.get("problem_names") or [],
                static_findings=findings, phase_s={k: round(v, 3) for k, v in out.get("phase_s", {}).items()}, **fields)
            cache.store(data, key, result, ncu_files)
            results[run.run_id] = (result, False)
            say(f"[{n}/{len(todo)}] {run.run_id}: {result.verdict} {result.reason}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results
