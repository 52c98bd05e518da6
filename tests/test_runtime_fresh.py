"""Issue 48, items 1, 3 and 4 on CPU: timed calls see inputs at fresh addresses, the re-check writes new values at an
address the kernel saw, an all-zero output fails beside a non-zero reference, and persisting L2 is reset before
every timed call (a fake driver stands in for the GPU's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from conftest import KERNELS  # noqa: E402
from reporter.core.records import ValidationSettings  # noqa: E402
from reporter.core.schema import DynamicCheck, DynamicResult  # noqa: E402
from reporter.core.suspects import incomplete_checks  # noqa: E402
from reporter.validate import l2, timing, worker  # noqa: E402
from reporter.validate.allclose import judge  # noqa: E402
from reporter.validate.fresh import STEP_BYTES, FreshInputs  # noqa: E402

CHEATS = Path(__file__).resolve().parent / "fixtures" / "cheats"
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=2, perf_trials=2, warmup=1, time_cap_s=0.05)


def test_every_timed_call_gets_its_inputs_at_a_new_address_with_the_set_s_values() -> None:
    sets = [[torch.randn(3, 5), torch.arange(7), 2.5], [torch.randn(3, 5), torch.arange(7) * 2, 2.5]]
    fresh = FreshInputs(sets, slots=64)
    seen: set[tuple[int, int]] = set()
    for call in range(64):
        got = fresh.next(call)
        assert torch.equal(got[0], sets[call % 2][0]) and torch.equal(got[1], sets[call % 2][1]) and got[2] == 2.5
        assert got[0].data_ptr() != sets[call % 2][0].data_ptr()
        seen |= {(0, got[0].data_ptr()), (1, got[1].data_ptr())}
        assert got[0].data_ptr() % 16 == 0
    assert len(seen) == 128  # 64 calls, two tensors each, never an address twice
    assert fresh.fresh_share == (2, 2)
    assert fresh.pool_bytes == 3 * 5 * 4 + 64 * STEP_BYTES + 7 * 8 + 64 * STEP_BYTES


def test_a_kernel_that_writes_its_input_cannot_change_what_the_next_call_reads() -> None:
    source = torch.ones(4)
    fresh = FreshInputs([[source]], slots=2)
    fresh.next(0)[0].mul_(5)
    assert torch.equal(fresh.next(1)[0], torch.ones(4)) and torch.equal(fresh.next(2)[0], torch.ones(4))


def test_a_tensor_the_pool_cannot_hold_is_passed_as_given() -> None:
    strided = torch.randn(6, 4).t()
    fresh = FreshInputs([[strided, torch.randn(2)]], slots=4)
    got = fresh.next(0)
    assert got[0] is strided and got[1].data_ptr() != fresh.sets[0][1].data_ptr()
    assert fresh.fresh_share == (1, 2)


def test_a_cache_keyed_on_the_address_never_hits_inside_the_timed_loop() -> None:
    hits: list[int] = []
    cache: dict[int, Any] = {}

    def cached(x: Any) -> Any:
        key = x.data_ptr()
        if key in cache:
            hits.append(key)
            return cache[key]
        cache[key] = x * 2
        return cache[key]

    sets = [[torch.randn(8)], [torch.randn(8)]]
    for s in sets:  # warmed on the sets themselves, as `timing.warm_up` does
        cached(*s)
    timer = timing._Timer([cached, lambda x: x * 2], sets, "cpu", 0)
    for _ in range(3):
        timer.wall()
    assert len(cache) == 2 + 3 * timing.BATCH and hits == []


def check(tmp_path: Path, reference: Path, kernel: str) -> dict[str, Any]:
    # warmup = 2: the warm-up calls the kernel with each of the two timed sets (`timing.warm_up`), whatever the
    # machine's speed, so the cheat below has seen the address the re-check writes into
    job = {"reference": reference.read_text(), "kernel": (CHEATS / "kernels" / f"{kernel}.py").read_text(),
           "device": "cpu", "precision": "fp32", "settings": SETTINGS.model_copy(update={"warmup": 2}).model_dump(mode="json")}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert worker.main(["check", str(tmp_path)]) == 0
    out: dict[str, Any] = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    return out


def test_a_cache_that_waits_out_the_trials_fails_the_re_check_at_an_address_it_saw(tmp_path: Path) -> None:
    """The cheat answers from memory only after its first 12 calls (every trial): the re-check writes another seed's values
    into a timed set's own tensors, which the warm-up showed it, and its stale answer fails."""
    out = check(tmp_path, KERNELS / "reference.py", "memo_after_warmup")
    assert out["verdict"] == "incorrect"
    assert out["reason"].startswith("correct before the timed loop but not after it: values differ"), out["reason"]
    assert all(t["passed"] for t in out["trials"])
    row = out["recheck"]  # the evidence the run page shows for it: the re-check's own row, witness included
    assert (row["passed"], row["index"], row["seed"], row["jittered"], row["input_shapes"]) == (False, -1, -1, False, ["8x16x64"])
    assert row["max_abs_error"] > 1e-4 and row["max_rel_error"] > 1e-4 and row["mismatch"]["bad"] > 0 and row["inputs"] is None


