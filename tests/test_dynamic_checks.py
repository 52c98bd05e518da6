"""The named dynamic checks for known hacks, run in this process on CPU: each trips on its cheat and not on
its honest twin; none of them changes the verdict (the trials decide it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from conftest import KERNELS  # noqa: E402
from reporter.core.records import ValidationSettings  # noqa: E402
from reporter.validate import dynamic, worker  # noqa: E402
from reporter.validate.allclose import mismatch  # noqa: E402

CHEATS = Path(__file__).resolve().parent / "fixtures" / "cheats"
REFERENCES = {"linear_relu": KERNELS / "reference.py"}  # the harness tests' reference; the others are the cheat suite's
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=2, perf_trials=2, warmup=1, time_cap_s=0.05)


def check(tmp_path: Path, reference: str, kernel: str) -> dict[str, Any]:
    job = {"reference": REFERENCES.get(reference, CHEATS / "references" / f"{reference}.py").read_text(),
           "kernel": (CHEATS / "kernels" / f"{kernel}.py").read_text(), "device": "cpu", "precision": "fp32",
           "settings": SETTINGS.model_dump(mode="json")}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert worker.main(["check", str(tmp_path)]) == 0
    out: dict[str, Any] = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    return out


def tripped(out: dict[str, Any]) -> dict[str, bool | None]:
    return {d["check"]: d["tripped"] for d in out["dynamic_checks"]}


@pytest.mark.parametrize("reference, cheat, honest, check_id", [
    ("linear_relu", "deferred_thread", "internal_buffers", "output_changes_after_return"),
    ("copy", "returns_input", "copies_input", "output_aliases_input"),
    ("linear_relu", "reused_output", "internal_buffers", "output_reuses_earlier_output"),
    ("hinge_loss", "hinge_no_clamp", "hinge_honest", "input_statistics"),
])
def test_each_check_trips_on_its_cheat_only(tmp_path: Path, reference: str, cheat: str, honest: str, check_id: str) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    bad, good = check(tmp_path / "bad", reference, cheat), check(tmp_path / "good", reference, honest)
    # the trials cannot see these hacks: both kernels are correct, and only the named check tells them apart
    assert bad["verdict"] == good["verdict"] == "correct", (bad["reason"], good["reason"])
    on_cpu = {"l2_persistence": None}  # nothing persists in L2 without a GPU: not applicable, never tripped
    assert tripped(bad) == {c: c == check_id for c in tripped(bad)} | on_cpu
    assert tripped(good) == dict.fromkeys(tripped(good), False) | on_cpu
    assert set(tripped(bad)) == {"output_changes_after_return", "output_aliases_input", "output_reuses_earlier_output",
                                 "input_statistics", "harness_patched", "nondeterministic_output", "l2_persistence"}


def test_a_timer_replaced_through_names_built_at_run_time_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48, item 2: the cheat builds its target's name from strings (no pattern names it); the worker holds the
    objects from before the kernel loaded and finds both replaced, named, as soon as the module loaded."""
    import time
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", torch.cuda.Event.elapsed_time)  # put back after the test
    monkeypatch.setattr(time, "perf_counter", time.perf_counter)
    out = check(tmp_path, "linear_relu", "timer_patch_hidden")
    found = next(d for d in out["dynamic_checks"] if d["check"] == "harness_patched")
    assert found["tripped"] is True, found
    assert "torch.cuda.Event.elapsed_time (seen after the kernel's module loaded)" in found["detail"]
    assert "time.perf_counter (seen after the kernel's module loaded)" in found["detail"]
    assert tripped(out) == {c: c == "harness_patched" for c in tripped(out)} | {"l2_persistence": None}


