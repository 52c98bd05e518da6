"""Recorded values that cannot be right get a visible flag, and are never changed."""

from __future__ import annotations

import pytest

from conftest import DATA
from reporter.collect import read_trace
from reporter.collect.ncu import Figure
from reporter.core.checks import (
    AGREEMENT_TOLERANCE,
    GpuRelation,
    check_measured,
    check_trace,
    compare_runtime,
    compare_speedup,
    gpu_label,
    gpu_model,
    gpu_name,
    gpu_relation,
    host_bound,
    same_gpu,
)


def flags_of(name: str) -> dict[str, str]:
    trace = read_trace(DATA / name / "trace.json")
    return {f.field: f.message for f in check_trace(trace)}


def test_seed_000_impossible_values_are_flagged() -> None:
    flags = flags_of("seed-000-l2-p10")
    assert "279.3% is outside 0–100" in flags["nsight.l2_hit_pct"]
    assert "2.793%" in flags["nsight.l2_hit_pct"]
    assert "cycles per issued instruction (34.461 here)" in flags["nsight.warp_stalls_pct.long_scoreboard"]
    assert "likely in ms" in flags["timing.runtime"]
    assert "tokens were not counted" in flags["run.tokens_total"]
    assert "latency-bound" in flags["nsight.bottleneck"]
    assert "nsight.occupancy_pct" not in flags  # 25.7% is a fine percentage


def test_seed_003_runtime_contradicts_total_cuda_time() -> None:
    flags = flags_of("seed-003-l2-p8")
    assert "21 µs" in flags["timing.runtime"] and "1,050×" in flags["timing.runtime"]
    assert "nsight.l2_hit_pct" not in flags  # 37.9% is plausible
    assert "timing.speedup" not in flags  # 0.05/0.02 = 2.5 vs 2.99 is explained by rounding


def test_checks_do_not_modify_values() -> None:
    trace = read_trace(DATA / "seed-000-l2-p10" / "trace.json")
    before = trace.model_dump()
    check_trace(trace)
    assert trace.model_dump() == before


def test_runtime_comparison() -> None:
    assert compare_runtime(0.46, "ms", 0.5) == (True, "")
    ok, why = compare_runtime(0.46, "us", 0.4989)
    assert ok is False and why.startswith("unit mix-up")
    ok, why = compare_runtime(0.8, "ms", 0.5)
    assert ok is False and "+60%" in why
    assert compare_runtime(None, "ms", 0.5) == (None, "")


# torch.cuda.get_device_name() strings of real devices, and what they reduce to.
DEVICE_NAMES = {
    "NVIDIA H100 80GB HBM3": ("H100", None),  # the SXM H100: torch's name does not say SXM
    "NVIDIA H100 PCIe": ("H100", "PCIe"),
    "NVIDIA H100 NVL": ("H100", "NVL"),
    "NVIDIA H200": ("H200", None),
    "NVIDIA L40S": ("L40S", None),
    "NVIDIA A100-SXM4-80GB": ("A100", "SXM"),
    "NVIDIA A100 80GB PCIe": ("A100", "PCIe"),
    "Tesla V100-SXM2-16GB": ("V100", "SXM"),
    "NVIDIA GeForce RTX 4090": ("RTX 4090", None),
    "H100": ("H100", None),
}


@pytest.mark.parametrize(("name", "expected"), DEVICE_NAMES.items())
def test_gpu_names_reduce_to_model_and_form_factor(name: str, expected: tuple[str, str | None]) -> None:
    parsed = gpu_name(name)
    assert parsed is not None and (parsed.model, parsed.form) == expected
    assert gpu_model(name) == expected[0]


@pytest.mark.parametrize(("a", "b", "relation"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100", GpuRelation.SAME),  # memory size and type say nothing of the model
    ("NVIDIA H100 80GB HBM3", "H100", GpuRelation.SAME),
    ("nvidia h100", "NVIDIA H100 80GB HBM3", GpuRelation.SAME),
    ("NVIDIA H100 PCIe", "NVIDIA H100", GpuRelation.SAME),  # one side names no form factor: same model
    ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", GpuRelation.DIFFERENT),  # both name one, and they differ
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", GpuRelation.DIFFERENT),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 40GB", GpuRelation.SAME),
    ("NVIDIA H200", "NVIDIA H200 NVL", GpuRelation.SAME),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H200", GpuRelation.DIFFERENT),
    ("Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-80GB", GpuRelation.DIFFERENT),
    ("NVIDIA L40S", "NVIDIA L40", GpuRelation.DIFFERENT),
    ("NVIDIA GeForce RTX 4090", "RTX 4090", GpuRelation.SAME),
    (None, "NVIDIA H200", GpuRelation.UNKNOWN),
    ("NVIDIA H200", " ", GpuRelation.UNKNOWN),
])
def test_gpu_relation_of_real_device_names(a: str | None, b: str | None, relation: GpuRelation) -> None:
    assert gpu_relation(a, b) is relation and gpu_relation(b, a) is relation
    assert same_gpu(a, b) == {GpuRelation.SAME: True, GpuRelation.DIFFERENT: False, GpuRelation.UNKNOWN: None}[relation]