def test_the_honest_twin_passes_the_re_check(tmp_path: Path) -> None:
    out = check(tmp_path, KERNELS / "reference.py", "honest_linear_relu")
    assert out["verdict"] == "correct" and out["recheck"]["passed"] is True
    l2_row = next(d for d in out["dynamic_checks"] if d["check"] == "l2_persistence")
    assert l2_row["tripped"] is None and l2_row["detail"].startswith("not applicable")


@pytest.mark.parametrize("reference, output, passes", [
    ([6e-5, -1e-6], [0.0, 0.0], False),  # the reference reaches 0.6 x atol: zeros are wrong, though allclose passes them
    ([4e-5, -1e-6], [0.0, 0.0], True),  # below half of atol: rounding noise around a true zero
    ([0.0, 0.0], [0.0, 0.0], True),
    ([6e-5, 1e-6], [1e-9, 0.0], True),  # not all zeros: allclose decides
])
def test_an_all_zero_output_fails_where_the_reference_is_not_zero_at_the_tolerance(reference: list[float], output: list[float],
                                                                                   passes: bool) -> None:
    ok, _, _, problem, _ = judge(torch.tensor(reference), torch.tensor(output), 1e-4, 1e-4)
    assert ok is passes, problem
    if not passes:
        assert problem is not None and problem.startswith("the output is all zeros")


class FakeDriver:
    """A context whose persisting-L2 limit starts at `own` (a driver's default set-aside, 9,830,400 bytes on an H100)
    and which a kernel raises to `raised` before the calls listed (counted from the guard's first look)."""

    def __init__(self, raised_on: set[int], raised: int = 37_748_736, own: int = 9_830_400) -> None:
        self.raised_on, self.raised, self.own = raised_on, raised, own
        self.looks, self.line_resets, self.limits_set = 0, 0, []

    def persisting_limit(self) -> int:
        self.looks += 1
        return self.raised if self.looks - 1 in self.raised_on else self.own

    def reset_lines(self) -> bool:
        self.line_resets += 1
        return self.line_resets not in self.refused

    refused: frozenset[int] = frozenset()

    def set_limit(self, limit: int) -> None:
        self.limits_set.append(limit)


def test_persisting_l2_is_reset_before_each_timed_call_and_a_raised_limit_is_found() -> None:
    driver = FakeDriver({2, 5})
    guard = l2.L2Guard(driver)  # its first look (the baseline) is look 0: the kernel raises the limit before calls 2 and 5
    for _ in range(6):
        guard.before_call()
    assert driver.line_resets == 6  # every call: a window alone can use the context's own set-aside
    assert driver.limits_set == [9_830_400, 9_830_400]  # put back to the context's own, only where it was raised
    found = guard.result()
    assert found.check == DynamicCheck.L2_PERSISTENCE and found.tripped is True
    assert found.detail == ("the persisting-L2 limit was raised to 37,748,736 bytes (the context's own: 9,830,400) before "
                            "2 of 6 timed calls: lines kept that way survive the timer's L2 flush, so each call would find "
                            "its data in cache. Reset before every timed call, so the times here are not helped by it")


def test_a_reset_the_driver_refuses_makes_the_check_not_run() -> None:
    driver = FakeDriver(set())
    driver.refused = frozenset({3})
    guard = l2.L2Guard(driver)
    for _ in range(4):
        guard.before_call()
    found = guard.result()
    assert found.tripped is None and found.detail.startswith("not run: the driver refused") and "1 of 4" in found.detail


def test_a_context_s_own_set_aside_is_not_a_finding() -> None:
    """Measured on an H100: every context starts with 9,830,400 bytes of persisting L2; a kernel that leaves it so
    raised nothing (the first GPU run of this check called 19 of 19 honest kernels suspect)."""
    driver = FakeDriver(set())
    guard = l2.L2Guard(driver)
    for _ in range(4):
        guard.before_call()
    assert driver.limits_set == [] and driver.line_resets == 4
    assert guard.result() == DynamicResult(DynamicCheck.L2_PERSISTENCE, False, "the persisting-L2 limit stayed at the "
                                           "context's own 9,830,400 bytes before all 4 timed calls (persisting lines made "
                                           "ordinary before each)")