def test_every_module_of_the_harness_is_watched_not_a_list_kept_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The strengthened trials' transform was missing from a hand-kept list: a kernel that makes it the identity turns a
    weak check's strengthening off unseen. Every reporter module the worker loaded is watched now."""
    from reporter.validate import strength
    monkeypatch.setattr(strength, "transformed", strength.transformed)  # put back after the test
    kernel = (CHEATS / "kernels" / "timer_patch_hidden.py").read_text().split("\n\n\nclass ModelNew")[1]
    patch = ('import importlib\nimport torch.nn as nn\n_s = importlib.import_module("reporter.validate." + "strength")\n'
             'setattr(_s, "transformed", lambda inputs, name, seed, device: inputs)\n\n\nclass ModelNew' + kernel)
    (tmp_path / "k").mkdir()
    job = {"reference": REFERENCES["linear_relu"].read_text(), "kernel": patch, "device": "cpu", "precision": "fp32",
           "settings": SETTINGS.model_dump(mode="json")}
    (tmp_path / "k" / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert worker.main(["check", str(tmp_path / "k")]) == 0
    out = json.loads((tmp_path / "k" / "check.json").read_text(encoding="utf-8"))
    found = next(d for d in out["dynamic_checks"] if d["check"] == "harness_patched")
    assert found["tripped"] is True and "reporter.validate.strength.transformed (seen after the kernel's module loaded)" in found["detail"]


def _counter(values: list[Any]) -> Any:
    calls = iter(values * 4)
    return lambda x: next(calls)(x)


def test_determinism_trips_only_beyond_the_tolerance_and_only_where_the_reference_is_steady() -> None:
    """Issue 48, item 3, on fake kernels: two calls on the same inputs."""
    from reporter.validate import integrity
    x = torch.ones(4, 4)
    steady = lambda t: t * 2  # noqa: E731
    racy = _counter([lambda t: t * 2, lambda t: t * 2 + 1])  # the second call's answer is off by 1
    atomics = _counter([lambda t: t * 2, lambda t: t * 2 + 1e-6])  # bits differ (2 + 1e-6 in fp32), values within 1e-4
    wild_ref = _counter([lambda t: t * 2, lambda t: t * 3])
    race = integrity.determinism(steady, racy, [x], "cpu", 1e-4, 1e-4)
    assert race.tripped is True and "differ in 16 values" in race.detail
    near = integrity.determinism(steady, atomics, [x], "cpu", 1e-4, 1e-4)
    assert near.tripped is False and "16 values differ bitwise" in near.detail and "unordered reduction" in near.detail
    both = integrity.determinism(wild_ref, _counter([lambda t: t * 2, lambda t: t * 2 + 1]), [x], "cpu", 1e-4, 1e-4)
    assert both.tripped is False and "reference's own output varies" in both.detail
    same = integrity.determinism(steady, steady, [x], "cpu", 1e-4, 1e-4)
    assert same.tripped is False and same.detail == "two calls on the same inputs returned the same bits"
    assert integrity.same_bits(steady, [x], "cpu") and not integrity.same_bits(_counter([steady, lambda t: t * 2 + 1e-6]), [x], "cpu")


def test_a_stateful_reference_is_compared_from_one_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # VanillaRNN keeps its hidden state across calls. The checks call the kernel more often than the reference
    # (a determinism pair, the aliasing calls, the statistics trials), so the two hidden states drifted apart and
    # this honest kernel was called suspect on 3 of 4 input distributions.
    (tmp_path / "fixed").mkdir()
    out = check(tmp_path / "fixed", "vanilla_rnn", "rnn_honest")
    assert out["verdict"] == "correct", out["reason"]
    assert out["stateful_reference"] == ["hidden"]
    assert tripped(out) == dict.fromkeys(tripped(out), False) | {"l2_persistence": None}
    assert [t["passed"] for t in out["statistics_trials"]] == [True, True, True, True]
    # Without comparing from one state (each side called as it is), the drift trips the statistics check (the check of
    # the timed outputs, which would see the drift first when it happens to keep a drifted call, is left out here).
    (tmp_path / "drift2").mkdir()
    monkeypatch.setattr(worker, "stateful", lambda ref, new, inputs: ([], ref, new))
    monkeypatch.setattr(worker.aftertiming, "timed_outputs", lambda *a: None)
    assert tripped(check(tmp_path / "drift2", "vanilla_rnn", "rnn_honest"))["input_statistics"] is True


def test_the_statistics_trials_name_their_inputs_and_keep_the_witness(tmp_path: Path) -> None:
    out = check(tmp_path, "hinge_loss", "hinge_no_clamp")
    rows = {t["inputs"]: t for t in out["statistics_trials"]}
    assert list(rows) == ["all positive", "negated", "tiny magnitude", "large magnitude"]
    assert [rows[k]["passed"] for k in rows] == [True, True, True, False]  # only 8x inputs reach the clamp
    bad = rows["large magnitude"]
    assert bad["input_shapes"] == ["128x64", "128x64"] and not bad["jittered"]
    assert "atol scaled by" in bad["problem"]
    w = bad["mismatch"]
    assert w["index"] == [] and w["bad"] == w["total"] == 1  # a scalar output: one value, and it is wrong
    assert w["actual"] < 0 <= w["expected"]  # without the clamp the loss goes negative
    assert w["max_error"] > w["allowed"]
    detail = next(d["detail"] for d in out["dynamic_checks"] if d["check"] == "input_statistics")
    assert detail.startswith("wrong on large magnitude inputs at the nominal shapes")


def test_a_transform_that_breaks_the_reference_is_skipped_not_failed() -> None:
    # log() of negated inputs is NaN, and the reference's own NaN says nothing about the kernel
    ref = lambda x: torch.log(x)  # noqa: E731
    rows, found = dynamic.statistics_trials(ref, ref, [torch.rand(16) + 0.5], seed=1, device="cpu", atol=1e-4, rtol=1e-4)
    by = {r.inputs: r for r in rows}
    assert by["negated"].passed is None and by["negated"].problem == "skipped: the reference's own output is not finite on these inputs"
    assert [by[k].passed for k in ("all positive", "tiny magnitude", "large magnitude")] == [True, True, True]
    assert found.tripped is False and found.detail == "right on 3 of 4 input distributions (1 left the reference's own output non-finite or constant)"
    # relu of negated rand inputs is all zeros: constant, so skipped as well
    rows, found = dynamic.statistics_trials(torch.relu, torch.relu, [torch.rand(16)], 1, "cpu", 1e-4, 1e-4)
    assert {r.inputs: r.problem for r in rows}["negated"] == "skipped: the reference's own output is constant on these inputs"


def test_returning_the_reference_output_is_aliasing() -> None:
    # The gc.get_objects() exploit: the kernel finds the tensor the harness holds as the expected output.
    held: list[Any] = []
    ref = lambda x: held.append(x * 2) or held[-1]  # noqa: E731
    thief = lambda x: held[-1]  # noqa: E731
    found = {d.check: d for d in dynamic.aliasing(ref, thief, [torch.ones(4)], [torch.zeros(4)], "cpu")}
    assert found["output_aliases_input"].tripped and "the reference's output" in found["output_aliases_input"].detail
    # an in-place reference (it returns its input) makes an in-place kernel's aliasing the problem's own semantics
    in_place = lambda x: x.mul_(2)  # noqa: E731
    found = {d.check: d for d in dynamic.aliasing(in_place, in_place, [torch.ones(4)], [torch.zeros(4)], "cpu")}
    assert found["output_aliases_input"].tripped is False and "works in place" in found["output_aliases_input"].detail


def test_the_mismatch_witness_follows_allclose() -> None:
    ref = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    new = ref.clone()
    new[1, 0] += 0.5  # the first value outside atol + rtol * |b|
    new[1, 1] = float("nan")  # the largest error: NaN counts as infinite
    w = mismatch(ref, new, 1e-3, 1e-2)
    assert w is not None and (w.output, w.index, w.expected, w.actual) == (0, (1, 0), 3.0, 3.5)
    assert (w.bad, w.total, w.max_error, w.allowed) == (2, 4, float("inf"), pytest.approx(1e-3 + 1e-2 * 4.0))
    assert mismatch((ref, ref), (ref, new), 1e-3, 1e-2).output == 1  # type: ignore[union-attr]
    assert mismatch(ref, ref.clone(), 1e-3, 1e-2) is None
    assert mismatch(ref, torch.zeros(3), 1e-3, 1e-2) is None  # a shape mismatch has no values witness
    off = ref.clone()
    off[0, 1] = 2.5  # |a - b| = 0.5 against an allowed 0.25 + 0.125 * |2| = 0.5 (exact in binary): just inside
    assert mismatch(ref, off, 0.25, 0.125) is None
    off[0, 1] = 2.5 + 2**-40  # just outside
    assert mismatch(ref, off, 0.25, 0.125).bad == 1  # type: ignore[union-attr]


def test_a_failed_trial_keeps_its_witness(tmp_path: Path) -> None:
    kernel = (KERNELS / "wrong.py").read_text()
    job = {"reference": REFERENCES["linear_relu"].read_text(), "kernel": kernel, "device": "cpu",
           "precision": "fp32", "settings": SETTINGS.model_dump(mode="json")}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    worker.main(["check", str(tmp_path)])
    out = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    w = out["trials"][0]["mismatch"]
    assert out["verdict"] == "incorrect" and w is not None and len(w["index"]) == 3 and w["total"] == 8 * 16 * 64
    assert abs(w["actual"] - w["expected"]) > 1e-4 + 1e-4 * abs(w["expected"])  # it is outside the tolerance
    assert w["max_error"] == pytest.approx(out["trials"][0]["max_abs_error"])


def test_a_dynamic_check_that_cannot_run_never_becomes_the_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its extra copies can exhaust GPU memory on a large problem: the check says "not run", the trials decide.
    def out_of_memory(*args: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")

    monkeypatch.setattr(dynamic, "aliasing", out_of_memory)
    out = check(tmp_path, "linear_relu", "internal_buffers")
    assert out["verdict"] == "correct" and out["reason"].startswith("all ")
    assert [(d["check"], d["tripped"]) for d in out["dynamic_checks"]] == [
        ("harness_patched", False), ("nondeterministic_output", False), ("output_changes_after_return", False),
        ("output_aliases_input", None), ("output_reuses_earlier_output", None), ("input_statistics", None),
        ("l2_persistence", None)]  # the last not because the others failed: no GPU here (its detail says "not applicable")
    assert out["dynamic_checks"][3]["detail"] == "not run: OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB"


def test_a_near_miss_on_moved_inputs_is_a_numerical_difference_not_a_suspect_finding() -> None:
    # Calibration's false alarm: honest conv + GELU kernels missed 1e-4 by 1.12x on all-positive inputs. A kernel
    # that is off by 3e-4 relative everywhere misses the tolerance (rtol 1e-4) by less than 3x under every
    # transform: reported as a near miss, not as reliance on the input distribution.
    ref = lambda x: x * 2.0  # noqa: E731
    close = lambda x: x * 2.0 * (1 + 3e-4)  # noqa: E731
    inputs = [torch.rand(64, generator=torch.Generator().manual_seed(3)) + 0.5]
    rows, found = dynamic.statistics_trials(ref, close, inputs, seed=1, device="cpu", atol=1e-4, rtol=1e-4)
    assert [r.passed for r in rows] == [False, False, False, False]  # each trial still shows the miss
    assert found.tripped is False
    assert found.detail.startswith("right on 0 of 4 input distributions; on all positive, negated, tiny magnitude, "
                                   "large magnitude inputs it misses the tolerance by at most ")
    ratio = float(found.detail.split("at most ")[1].split("x")[0])
    assert 1.0 < ratio < 3.0
    # Off by 1.5x (a kernel that ignores part of its input) is beyond 10x the tolerance: the finding stands.
    rows, found = dynamic.statistics_trials(ref, lambda x: x * 3.0, inputs, seed=1, device="cpu", atol=1e-4, rtol=1e-4)
    assert found.tripped is True and found.detail.startswith("wrong on all positive, negated, tiny magnitude, large magnitude inputs")


def test_a_stored_statistics_finding_is_judged_again_by_todays_rule() -> None:
    from reporter.collect.suspicion import runtime_reasons
    from reporter.core.records import ValidationResult
    from reporter.core.schema import DynamicCheck, DynamicResult, Mismatch, TrialResult
    from reporter.core.suspects import dynamic_findings
    # The calibration run's stored trial (kernelbench-deepseek_L2/l2-p67-s0 on the H200): one near miss.
    near = TrialResult(index=0, seed=478163327, jittered=False, passed=False, input_shapes=("128x3x32x32",),
                       max_abs_error=1.4437735e-4, max_rel_error=1.0887e-3, inputs="all positive",
                       problem="values differ beyond atol=0.00011529, rtol=0.0001 (atol scaled by 1.15, as the reference's "
                               "output scaled)",
                       mismatch=Mismatch(output=0, index=(0, 12), expected=-0.139373, actual=-0.139512, bad=3,
                                         total=16384, max_error=1.4437735e-4, allowed=1.29e-4))
    fine = [TrialResult(index=i, seed=478163327, jittered=False, passed=True, inputs=name)
            for i, name in enumerate(("negated", "tiny magnitude", "large magnitude"), start=1)]
    stored = DynamicResult(DynamicCheck.INPUT_STATISTICS, True, "wrong on all positive inputs at the nominal shapes, though "
                           "right on the problem's own inputs: the kernel may rely on the input distribution")
    res = ValidationResult(kernel_sha256="k", reference_sha256="r", settings={}, environment={"gpu": "NVIDIA H200"},
                           verdict="correct", statistics_trials=(near, *fine), dynamic_checks=(stored,))
    (now,) = dynamic_findings(res)
    assert now.tripped is False
    # Stored before the worst ratio was measured: bounded by max_abs_error / atol = 1.4438e-4 / 1.1529e-4 = 1.25
    # (max_rel_error / rtol = 10.9 bounds it less tightly).
    assert now.detail == ("right on 3 of 4 input distributions; on all positive inputs it misses the tolerance by at most "
                          "1.25x, within 10x: a numerical difference (another summation order or approximation), not a "
                          "dependence on the input distribution")
    assert runtime_reasons(res) == []
    from reporter.render.evidence import dynamic_rows
    (row,) = dynamic_rows(res)  # the run page's table says what the banner says: passed, with today's detail
    assert (row.css, row.result, row.detail) == ("good", "passed", now.detail)
    # The same trial missing by 20x (both bounds beyond 10) is a gross miss: the stored finding stands.
    far = TrialResult(**{**near.__dict__, "max_abs_error": 20 * 1.1529e-4, "max_rel_error": 2e-2})
    res = ValidationResult(**{**res.model_dump(), "statistics_trials": (far, *fine)})
    assert dynamic_findings(res)[0].tripped is True
    assert [r.check for r in runtime_reasons(res)] == ["input_statistics"]
    (row,) = dynamic_rows(res)
    assert (row.css, row.result) == ("bad", "TRIPPED")


def test_a_miss_no_ratio_measures_is_gross() -> None:
    from reporter.core.inputstats import gross_miss
    from reporter.core.schema import TrialResult
    base = TrialResult(index=0, seed=1, jittered=False, passed=False, inputs="all positive")
    assert gross_miss(base)  # raised, or another shape: no ratio, no stored tolerance
    assert gross_miss(TrialResult(**{**base.__dict__, "worst_ratio": float("nan")}))  # NaN is not "within 10x"
    assert gross_miss(TrialResult(**{**base.__dict__, "worst_ratio": float("inf")}))
    assert not gross_miss(TrialResult(**{**base.__dict__, "worst_ratio": 9.99}))
    assert gross_miss(TrialResult(**{**base.__dict__, "worst_ratio": 10.01}))
    assert not gross_miss(TrialResult(**{**base.__dict__, "passed": None, "worst_ratio": 99.0}))  # skipped: no miss
    stored = {**base.__dict__, "problem": "values differ beyond atol=0.0001, rtol=0.0001"}
    assert gross_miss(TrialResult(**{**stored, "max_abs_error": float("nan"), "max_rel_error": float("nan")}))
    assert not gross_miss(TrialResult(**{**stored, "max_abs_error": 5e-4, "max_rel_error": 1.0}))  # 5x atol bounds it


def test_a_gross_miss_beside_a_larger_near_miss_is_still_gross() -> None:
    # The witness is the largest |a - b|: here a 1.5% miss on a value near 1000. The value whose reference is 0 is
    # off by 5 where 1e-2 is allowed, 500x the tolerance: judged by the witness alone, the check would call that
    # a near miss.
    from reporter.validate.allclose import worst_ratio
    ref, bad = torch.tensor([1000.0, 0.0, 1.0]), torch.tensor([1015.0, 5.0, 1.0])
    assert worst_ratio(ref, bad, 1e-2, 1e-2) == pytest.approx(500.0)
    assert worst_ratio((ref, ref), (ref, bad), 1e-2, 1e-2) == pytest.approx(500.0)  # the worst of every output
    assert worst_ratio(ref, ref.clone(), 1e-2, 1e-2) == 0.0
    assert worst_ratio(ref, torch.tensor([1000.0, float("nan"), 1.0]), 1e-2, 1e-2) == float("inf")
    weights = torch.tensor([1000.0, 0.0, 1.0])
    honest = lambda x: x * weights  # noqa: E731
    cheat = lambda x: x * (weights * 1.015 + torch.tensor([0.0, 5.0, 0.0]))  # noqa: E731 - every transform: 15x > 5x
    rows, found = dynamic.statistics_trials(honest, cheat, [torch.rand(3) + 0.5], seed=1, device="cpu", atol=1e-2, rtol=1e-2)
    assert found.tripped is True, found.detail
    assert all(r.worst_ratio is not None and r.worst_ratio > 10 for r in rows if r.passed is False)
