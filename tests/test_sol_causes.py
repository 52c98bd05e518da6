"""Issue 44: no impossible time counts anywhere, and a fraction of speed of light above 100% names the assumption
it broke. Expected values are worked out by hand from the H100 SXM's datasheet row (fp32 66.9 TFLOP/s, BF16
989.4 TFLOP/s dense, 3.35 TB/s, 50 MiB of L2) and the 2 µs launch floor."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import KERNELS, minimal_trace, write_trace
from reporter.aggregates import leaderboard
from reporter.aggregates.sol import cross_gpu
from reporter.collect.sol import sol_report
from reporter.collect.traces import RunRecord, collect
from reporter.core.peaks import TABLE
from reporter.core.records import sha256_text
from reporter.core.sol import AboveCause, above_causes, below_floor, floor_bound, fraction, sol_bound
from reporter.core.work import Counting, Kind, OpCount, TensorIO, WorkCount
from reporter.frames import run_row
from reporter.validate.work import store_work

H100 = TABLE["H100 SXM"]
GEMM = 2 * 4096**3  # 137.4 GFLOP: 2.054 ms on the fp32 CUDA cores, 139 µs at the BF16 tensor rate
MIB = 2**20


def work(ops: tuple[OpCount, ...], reads: int, writes: int, sha: str = "a" * 64) -> WorkCount:
    return WorkCount(sha, Counting.META, dtype="fp32", ops=ops,
                     tensors=(TensorIO("input 0", (1,), "fp32", reads, reads), TensorIO("output 0", (1,), "fp32", writes, writes)))


def causes(w: WorkCount, seconds: float, *, flushed: bool | None = True, launched: bool = False) -> tuple[AboveCause, ...]:
    return above_causes(w, H100, None, False, flushed, seconds, launched)


def test_an_fp32_matmul_faster_than_the_cuda_cores_used_tensor_cores() -> None:
    gemm = work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, GEMM),), 128 * MIB, 64 * MIB)
    assert causes(gemm, 3e-3) == ()  # slower than T_SOL (2.054 ms): nothing to explain
    assert causes(gemm, 1e-3) == (AboveCause.TENSOR_CORES,)  # 1 ms: only tensor cores (139 µs) reach it
    assert causes(gemm, 1e-3, flushed=None) == (AboveCause.TENSOR_CORES,)  # an L2 does not speed up compute


def test_a_reference_whose_matmul_its_inputs_do_not_force_is_less_work() -> None:
    # diag(a) @ b: 137 GFLOP of matmul on a matrix the reference built, none forced; 192 MiB moved (60 µs at DRAM)
    diag = work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, 0),), 128 * MIB, 64 * MIB)
    assert causes(diag, 1e-4) == (AboveCause.LESS_WORK,)  # 100 µs: under the tensor rate's 139 µs, over 60 µs of memory
    assert causes(diag, 1e-3) == (AboveCause.TENSOR_CORES, AboveCause.LESS_WORK)  # either alone explains 1 ms
    assert causes(diag, 3e-5) == (AboveCause.UNKNOWN,)  # 30 µs: under the memory time even with no FLOPs


def test_a_working_set_that_fits_an_unflushed_l2() -> None:
    small = work((OpCount(Kind.POINTWISE, "fp32", 4 * MIB, 1),), 16 * MIB, 16 * MIB)  # 32 MiB: 10.0 µs at DRAM
    l2_s = 32 * MIB / H100.l2_bw  # the L2 reads it at 5120 B a clock (3.3 µs at 1980 MHz)
    assert l2_s == pytest.approx(3.31e-6, rel=0.01)
    assert causes(small, 5e-6, flushed=None) == (AboveCause.L2,)  # a harness's time: not known to flush
    assert causes(small, 5e-6, flushed=False) == (AboveCause.L2,)
    assert causes(small, 5e-6, flushed=True) == (AboveCause.UNKNOWN,)  # flushed: nothing the bound left out explains it
    big = work((OpCount(Kind.POINTWISE, "fp32", 4 * MIB, 1),), 400 * MIB, 400 * MIB)  # 800 MiB: 250 µs; L2 holds 50 MiB
    # 50 of its 800 MiB at L2 speed: 5.2 + 234.8 = 240.0 µs, against 250.4 µs all at DRAM
    assert causes(big, 242e-6, flushed=None) == (AboveCause.L2,) and causes(big, 238e-6, flushed=None) == (AboveCause.UNKNOWN,)


def test_several_assumptions_together() -> None:
    half = work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, GEMM // 2),), 128 * MIB, 64 * MIB)
    # alone: tensor cores 139 µs, half the FLOPs 1.03 ms; together 69 µs (memory 60 µs): 100 µs needs both
    assert causes(half, 1e-4) == (AboveCause.SEVERAL,)


def test_a_time_from_the_host_holds_one_launch() -> None:
    tiny = work((OpCount(Kind.POINTWISE, "fp32", 1024, 1),), 4096, 4096)  # 8 KiB: 2.4 ns at DRAM
    b = sol_bound(tiny, H100, None, tf32=False)
    assert b.seconds == pytest.approx(8192 / 3.35e12) and b.least(True) == pytest.approx(2e-6) and b.least(False) == b.seconds
    assert fraction(b, 4e-6, launched=True) == pytest.approx(0.5)  # 2 µs of 4, not 0.06%
    assert fraction(b, 4e-6) == pytest.approx(8192 / 3.35e12 / 4e-6)
    assert causes(tiny, 1.5e-6, launched=True) == (AboveCause.UNDER_LAUNCH,)
    assert causes(tiny, 1.5e-6, launched=False) == ()  # a device time leaves the launch out
    floor = floor_bound(tiny, H100, flushed=True)
    assert below_floor(0.9e-6, floor, launched=True) and not below_floor(1.1e-6, floor, launched=True)
    assert below_floor(0.9e-6, None, launched=True) and not below_floor(0.9e-6, None)  # no count: the launch floor alone


def _run(data: Path, name: str, timing: dict[str, Any], counted: bool = True, **run: Any) -> RunRecord:
    ref = f"# reference of {name}\n"
    doc = minimal_trace(recorded_gpu="NVIDIA H100 80GB HBM3", precision="fp32", problem_id=int(name[-1]), **run)
    doc["reference_source"] = ref
    doc["final_kernel"] = {"source": (KERNELS / "cuda_scale.py").read_text()}
    doc["metrics"] = {"timing": {"unit": "ms", **timing}}
    write_trace(data, name, doc)
    if counted:
        store_work(data, work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, 0),), 128 * MIB, 64 * MIB, sha256_text(ref)))
    return next(r for r in collect(data).runs if r.run_id == name)


def test_a_one_nanosecond_kernel_counts_nowhere_without_a_work_count(tmp_path: Path) -> None:
    r = _run(tmp_path, "run1", {"runtime": 1e-6, "ref_runtime": 0.12, "speedup": 120000.0}, counted=False)
    assert r.work is None
    row = run_row(r, None)
    assert row["recorded_impossible"] is True and row["speedup"] is None and row["below_floor"] == "kernel recorded"
    (flag,) = [f for f in r.flags if f.field == "timing.runtime"]
    assert "it takes to launch one kernel" in flag.message
    board = leaderboard(pd.DataFrame([row]))
    assert int(board["fast_1.0_n"].iloc[0]) == 0 and int(board["correct"].iloc[0]) == 1


def test_a_fraction_above_one_is_shown_with_its_cause_and_left_out_of_every_sol_mean(tmp_path: Path) -> None:
    # recorded: 0.1 ms against T_SOL 2.054 ms of an fp32 diag(a) @ b: 2054%, its matmul unforced (the floor is 60 µs
    # of DRAM traffic at most, so the time is possible)
    above = _run(tmp_path, "run1", {"runtime": 0.1, "ref_runtime": 3.0, "speedup": 30.0})
    plain = _run(tmp_path, "run2", {"runtime": 4.108, "ref_runtime": 8.0, "speedup": 1.95})
    rep = sol_report(above, None)
    k = rep.time("kernel", "recorded")
    assert k is not None and k.fraction == pytest.approx(GEMM / 66.9e12 / 1e-4) and k.above == (AboveCause.LESS_WORK,)
    a, p = run_row(above, None), run_row(plain, None)
    assert a["sol_cause"] == "less work" and a["recorded_sol_cause"] == "less work" and a["speedup"] == 30.0
    assert p["sol_cause"] is None and p["sol_fraction"] == pytest.approx(0.5, rel=1e-3)
    frame = pd.DataFrame([a, p])
    board = leaderboard(frame)
    assert board["sol_n"].iloc[0] == 1 and board["sol_above_n"].iloc[0] == 1
    assert board["sol_geomean"].iloc[0] == pytest.approx(0.5, rel=1e-3)  # the 2054% run is in no mean
    assert int(board["fast_1.0_n"].iloc[0]) == 2  # its speedup still counts: the bound, not the time, was wrong
    cross = cross_gpu(frame)
    assert cross["sol_best"].iloc[0] == pytest.approx(0.5, rel=1e-3) and cross["above"].iloc[0] == 1
    assert cross["gpu_names"].iloc[0] == ("H100 SXM5 80GB",) and cross["gpu_count"].iloc[0] == 1


def test_the_recorded_bound_admits_tf32_when_the_rules_that_scored_the_run_do(tmp_path: Path) -> None:
    gemm_ms = GEMM / 66.9e12 * 1e3
    old = run_row(_run(tmp_path / "a", "run1", {"runtime": 3.0, "ref_runtime": 6.0, "speedup": 2.0}, rules="kernelbench-2025"), None)
    new = run_row(_run(tmp_path / "b", "run1", {"runtime": 3.0, "ref_runtime": 6.0, "speedup": 2.0}, rules="kernelbench-2025-11"), None)
    assert new["recorded_sol_ms"] == pytest.approx(gemm_ms)  # 1e-4 admits no TF32: fp32 CUDA cores
    assert old["recorded_sol_ms"] == pytest.approx(GEMM / 494.7e12 * 1e3)  # 1e-2 does: the TF32 rate, 7.4x less


def test_the_site_marks_the_fraction_and_its_cause(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reporter.cli import main
    data = tmp_path / "data"
    _run(data, "run1", {"runtime": 0.1, "ref_runtime": 3.0, "speedup": 30.0})
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    run_page = next((tmp_path / "site" / "runs").glob("*.html")).read_text(encoding="utf-8")
    assert "less work: the reference computes" in run_page and "above T_SOL: less work" in run_page
    problem = next((tmp_path / "site" / "problems").glob("*.html")).read_text(encoding="utf-8")
    assert re.search(r'title="the bound was wrong for this run[^"]*">⚑</span><span class="sub line">above T_SOL: less work</span>', problem)
    rows = (tmp_path / "site" / "runs.csv").read_text(encoding="utf-8")
    assert ",less work," in rows