def test_the_timer_asks_the_guard_before_every_timed_call() -> None:
    driver = FakeDriver(set())
    l2.start(driver)
    try:
        timer = timing._Timer([lambda x: x + 1, lambda x: x - 1], [[torch.randn(4)]], "cpu", 0)
        timer.wall()
    finally:
        l2.start(None)
    assert driver.line_resets == 2 * timing.BATCH


def test_no_device_to_persist_on_is_not_a_missing_check() -> None:
    found = l2.L2Guard(None).result()
    assert found.tripped is None
    assert incomplete_checks("correct", [found, DynamicResult(DynamicCheck.HARNESS_PATCHED, False, "")], None) == ("check strength",)


def test_a_kernel_that_answers_differently_while_timed_fails_on_its_timed_output(tmp_path: Path) -> None:
    out = check(tmp_path, KERNELS / "reference.py", "sniffs_timing")
    assert out["verdict"] == "incorrect"
    assert out["reason"].startswith("correct outside the timed loop but not in it: the kernel's output of a timed "
                                    "call (wall basis, input set "), out["reason"]
    assert "failed: values differ" in out["reason"]
    assert all(t["passed"] for t in out["trials"])
    row = out["recheck"]
    assert (row["passed"], row["index"], row["seed"], row["jittered"], row["input_shapes"]) == (False, -1, -1, False, ["8x16x64"])
    assert row["inputs"].startswith("the kernel's output of a timed call") and row["mismatch"]["bad"] > 0
    assert row["max_abs_error"] > 1e-4 and row["max_rel_error"] > 1e-4


def test_timed_outputs_are_judged_on_the_inputs_of_their_own_round() -> None:
    from reporter.validate.aftertiming import timed_outputs
    sets = [[torch.tensor([1.0, -2.0])], [torch.tensor([-3.0, 4.0])]]
    ref = torch.relu
    assert timed_outputs(ref, sets, {("wall", 1): (5, torch.tensor([0.0, 4.0]))}, 1e-4, 1e-4) is None  # round 5 timed set 1
    right_then_wrong = {("device", 1): (3, torch.tensor([0.0, 4.0])), ("wall", 0): (4, torch.tensor([0.0, 4.0]))}
    bad = timed_outputs(ref, sets, right_then_wrong, 1e-4, 1e-4)
    assert bad is not None and bad.inputs == "the kernel's output of a timed call (wall basis, input set 1)"
    assert (bad.passed, bad.index, bad.seed, bad.jittered, bad.input_shapes) == (False, -1, -1, False, ("2",))
    # set 1 is [1, -2]: relu [1, 0] against [0, 4], both values off, by 1 and 4
    assert bad.max_abs_error == pytest.approx(4.0) and bad.mismatch is not None and bad.mismatch.bad == 2
    assert timed_outputs(ref, sets, {}, 1e-4, 1e-4) is None
    # two wrong: reported in the order of the bases' names (device before wall), whatever their rounds
    both = {("wall", 1): (1, torch.tensor([9.0, 9.0])), ("device", 0): (4, torch.tensor([9.0, 9.0]))}
    assert timed_outputs(ref, sets, both, 1e-4, 1e-4).inputs == "the kernel's output of a timed call (device basis, input set 1)"


def test_a_one_value_input_moves_too_and_no_input_set_is_no_pool() -> None:
    fresh = FreshInputs([[torch.tensor([3.0])]], slots=8)
    assert fresh.next(0)[0].data_ptr() != fresh.sets[0][0].data_ptr() and fresh.fresh_share == (1, 1)
    assert FreshInputs([]).pools == {} and FreshInputs([]).fresh_share == (0, 0)  # the graph basis's timer keeps none


def test_a_timed_output_that_failed_is_named_as_such_on_the_run_page(small_data: Path, tmp_path: Path) -> None:
    import html

    from click.testing import CliRunner

    from conftest import validation_entry
    from reporter.cli import main
    entry = validation_entry(small_data, "seed-000-l2-p10")
    doc = json.loads(entry.read_text())
    doc["verdict"], doc["reason"] = "incorrect", "correct outside the timed loop but not in it: values differ"
    doc["recheck"] = {"index": -1, "seed": -1, "jittered": False, "passed": False, "input_shapes": ["8x16"],
                      "problem": "values differ beyond atol=0.0001, rtol=0.0001",
                      "inputs": "the kernel's output of a timed call (device basis, input set 2)"}
    entry.write_text(json.dumps(doc))
    site = tmp_path / "site"
    assert CliRunner().invoke(main, ["build", str(small_data), str(site), "--no-validate"]).exit_code == 0
    page = html.unescape((site / "runs" / "seed-000-l2-p10.html").read_text())
    assert "The kernel's output of a timed call (device basis, input set 2): input shapes 8x16" in page
    assert "The re-check after the timed loop" not in page
