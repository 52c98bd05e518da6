"""Real-CUDA checks of the validator: run on the GPU machine, skipped everywhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import KERNELS, kernel_run
from reporter.collect import collect
from reporter.records import ValidationSettings
from reporter.validate import gpu_available, validate_runs

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA device")]
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=3, perf_trials=10, warmup=2, timeout_s=300)


def test_fixture_verdicts_on_cuda(tmp_path: Path) -> None:
    # The misbehaving kernels of the CPU tests (timeouts are covered there), plus a real CUDA kernel
    # and one that faults: the fault
    # is contained in its own process and the kernels validated after it still pass.
    names = ["cuda_illegal", "cuda_scale", "correct", "wrong", "mutates", "nominal_only"]
    for name in names:
        kernel_run(tmp_path, name, (KERNELS / f"{name}.py").read_text())
    results = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS.model_copy(update={"timeout_s": 240}), jobs=4)
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
