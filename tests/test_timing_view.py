"""What the run page says about re-measured times: GPU labels, no claims across GPUs, host-bound marks."""

from __future__ import annotations

from typing import Any

from reporter.core.records import RecordedMetrics, TimingMetrics, ValidationResult
from reporter.core.schema import BasisStats, TimingFigures
from reporter.render import numbers
from reporter.render.revalidation import comparisons
from reporter.render.timing_view import timing_view


def stats(ms: float) -> BasisStats:
    return BasisStats(median_ms=ms, min_ms=ms, max_ms=ms, n=30, iqr_ms=0.0, ci_low_ms=ms, ci_high_ms=ms)


def result(verdict: str = "correct", gpu: str = "NVIDIA H200", **timing: Any) -> ValidationResult:
    k = timing.get("kernel", TimingFigures(device=stats(0.45), graph=None, wall=stats(0.5), graph_note="capture failed: sync"))
    r = timing.get("reference", TimingFigures(device=stats(0.04), graph=stats(0.06), wall=stats(0.3)))
    return ValidationResult(kernel_sha256="k", reference_sha256="r", settings={}, environment={"gpu": gpu},
                            verdict=verdict, kernel_timing=k, reference_timing=r)


RECORDED = RecordedMetrics(timing=TimingMetrics(unit="ms", runtime=0.8, ref_runtime=0.3, speedup=0.375))


def rows(res: ValidationResult, gpu: str | None) -> dict[str, Any]:
    return {c.label: c for c in comparisons(RECORDED, "correct", res, gpu)}


def test_times_from_another_or_unknown_gpu_get_no_agree_or_disagree() -> None:
    for gpu in ("NVIDIA H100 80GB HBM3", None):
        got = rows(result(), gpu)
        assert got["runtime (wall time)"].agrees is None  # 0.8 vs 0.5 ms: +60%, a disagreement on the same GPU
        assert got["ref runtime (wall time)"].agrees is None  # equal, yet no "agrees" either
        assert got["speedup (wall time)"].agrees is None
    same = rows(result(), "NVIDIA H200")
    assert same["runtime (wall time)"].agrees is False and same["ref runtime (wall time)"].agrees is True
    assert same["runtime (wall time)"].reproduced == numbers.time_html(0.5)  # compared on wall time, not device time


def test_incorrect_kernel_shows_no_speedup() -> None:
    got = rows(result(verdict="incorrect"), "NVIDIA H200")["speedup (wall time)"]
    assert got.reproduced == "kernel incorrect" and got.agrees is None
    view = timing_view(result(verdict="incorrect"), "NVIDIA H200")
    assert all(sp == "kernel incorrect" for _, sp, _ in view.speedups)


def test_gpu_label_and_tolerance_on_the_page() -> None:
    assert timing_view(result(), "NVIDIA H100 80GB HBM3").gpu == "recorded on H100 · re-measured on H200"
    assert timing_view(result(), None).gpu == "recorded GPU unknown · re-measured on H200"
    assert "±25%" in timing_view(result(), "NVIDIA H200").tolerance


def test_host_bound_mark_and_not_capturable_row() -> None:
    view = timing_view(result(), None)
    assert len(view.host_bound) == 1 and view.host_bound[0].startswith("The reference is host-bound")  # 0.3 > 2 × 0.04
    graph = next(r for r in view.rows if r.side == "kernel" and r.basis == "CUDA-graph time")
    assert graph.median == "not capturable" and graph.note == "capture failed: sync"
    device = next(r for r in view.rows if r.side == "kernel" and r.basis == "device time")
    assert device.css == "headline"


def test_old_format_result_is_labelled() -> None:
    old = ValidationResult.model_validate({
        "format": 3, "kernel_sha256": "k", "reference_sha256": "r", "settings": {}, "verdict": "correct",
        "kernel_timing": {"median_ms": 0.5, "mean_ms": 0.5, "std_ms": 0.0, "min_ms": 0.5, "max_ms": 0.5, "trials": 9}})
    view = timing_view(old, None)
    assert "format 3" in view.old_format
    assert [r.median for r in view.rows if r.basis == "device time"] == ["—"]