def test_gpu_model_names() -> None:
    assert gpu_model(" ") is None and gpu_model(None) is None and gpu_model("NVIDIA 80GB") is None


def test_gpu_labels() -> None:
    assert gpu_label("NVIDIA L40S", "NVIDIA H200") == "recorded on L40S · re-measured on H200"
    assert gpu_label(None, "NVIDIA H200") == "recorded GPU unknown · re-measured on H200"
    assert gpu_label("NVIDIA H200", "NVIDIA H200") == "recorded and re-measured on H200"
    assert gpu_label("NVIDIA H100 PCIe", "NVIDIA H100 NVL") == "recorded on H100 PCIe · re-measured on H100 NVL"
    assert gpu_label("NVIDIA H100", "NVIDIA H100 80GB HBM3") == "recorded and re-measured on H100"


def test_no_time_claims_across_gpus_but_unit_mixups_still_flagged() -> None:
    for rel in (GpuRelation.DIFFERENT, GpuRelation.UNKNOWN):
        assert compare_runtime(0.8, "ms", 0.5, rel) == (None, "")  # +60% would disagree on the same GPU
        assert compare_runtime(0.5, "ms", 0.5, rel) == (None, "")  # ...and no "agrees" either
        ok, why = compare_runtime(0.46, "us", 0.4989, rel)
        assert ok is False and why.startswith("unit mix-up")
        assert compare_speedup(3.0, 1.0, rel, correct=True) == (None, "")
    edge = 1 + AGREEMENT_TOLERANCE
    assert compare_runtime(0.5 * edge * 0.999, "ms", 0.5, GpuRelation.SAME) == (True, "")
    assert compare_runtime(0.5 * edge * 1.01, "ms", 0.5, GpuRelation.SAME)[0] is False


def test_speedup_of_an_incorrect_kernel_is_no_result() -> None:
    assert compare_speedup(3.88, 3.88, GpuRelation.SAME, correct=True) == (True, "")
    ok, why = compare_speedup(3.88, 3.88, GpuRelation.SAME, correct=False)
    assert ok is None and "incorrect" in why
    ok, why = compare_speedup(2.0, 1.0, GpuRelation.SAME, correct=True)
    assert ok is False and "+100%" in why


def test_host_bound_rule() -> None:
    assert host_bound(0.30, 0.042)  # seed 000's reference: 7x its GPU time
    assert not host_bound(0.08, 0.042)
    assert not host_bound(0.30, None) and not host_bound(None, 0.04)


def test_measured_percent_above_100_is_flagged() -> None:
    flags = check_measured({"l2_hit": Figure(100.38, "%", ""), "l1_hit": Figure(73.2, "%", "")})
    assert set(flags) == {"l2_hit"} and "about 100%" in flags["l2_hit"].message


def test_nan_infinity_and_negative_values_are_flagged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import minimal_trace, write_trace
    doc = minimal_trace(wall_clock_s=-3.0)
    doc["turns"] = [{"index": 0, "llm_s": float("nan")}]
    doc["metrics"] = {"timing": {"unit": "ms", "runtime": float("nan"), "ref_runtime": 1.0, "speedup": float("inf")},
                      "memory": {"kernel_peak_mb": -5.0, "ref_peak_mb": 10.0, "ratio": -0.5},
                      "nsight": {"warp_stalls_pct": {"long_scoreboard": float("-inf")}}}
    import json
    text = json.dumps(doc)  # Python writes NaN / Infinity, which JSON itself does not have
    assert "NaN" in text and "Infinity" in text
    trace = read_trace(write_trace(tmp_path, "bad", text))
    flags = {f.field: f for f in check_trace(trace)}
    assert flags["timing.runtime"].message.startswith("NaN was recorded")
    assert flags["timing.speedup"].message.startswith("Infinity was recorded")
    assert flags["nsight.warp_stalls_pct.long_scoreboard"].message.startswith("-Infinity")
    assert "negative" in flags["memory.kernel_peak_mb"].message and "negative" in flags["memory.ratio"].message
    assert "negative" in flags["run.wall_clock_s"].message
    assert flags["turns[0].llm_s"].message.startswith("NaN")
    assert all(f.severity == "error" for f in flags.values())
    assert len(check_trace(trace)) == len(flags)  # one flag per field: no second, garbled flag on the same value
    assert trace.metrics.timing.speedup == float("inf")  # type: ignore[union-attr]  # shown as recorded, never fixed


