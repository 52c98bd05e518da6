"""Real-CUDA checks of the validator: run on the GPU machine, skipped everywhere else."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import KERNELS, kernel_run
from reporter.collect import collect
from reporter.collect.suspicion import suspicion
from reporter.core.records import ValidationSettings
from reporter.core.schema import LaunchGroup, WorkerJob
from reporter.validate import gpu_available, validate_runs
from reporter.validate.buildcache import default_root
from reporter.validate.recorder import RunStats, check_settings

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]
CHEATS = KERNELS.parent / "cheats"
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=3, perf_trials=10, warmup=2, timeout_s=300)


def test_fixture_verdicts_on_cuda(tmp_path: Path) -> None:
    # The misbehaving kernels of the CPU tests (timeouts are covered there), plus a real CUDA kernel
    # and one that faults: the fault
    # is contained in its own process and the kernels validated after it still pass.
    names = ["cuda_illegal", "cuda_scale", "correct", "wrong", "mutates", "nominal_only"]
    for name in names:
        kernel_run(tmp_path, name, (KERNELS / f"{name}.py").read_text())
    stats: list[RunStats] = []
    results = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS.model_copy(update={"timeout_s": 240}), jobs=4,
                            stats=stats)
    verdicts = {k: v[0].verdict for k, v in results.items()}
    for k, (res, _) in sorted(results.items()):
        print(k, res.verdict, res.reason, res.speedup, res.kernel_launches)
    assert verdicts["cuda_illegal"] in ("runtime_error", "crashed")
    assert verdicts["cuda_scale"] == "correct"
    assert verdicts["correct"] == "correct"
    assert verdicts["wrong"] == "incorrect"
    assert verdicts["mutates"] == "incorrect"
    assert verdicts["nominal_only"] == "incorrect"
    scale = results["cuda_scale"][0]
    assert scale.kernel_launches is not None and scale.kernel_launches.launches >= 2  # GEMM + our kernel
    assert scale.kernel_peak_bytes and scale.kernel_peak_bytes > 0
    # A real CUDA extension builds with the light headers, and its check loads it without building again.
    assert scale.build_note is not None and scale.build_note.startswith("light build:"), scale.build_note
    key = next(o.item.build_key for o in stats[0].outcomes if o.item.run_id == "cuda_scale")
    compiled = sorted(line.split("\t")[3] for log in (default_root() / key).rglob(".ninja_log")
                      for line in log.read_text().splitlines() if not line.startswith("#"))
    assert compiled == sorted(["main.o", "cuda.cuda.o", "reporter_fixture_scale_relu.so"]), compiled
    # launch attribution from the profiled call: our kernel is the submission's, the GEMM is not, one stream
    att = scale.kernel_launches.attribution
    assert att is not None and att.source_kernels == ("scale_relu_kernel",)
    assert [k.launches for k in att.kernels if k.group is LaunchGroup.SUBMISSION] == [1]
    assert att.launches(LaunchGroup.SUBMISSION) < scale.kernel_launches.launches
    assert att.unwaited_streams == () and att.call_stream in att.streams
    assert scale.dynamic_checks and not any(d.tripped for d in scale.dynamic_checks)


def test_cheat_suite_kernels_on_cuda(tmp_path: Path) -> None:
    # Defect 1 of issue 20 on real CUDA: a kernel reading a device value on the host mid-forward stays
    # correct, and only its CUDA-graph basis says it cannot be captured; a torch fallback is suspect by
    # launch attribution; a side stream that waits for nothing is flagged by the stream rule itself (the
    # spin before the profiled call), however short its kernel, and a synchronised side stream is not.
    cases = {"item_frobenius_cuda": "frobenius", "torch_fallback": "relu", "side_stream_unwaited": "matmul",
             "kb_non_default_stream": "matmul", "synced_side_stream": "relu"}
    for name, ref in cases.items():
        kernel_run(tmp_path, name, (CHEATS / "kernels" / f"{name}.py").read_text(),
                   reference=(CHEATS / "references" / f"{ref}.py").read_text())
    runs = collect(tmp_path).runs
    results = validate_runs(tmp_path, runs, SETTINGS.model_copy(update={"timeout_s": 240}), jobs=len(cases))
    for k, (res, _) in sorted(results.items()):
        print(k, res.verdict, res.reason, res.kernel_timing, res.kernel_launches)
    item = results["item_frobenius_cuda"][0]
    assert item.verdict == "correct" and item.reason.startswith("all 2 trials passed"), item.reason
    assert item.kernel_timing is not None and item.kernel_timing.device is not None and item.kernel_timing.graph is None
    assert item.kernel_timing.graph_note and not item.kernel_timing.graph_note.startswith("not measured")
    by_id = {r.run_id: r for r in runs}
    flags = {name: [x.check for x in suspicion(by_id[name], results[name][0]).reasons] for name in cases}
    assert flags["item_frobenius_cuda"] == []
    assert "attribution.submission" in flags["torch_fallback"]
    for name in ("side_stream_unwaited", "kb_non_default_stream"):
        launches = results[name][0].kernel_launches
        assert "attribution.streams" in flags[name], (name, results[name][0].verdict, launches)
    assert results["synced_side_stream"][0].verdict == "correct" and "attribution.streams" not in flags["synced_side_stream"]


@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs Nsight Compute's ncu")
def test_ncu_report_module_reads_what_the_csv_says(tmp_path: Path) -> None:
    # Profile one fixture kernel under ncu, then read the binary report through NVIDIA's ncu_report
    # module and the raw CSV export: both must give the same duration and register count.
    from reporter.collect import ncu as gm
    from reporter.validate.process import run_fresh
    from reporter.validate.profiling import NCU_METRICS

    kernel_run(tmp_path, "cuda_scale", (KERNELS / "cuda_scale.py").read_text())
    run = collect(tmp_path).runs[0]
    rep = tmp_path / "prof"
    prefix = [shutil.which("ncu"), "--target-processes", "all", "--clock-control", "none", "--nvtx", "--nvtx-include",
              "measured/", "--section", "SpeedOfLight", "--section", "LaunchStats", "--metrics", NCU_METRICS, "-f", "-o", str(rep)]
    job = WorkerJob(run.trace.reference_source, run.trace.final_kernel.source,  # type: ignore[arg-type, union-attr]
                    check_settings(SETTINGS), "cuda", "fp32", str(tmp_path / "ext"), "kernel")
    out = run_fresh("profile", job, tmp_path / "job", 600, {"TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")}, prefix)
    assert out.verdict == "correct", out
    report = rep.with_suffix(".ncu-rep")
    csv = tmp_path / "raw.csv"
    with open(csv, "w") as fh:
        subprocess.run([shutil.which("ncu"), "-i", str(report), "--page", "raw", "--csv", "--print-units", "base"], stdout=fh, check=True)
    from_rep = [gm.derive(k) for k in gm.load_ncu_report(report)]
    from_csv = [gm.derive(k) for k in gm.load_ncu(csv)]
    print([(f.name[:60], f.duration_ns, f.figures["regs_per_thread"].value) for f in from_rep])
    print([(f.name[:60], f.duration_ns, f.figures["regs_per_thread"].value) for f in from_csv])
    assert len(from_rep) == len(from_csv) and any("scale_relu_kernel" in f.name for f in from_rep)
    for a, b in zip(from_rep, from_csv):  # both list the launches in profiling order
        assert a.duration_ns == pytest.approx(b.duration_ns, rel=1e-3)
        assert a.figures["regs_per_thread"].value == b.figures["regs_per_thread"].value
