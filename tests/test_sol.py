"""Hardware scores (issue 33): the peak table, T_SOL, fraction of it, SOL-ExecBench's score and the floor under
every time, recorded or re-measured. Pure functions over hand-made counts: no torch, no build."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import KERNELS, minimal_trace, write_trace
from reporter.collect.sol import SUSPECT_FIELD, sol_report
from reporter.collect.suspicion import suspicion
from reporter.collect.traces import RunRecord, collect
from reporter.collect.validation import CachedValidation
from reporter.core.peaks import TABLE, peaks_for
from reporter.core.records import Trace, ValidationResult
from reporter.core.schema import BasisStats, TimingFigures
from reporter.core.sol import FLOOR_MARGIN, admits_tf32, below_floor, floor_bound, fraction, sol_bound, sol_score
from reporter.core.work import Counting, Kind, OpCount, TensorIO, WorkCount
from reporter.frames import run_row
from reporter.render.sol_view import DROPPED, dropped_speedups
from reporter.render.timing_view import timing_view
from reporter.validate.work import store_work

GEMM = 2 * 4096**3  # FLOPs of a 4096³ fp32 matmul
MIB64 = 4096 * 4096 * 4


def work(ops: tuple[OpCount, ...], reads: int, writes: int, sha: str = "a" * 64) -> WorkCount:
    return WorkCount(sha, Counting.META, dtype="fp32", ops=ops,
                     tensors=(TensorIO("input 0", (1,), "fp32", reads, reads), TensorIO("output 0", (1,), "fp32", writes, writes)))


STREAM = work((OpCount(Kind.POINTWISE, "fp32", 10**6, 1),), 4 * 10**9, 4 * 10**9)  # a big elementwise op: memory-bound
MATMUL = work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, GEMM),), 2 * MIB64, MIB64)  # compute-bound


@pytest.mark.parametrize(("name", "row", "why"), [
    ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB", ""), ("NVIDIA H200", "H200 SXM 141GB", ""), ("NVIDIA H100 PCIe", "H100 PCIe 80GB", ""),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB", ""), ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", ""),
    ("NVIDIA A100", "A100 SXM4 80GB", "assumed SXM4 (the name gives no form factor) and 80 GB (the name gives no memory size)"),
    ("NVIDIA L40S", "L40S", ""), ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090", ""), ("NVIDIA B200", "B200", ""),
])
def test_device_names_find_their_row(name: str, row: str, why: str) -> None:
    m = peaks_for(name)
    assert m.peaks is not None and m.peaks.name == row and m.why == why


def test_an_unknown_or_unrecorded_gpu_has_no_peaks_and_says_why() -> None:
    assert peaks_for("Tesla T4").peaks is None and "no peaks known for T4" in peaks_for("Tesla T4").why
    assert peaks_for(None).peaks is None and "not recorded" in peaks_for(None).why


def test_datasheet_figures_and_clock_scaling() -> None:
    h100 = TABLE["H100 SXM"]
    assert (h100.fp32, h100.bf16, h100.dram, h100.l2_bytes) == pytest.approx((66.9e12, 989.4e12, 3.35e12, 50 * 2**20))
    assert (TABLE["H200 SXM"].dram, TABLE["H200 SXM"].fp32) == pytest.approx((4.8e12, 66.9e12))
    half = h100.at_clock(990)  # half the rated 1980 MHz: CUDA cores and L2 halve, DRAM does not
    assert half.fp32 == pytest.approx(33.45e12) and half.l2_bw == pytest.approx(5120 * 990e6) and half.dram == 3.35e12
    assert half.tf32 == pytest.approx(494.7e12 * 990 / 1830)  # tensor cores: from their own rated 1,830 MHz
    assert h100.at_clock(2100) is h100 and h100.at_clock(None) is h100  # never above the rated per-clock width
    assert TABLE["RTX 4090"].fastest_16bit == pytest.approx(330.3e12)  # FP16 with FP16 accumulate, twice its FP32-accumulate rate


@pytest.mark.parametrize(("gpu", "clock", "tensor_mhz", "bf16", "fp32"), [
    ("H100 SXM", 1830, 1830, 989.4e12, 66.9e12 * 1830 / 1980),  # 989.4 TF = 132 SMs x 4,096 FLOP x 1,830 MHz
    ("H100 PCIe", 1620, 1620, 756.0e12, 51.2e12 * 1620 / 1755),  # 114 SMs x 4,096 x 1,620 MHz
    ("H100 NVL", 1545, 1545, 835.5e12, 60.0e12 * 1545 / 1785),  # 132 SMs x 4,096 x 1,545 MHz: 13% under the boost
    ("H200 NVL", 1200, 1545, 835.5e12 * 1200 / 1545, 60.0e12 * 1200 / 1785),
    ("A100 SXM 80", 1200, 1410, 312.0e12 * 1200 / 1410, 19.5e12 * 1200 / 1410),  # one rated clock for both
])
def test_tensor_rates_scale_from_the_clock_they_are_rated_at(gpu: str, clock: int, tensor_mhz: int, bf16: float,
                                                             fp32: float) -> None:
    at = TABLE[gpu].at_clock(clock)
    assert (at.bf16, at.fp16, at.fp32) == pytest.approx((bf16, bf16, fp32))
    # between the tensor cores' rated clock and the boost, they run at their rated figure, never above it
    between = TABLE[gpu].at_clock(tensor_mhz + 50) if tensor_mhz + 50 < TABLE[gpu].boost_mhz else None
    assert between is None or between.bf16 == pytest.approx(TABLE[gpu].bf16)


def test_t_sol_is_the_slower_of_compute_and_memory() -> None:
    h200, h100 = TABLE["H200 SXM"], TABLE["H100 SXM"]
    mem = sol_bound(STREAM, h200, 1980, tf32=False)
    assert mem.limiter == "memory" and mem.seconds == pytest.approx(8e9 / 4.8e12)
    comp = sol_bound(MATMUL, h100, 1980, tf32=False)
    assert comp.limiter == "compute" and comp.seconds == pytest.approx(GEMM / 66.9e12) and comp.peak_label == "fp32 CUDA cores"
    tf32 = sol_bound(MATMUL, h100, 1980, tf32=True)
    assert tf32.seconds == pytest.approx(GEMM / 494.7e12) and tf32.peak_label.startswith("TF32 tensor cores")
    assert sol_bound(MATMUL, h100, 990, tf32=False).seconds == pytest.approx(2 * GEMM / 66.9e12)  # at half the clock
    assert admits_tf32(1e-2, 1e-2) and not admits_tf32(1e-4, 1e-4) and not admits_tf32(1e-2, None)


def test_the_floor_is_as_generous_as_physics_allows() -> None:
    h100 = TABLE["H100 SXM"]
    f = floor_bound(MATMUL, h100, flushed=True)
    assert f.seconds == pytest.approx(GEMM / 989.4e12)  # the fastest 16-bit tensor rate, not fp32's
    l2_bw = 5120 * 1980e6
    cold = floor_bound(STREAM, TABLE["H200 SXM"], flushed=True)  # reads from DRAM; writes up to the L2's size absorbed by it
    assert cold.seconds == pytest.approx(4e9 / 4.8e12 + 50 * 2**20 / l2_bw + (4e9 - 50 * 2**20) / 4.8e12)
    small = work((), 10 * 2**20, 10 * 2**20)  # 20 MB fits the 50 MB L2: unflushed, all of it at L2 bandwidth
    warm = floor_bound(small, h100, flushed=False)
    assert warm.seconds == pytest.approx(20 * 2**20 / l2_bw) and "the working set fits" in warm.level
    built = work((OpCount(Kind.MATMUL, "fp32", GEMM, 1, 0),), 1000, 1000)  # a matmul on a tensor the reference built
    assert floor_bound(built, h100, flushed=True).compute_s == 0


def test_margin_fraction_and_score() -> None:
    f = floor_bound(STREAM, TABLE["H200 SXM"], flushed=True)
    assert below_floor(f.seconds * FLOOR_MARGIN * 0.99, f) and not below_floor(f.seconds * FLOOR_MARGIN * 1.01, f)
    assert not below_floor(None, f) and not below_floor(1e-9, None)
    b = sol_bound(STREAM, TABLE["H200 SXM"], None, tf32=False)
    assert fraction(b, b.seconds * 4) == pytest.approx(0.25) and fraction(b, None) is None
    assert sol_score(4e-3, 4e-3, 1e-3) == pytest.approx(0.5) and sol_score(1e-3, 4e-3, 1e-3) == pytest.approx(1.0)
    assert sol_score(2e-3, 4e-3, 1e-3) == pytest.approx(0.75)
    assert sol_score(2e-3, 1e-3, 1e-3) is None  # a reference at or under the bound: no denominator


def _run(tmp_path: Path, **timing: Any) -> RunRecord:
    """A run on an H200 whose reference reads and writes 4 GB (floor ~0.9 ms unflushed), through `collect`."""
    doc = minimal_trace(recorded_gpu="NVIDIA H200", precision="fp32")
    doc["reference_source"] = "# a reference\n"
    doc["final_kernel"] = {"source": (KERNELS / "cuda_scale.py").read_text()}
    doc["metrics"] = {"timing": {"unit": "ms", "runtime": 1.2, "ref_runtime": 3.0, "speedup": 2.5, **timing}}
    write_trace(tmp_path, "run", doc)
    from reporter.core.records import sha256_text
    store_work(tmp_path, work(STREAM.ops, 4 * 10**9, 4 * 10**9, sha256_text("# a reference\n")))
    (r,) = collect(tmp_path).runs
    return r


def test_a_recorded_time_below_the_floor_is_flagged_and_has_no_speedup(tmp_path: Path) -> None:
    fine = _run(tmp_path / "fine")
    assert not [f for f in fine.flags if f.field == "timing.runtime"] and run_row(fine, None)["speedup"] == 2.5
    r = _run(tmp_path / "fast", runtime=0.2, speedup=15.0)  # 0.2 ms: under half the ~0.9 ms floor
    (flag,) = [f for f in r.flags if f.field == "timing.runtime"]
    assert flag.severity == "error" and "faster than the hardware allows" in flag.message
    assert "H200 SXM 141GB" in flag.message and "L2 bandwidth" in flag.message and "8 GB moved" in flag.message
    row = run_row(r, None)
    assert row["speedup"] is None and row["recorded_speedup"] is None and row["below_floor"] == "kernel recorded"
    assert row["recorded_kernel_ms"] == 0.2  # the time stays, as the flag's evidence
    from reporter.render.revalidation import validation_view
    from reporter.render.summary import run_summary
    s = run_summary(r, validation_view(True, None, r.trace.metrics, "correct", "fp32"))
    assert s.speedup == DROPPED and s.speedup_value is None


def test_a_launch_floor_flag_and_the_hardware_floor_share_the_value(tmp_path: Path) -> None:
    r = _run(tmp_path, unit="us", runtime=0.5, ref_runtime=3000.0)  # 0.5 µs: below one launch and below the floor
    (flag,) = [f for f in r.flags if f.field == "timing.runtime"]
    assert "kernel launch takes" in flag.message and "Also: the recorded runtime 500 ns is faster than the hardware allows" in flag.message


def _stats(ms: float) -> BasisStats:
    return BasisStats(median_ms=ms, min_ms=ms, max_ms=ms, n=30, iqr_ms=0.0)


def _result(kernel: TimingFigures, reference: TimingFigures) -> ValidationResult:
    return ValidationResult(kernel_sha256="k", reference_sha256="r", settings={}, environment={"gpu": "NVIDIA H200"},
                            machine={"sm_clock_mhz": 1980}, verdict="correct", kernel_timing=kernel, reference_timing=reference)


def test_a_device_time_below_the_floor_makes_the_run_suspect(tmp_path: Path) -> None:
    r = _run(tmp_path)  # T_SOL on the H200: 8 GB / 4.8 TB/s = 1.67 ms; the floor after the 256 MB flush about the same
    honest = _result(TimingFigures(device=_stats(2.0), wall=_stats(2.1)), TimingFigures(device=_stats(5.0), wall=_stats(5.1)))
    rep = sol_report(r, honest)
    assert rep.time("kernel", "device").fraction == pytest.approx(8e9 / 4.8e12 / 2e-3)  # type: ignore[union-attr]
    assert not suspicion(r, honest).suspect and run_row(r, CachedValidation(honest, "v.json", {}))["sol_fraction"] == pytest.approx(8e9 / 4.8e12 / 2e-3)
    hidden = _result(TimingFigures(device=_stats(0.05), wall=_stats(2.1)), TimingFigures(device=_stats(5.0), wall=_stats(5.1)))
    sus = suspicion(r, hidden)
    (reason,) = [x for x in sus.reasons if x.source == "floor"]
    assert sus.suspect and reason.check == SUSPECT_FIELD and reason.anchor == "sol" and "escapes the timer" in reason.message
    row = run_row(r, CachedValidation(hidden, "v.json", {}))
    assert row["suspect"] and row["speedup"] is None and row["speedup_device"] is None and row["speedup_wall"] == pytest.approx(5.1 / 2.1)


def test_another_basis_below_the_floor_loses_its_speedup_only(tmp_path: Path) -> None:
    r = _run(tmp_path)
    res = _result(TimingFigures(device=_stats(2.0), wall=_stats(0.1)), TimingFigures(device=_stats(5.0), wall=_stats(5.1)))
    assert not suspicion(r, res).suspect  # a wall time under the floor drops that basis, it accuses nobody
    row = run_row(r, CachedValidation(res, "v.json", {}))
    assert row["speedup_wall"] is None and row["speedup"] == pytest.approx(2.5) and row["below_floor"] == "kernel wall"
    shown = {label: sp for label, sp, _ in dropped_speedups(timing_view(res, None), sol_report(r, res)).speedups}  # type: ignore[union-attr]
    assert shown["wall time"] == DROPPED and shown["device time"] == "2.50x"


def test_no_count_or_no_gpu_means_no_score_with_the_reason(tmp_path: Path) -> None:
    doc = minimal_trace(recorded_gpu="Tesla T4")
    doc["reference_source"] = "# never counted\n"
    write_trace(tmp_path, "run", doc)
    (r,) = collect(tmp_path).runs
    assert "reporter work DATA" in sol_report(r, None).why
    assert run_row(r, None)["work_note"].startswith("not counted yet")
    r2 = _run(tmp_path / "t4")
    t4 = Trace.model_validate({**r2.trace.model_dump(), "run": {**r2.trace.run.model_dump(), "recorded_gpu": "Tesla T4"}})
    rep = sol_report(RunRecord(r2.run_id, r2.trace_path, t4, (), (), work=r2.work), None)
    assert rep.recorded is not None and rep.recorded.sol is None and "no peaks known for T4" in rep.recorded.why


def text_of(page: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))))


def test_the_sample_site_shows_the_work_and_the_fractions(rendered_site: Path) -> None:
    """data/'s HingeLoss: 32768² fp32 predictions read once (4.29 GB); clamp(1 − p·t) is 3 pointwise FLOPs and the
    mean 1 more per element. On the H200 that is 4.29 GB / 4.8 TB/s = 0.895 ms; alpha's kernel took 2.659 ms, the reference 8.208 ms."""
    problem = text_of(rendered_site / "problems" / "l1-p100--100-hingeloss.html")
    assert "Work and speed of light" in problem and "4.29 GFLOP" in problem and "3.22 GFLOP" in problem  # 4 FLOP per element, 3 pointwise
    assert "1 FLOP per output element (ATen operators tagged pointwise)" in problem and "H200 SXM 141GB" in problem
    path = rendered_site / "runs" / "kernelbench-sweep-kernelbench-level1-demo-alpha-l1-p100-s0.html"
    assert 'id="sol"' in path.read_text(encoding="utf-8") and 'data-plotly="sol-roofline"' in path.read_text(encoding="utf-8")
    run = text_of(path)
    assert "33.7% · T_SOL 0.895 ms (device time on H200 SXM 141GB)" in run and "SOL score0.81" in run  # 0.895 / 2.659 ms; 1 / (1 + 1.764 / 7.313)


def test_a_build_after_counting_the_work_is_not_up_to_date_and_drops_the_impossible_time(tmp_path: Path) -> None:
    from reporter.core.records import sha256_text
    from reporter.render.incremental import build_incremental
    data, site = tmp_path / "data", tmp_path / "site"
    doc = minimal_trace(recorded_gpu="NVIDIA H200", precision="fp32")
    doc["reference_source"] = "# a reference\n"
    doc["final_kernel"] = {"source": (KERNELS / "cuda_scale.py").read_text()}
    doc["metrics"] = {"timing": {"unit": "ms", "runtime": 0.2, "ref_runtime": 3.0, "speedup": 15.0}}
    write_trace(data, "run", doc)
    build_incremental(data, site, jobs=1)
    assert "15.00x" in (site / "runs.csv").read_text() or ",15.0," in (site / "runs.csv").read_text()
    store_work(data, work(STREAM.ops, 4 * 10**9, 4 * 10**9, sha256_text("# a reference\n")))  # `reporter work`, later
    again = build_incremental(data, site, jobs=1)
    assert not again.up_to_date and again.rendered == 1
    page = next((site / "runs").glob("run*.html")).read_text()
    assert "faster than the hardware allows" in html.unescape(page)