def test_a_number_too_large_for_a_float_reads_as_infinity_and_is_flagged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import write_trace
    text = '{"schema_version": 2, "run": {"wall_clock_s": 1e400}, "turns": []}'
    flags = {f.field: f.message for f in check_trace(read_trace(write_trace(tmp_path, "big", text)))}
    assert flags["run.wall_clock_s"].startswith("Infinity was recorded")


def test_real_values_get_no_impossible_flag() -> None:
    from reporter.core.checks import impossible_values
    for name in ("seed-000-l2-p10", "seed-003-l2-p8", "seed-001-partial", "seed-002-partial"):
        assert impossible_values(read_trace(DATA / name / "trace.json")) == []


def test_across_gpus_the_rows_keep_the_banners_promise() -> None:
    from reporter.core.checks import tolerance_note
    for rel in (GpuRelation.DIFFERENT, GpuRelation.UNKNOWN):
        assert "no agree/disagree claim about times; only a gap of 100× or more" in tolerance_note(rel)
        for rec, unit, ms in ((0.46, "us", 0.4989), (0.05, "us", 0.137), (600.0, "s", 0.6)):
            ok, why = compare_runtime(rec, unit, ms, rel)
            assert ok is False and "%" not in why, why  # a mix-up is named, with no claim how far off it is
        assert compare_runtime(0.05, "us", 0.137, rel)[1] == "2,740× off: looks like a unit mix-up"
        assert compare_runtime(0.5, "ms", 40.0, rel) == (None, "")  # 80x: a GPU difference could explain it
    # on the same GPU model the rescaled gap is the claim
    assert compare_runtime(0.46, "us", 0.4989, GpuRelation.SAME)[1].endswith("0.46 ms is -8% off what we measured")


def test_a_pass_above_rtol_names_what_reads_like_a_failure() -> None:
    from reporter.core.checks import passes_beyond_tolerance
    assert passes_beyond_tolerance(3.81e-6, 4.71e-3, 1e-4, 1e-4) == "max rel error 4.71e-03 > rtol 0.0001"
    assert passes_beyond_tolerance(2e-4, 1e-3, 1e-4, 1e-3) == "max abs error 2.00e-04 > atol 0.0001"
    assert passes_beyond_tolerance(2e-4, 2e-3, 1e-4, 1e-3) == "max rel error 2.00e-03 > rtol 0.001 and max abs error 2.00e-04 > atol 0.0001"
    assert passes_beyond_tolerance(1e-4, 1e-4, 1e-4, 1e-4) is None  # at the bound is within it
    assert passes_beyond_tolerance(None, None, 1e-4, 1e-4) is None


def test_a_runtime_a_thousand_times_its_reference_is_a_hint_on_the_page_as_the_importer_says() -> None:
    """The importer warns 'runtime 908 ms is ~1,000x its reference's 1.25 ms ... its page flags what does not add up';
    the page must then say it (the dev corpus's claude L1 p34 showed no flag)."""
    from reporter.core.checks import check_trace
    from reporter.core.records import Trace

    def flags(runtime: float, ref: float) -> list[object]:
        t = Trace.model_validate({"schema_version": 2, "run": {"model": "m", "recorded_verdict": "correct"}, "turns": [],
                                  "metrics": {"timing": {"unit": "ms", "runtime": runtime, "ref_runtime": ref}}})
        return [f for f in check_trace(t) if f.field == "timing.runtime"]
    (hint,) = flags(908.0, 1.25)
    assert hint.severity == "warn" and hint.message == ("908 ms is ~1,000x the reference's 1.25 ms: if it was recorded in μs, "
                                                        "the speedup is 1.38x, not 0.00138x; shown as written")
    assert flags(12.0, 1.25) == [] and flags(1.25, 1.3) == []  # 10x slower is a slow kernel, not a unit
