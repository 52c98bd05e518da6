"""Blind planting round 7 (benchmarks/planted_faults_round7.txt): the five faults the suite let through, each pinned by
a test that fails with its fault re-planted. Expected values are written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import KERNELS, minimal_trace, write_trace
from reporter.collect.sol import SideTime, SolReport
from reporter.collect.traces import collect
from reporter.core.peaks import TABLE
from reporter.core.sol import AboveCause
from reporter.core.work import Counting, Kind, OpCount, TensorIO, WorkCount


def test_one_gpu_recorded_and_re_measured_is_one_gpu() -> None:
    from reporter.aggregates.sol import cross_gpu
    rows = [{"run_id": f"m/p{p}", "benchmark": "kb", "configuration": "c", "level": 1, "problem_id": p, "problem": f"{p}_P.py",
             "model": "m", "complete": True, "sol_fraction": 0.5, "sol_gpu": "H200 SXM 141GB",
             "speedup_source": "re-validated" if p == 1 else "recorded"} for p in (1, 2)]
    row = cross_gpu(pd.DataFrame(rows)).iloc[0]
    assert row["gpu_names"] == ("H200 SXM 141GB",) and row["gpu_count"] == 1
    assert row["gpus"] == "H200 SXM 141GB re-measured ×1 · H200 SXM 141GB recorded ×1"


def test_a_flagged_recorded_time_silences_only_its_own_note() -> None:
    """The re-measured basis's cause still shows when the recorded time carries a flag (which explains only itself)."""
    from reporter.collect.floors import bounds_on
    from reporter.render.sol_view import sol_view
    gemm = 2 * 4096**3
    w = WorkCount("a" * 64, Counting.META, dtype="fp32", ops=(OpCount(Kind.MATMUL, "fp32", gemm, 1, gemm),),
                  tensors=(TensorIO("input 0", (1,), "fp32", 2**27, 2**27), TensorIO("output 0", (1,), "fp32", 2**26, 2**26)))
    b = bounds_on("NVIDIA H100 80GB HBM3", w, clock_mhz=None, flushed=True, tf32=False)
    assert b.peaks is TABLE["H100 SXM"]
    times = (SideTime("kernel", "recorded", 1e-3, 2.05, False, (AboveCause.TENSOR_CORES,)),
             SideTime("kernel", "device", 1e-3, 2.05, False, (AboveCause.TENSOR_CORES,)))
    view = sol_view(SolReport(w, "", b, b, times), recorded_flagged=True)
    assert [n.split(" is ")[0] for n in view.notes if n.startswith("The kernel's")] == ["The kernel's device time"]


def _suspect_run(data: Path, reviews: str | None) -> Any:
    doc = minimal_trace()
    doc["reference_source"] = (KERNELS / "reference.py").read_text()
    doc["final_kernel"] = {"source": "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"}
    write_trace(data, "r1", doc)
    if reviews is not None:
        run = collect(data).runs[0]
        (data / "reviews.toml").write_text(
            f'[[review]]\nrun = "r1"\nkernel_sha256 = "{run.kernel_hash}"\nreviewer = "bo"\nverdict = "clean"\nnote = "{reviews}"\n')
    return collect(data).runs[0]


def test_a_cleared_run_counts_no_finding_as_a_flag(tmp_path: Path) -> None:
    from reporter.collect.suspicion import flag_count, suspicion
    flagged = _suspect_run(tmp_path / "a", None)
    sus = suspicion(flagged, None)
    assert sus.suspect and flag_count(flagged, sus) == len(flagged.flags) + len(sus.reasons) >= 1
    cleared = _suspect_run(tmp_path / "b", "checked by hand")
    sus = suspicion(cleared, None)
    assert not sus.suspect and sus.reasons and flag_count(cleared, sus) == len(cleared.flags)


def test_the_project_default_is_not_the_harness_s_rules() -> None:
    from reporter.core.judgement import PROJECT_DEFAULT, judge_run
    from reporter.core.records import RunInfo
    default = judge_run(RunInfo(model="m", rules="kernelbench-2025", rules_from=PROJECT_DEFAULT), None)
    named = judge_run(RunInfo(model="m", rules="kernelbench-2025", rules_from="given to reporter import (--rules)"), None)
    assert (default.harness_rules_known, named.harness_rules_known) == (False, True)


def test_nans_in_the_same_places_are_the_same_bits() -> None:
    torch = pytest.importorskip("torch")
    from reporter.validate import integrity
    x = torch.tensor([1.0, float("nan"), 3.0])
    steady = lambda t: t * 2  # noqa: E731
    assert integrity.same_bits(steady, [x], "cpu")
    found = integrity.determinism(steady, steady, [x], "cpu", 1e-4, 1e-4)
    assert found.tripped is False and found.detail == "two calls on the same inputs returned the same bits"
