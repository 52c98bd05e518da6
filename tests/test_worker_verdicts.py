"""The worker's verdict logic, run in this process on CPU: compare, the trials and the verdict they lead to.

test_harness.py runs the worker as a child process, the way validation does; these tests call it directly
so that a broken rule fails here in seconds (and so mutation testing can see the worker's code run).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from conftest import KERNELS  # noqa: E402
from reporter.core.records import ValidationSettings  # noqa: E402
from reporter.core.schema import CheckSettings  # noqa: E402
from reporter.validate import allclose, worker  # noqa: E402
from reporter.validate.worker import compare  # noqa: E402

REFERENCE = (KERNELS / "reference.py").read_text()
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=3, perf_trials=2, warmup=1)

# Right for its first calls, then wrong: passes every trial before the timed loop, not the re-check after it.
GOES_STALE = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.scale = scale
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = torch.relu(self.lin(x)) * self.scale
        return y if self.calls <= 4 else y + 1
"""

# Right for its first calls, then returns its first output whatever the input: still right on the first trial's
# inputs, so only a re-check on other inputs (the last ones timed) sees it.
FIRST_OUTPUT_FOREVER = GOES_STALE.replace("        self.calls = 0\n", "        self.calls = 0\n        self.first = None\n").replace(
    "        return y if self.calls <= 4 else y + 1\n",
    "        if self.first is None:\n            self.first = y.clone()\n        return y if self.calls <= 4 else self.first.clone()\n")

# Fails (raises) only at jittered shapes; the first jittered failure ends the jittered trials.
RAISES_WHEN_JITTERED = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.scale = scale

    def forward(self, x):
        if tuple(x.shape[:2]) != (8, 16):
            raise ValueError(f"only 8x16 is supported\\nsecond line")
        return torch.relu(self.lin(x)) * self.scale
"""

# The reference supports the nominal shapes only: jittered trials are skipped, not failed.
NOMINAL_REFERENCE = REFERENCE.replace(
    "        return torch.relu(self.lin(x)) * self.scale",
    "        if tuple(x.shape[:2]) != (8, 16):\n            raise IndexError('fixed size')\n"
    "        return torch.relu(self.lin(x)) * self.scale")


def check(tmp_path: Path, kernel: str, reference: str = REFERENCE, mode: str = "check",
          **settings: Any) -> dict[str, Any]:
    """Run the worker's main() in this process on one job and return what it wrote."""
    job = {"reference": reference, "kernel": kernel, "device": "cpu", "precision": "fp32",
           "settings": SETTINGS.model_copy(update=settings).model_dump(mode="json"),
           "extensions_dir": str(tmp_path / "ext")}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert worker.main([mode, str(tmp_path)]) == 0
    result: dict[str, Any] = json.loads((tmp_path / f"{mode}.json").read_text(encoding="utf-8"))
    return result


def fixture(name: str) -> str:
    return (KERNELS / f"{name}.py").read_text()


# compare(): the one correctness rule for one output ----------------------------------------------------

def test_equal_outputs_agree_with_zero_error() -> None:
    x = torch.tensor([1.0, -2.0, 3.0])
    assert compare(x, x.clone(), 1e-4, 1e-4) == (True, 0.0, 0.0, None)


def test_worst_errors_are_reported_across_all_outputs() -> None:
    f64 = torch.float64  # exact enough to pin the figures
    ref = (torch.tensor([1.0, 2.0], dtype=f64), torch.tensor([[4.0]], dtype=f64))
    new = (torch.tensor([1.0, 2.00001], dtype=f64), torch.tensor([[4.0002]], dtype=f64))
    ok, worst_abs, worst_rel, problem = compare(ref, new, 1e-4, 1e-4)
    assert ok and problem is None  # 2e-4 <= atol + rtol * 4 = 5e-4
    assert worst_abs == pytest.approx(4.0002 - 4.0, rel=1e-12)
    assert worst_rel == pytest.approx((4.0002 - 4.0) / (4.0 + 1e-4), rel=1e-12)  # relative to |ref| + atol
    ok, worst_abs, _, problem = compare(ref, (ref[0], torch.tensor([[4.001]], dtype=f64)), 1e-4, 1e-4)
    assert not ok and problem == "values differ beyond atol=0.0001, rtol=0.0001"
    assert worst_abs == pytest.approx(1e-3, rel=1e-3)


def test_tolerances_are_the_ones_given() -> None:
    ref, new = torch.tensor([100.0]), torch.tensor([100.5])  # off by 0.5: allowed is atol + rtol * 100
    assert compare(ref, new, 0.0, 0.01)[0] is True
    assert compare(ref, new, 0.0, 0.004)[0] is False
    assert compare(ref, new, 0.6, 0.0)[0] is True
    assert compare(ref, new, 0.4, 0.0)[0] is False


def test_every_chunk_of_a_large_output_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allclose, "COMPARE_CHUNK", 4)  # 10 values: chunks of 4, 4 and 2
    ref = torch.arange(10, dtype=torch.float64)
    assert compare(ref, ref.clone(), 1e-4, 1e-4) == (True, 0.0, 0.0, None)
    off = ref.clone()
    off[9] += 0.5  # only in the last, short chunk
    ok, worst_abs, worst_rel, problem = compare(ref, off, 1e-4, 1e-4)
    assert not ok and problem == "values differ beyond atol=0.0001, rtol=0.0001"
    assert worst_abs == pytest.approx(0.5) and worst_rel == pytest.approx(0.5 / (9 + 1e-4))
    off[1], off[5] = float("nan"), float("inf")  # one in each of the first two chunks
    assert compare(ref, off, 1e-4, 1e-4)[3] == "2 NaN/Inf values where the reference is finite"


def test_inputs_are_made_on_the_device() -> None:
    # get_inputs() runs with the device as torch's default, so its factory calls never fill host memory
    ns = {"get_inputs": lambda: [torch.empty(2).device]}
    assert worker.make_inputs(ns, worker.PopcornJitter(), 0, False, "meta") == [torch.device("meta")]


def test_a_count_or_shape_mismatch_fails_without_error_figures() -> None:
    a = torch.zeros(2, 3)
    assert compare((a, a), (a,), 1e-4, 1e-4) == (False, None, None, "output count mismatch: expected 2 tensors, got 1")
    assert compare(a, torch.zeros(3, 2), 1e-4, 1e-4) == (
        False, None, None, "output shape mismatch: expected (2, 3), got (3, 2)")
    assert compare([a, a], [a, torch.zeros(6)], 1e-4, 1e-4)[3] == "output shape mismatch: expected (2, 3), got (6,)"


def test_nan_where_the_reference_is_finite_is_named_and_counts_as_infinite_error() -> None:
    ref = torch.tensor([1.0, 2.0, 3.0])
    ok, worst_abs, worst_rel, problem = compare(ref, torch.tensor([1.0, float("nan"), float("inf")]), 1e-4, 1e-4)
    assert (ok, problem) == (False, "2 NaN/Inf values where the reference is finite")
    assert worst_abs == float("inf") and worst_rel == float("inf")
    # NaN in both is not the kernel's fault, but it is not "close" either
    ok, _, _, problem = compare(torch.tensor([float("nan")]), torch.tensor([float("nan")]), 1e-4, 1e-4)
    assert not ok and problem is not None and problem.startswith("values differ")


def test_empty_outputs_agree() -> None:
    assert compare(torch.zeros(0), torch.zeros(0), 1e-4, 1e-4) == (True, 0.0, 0.0, None)


# The verdict of a whole check, through main() --------------------------------------------------------

def test_a_correct_kernel_passes_every_trial_in_order(tmp_path: Path) -> None:
    out = check(tmp_path, fixture("correct"))
    assert out["verdict"] == "correct" and out["reason"] == "all 5 trials passed"
    trials = out["trials"]
    assert [(t["index"], t["jittered"], t["passed"]) for t in trials] == [
        (0, False, True), (1, False, True), (2, True, True), (3, True, True), (4, True, True)]
    assert all(t["problem"] is None and 0 <= t["max_abs_error"] < 1e-4 and 0 <= t["max_rel_error"] < 1e-3
               for t in trials)
    # the trial seeds come from the settings' seed, so a re-run checks the very same inputs
    gen = random.Random(SETTINGS.seed)
    assert [t["seed"] for t in trials] == [gen.randrange(2**31) for _ in range(5)]
    assert out["problem_names"] == [] and out["weights_note"] == "all 2 tensors copied from Model by name"
    assert trials[0]["input_shapes"] == ["8x16x64"] and trials[2]["input_shapes"] != ["8x16x64"]
    assert len({t["seed"] for t in trials}) == 5
    assert out["deterministic"] is True
    # every phase the check ran has its seconds, in the order it ran (on CPU: no device basis)
    assert list(out["phase_s"]) == ["load", "correctness", "warmup", "wall", "gate_wait", "exclusive", "host_quiet",
                                    "recheck", "jitter", "dynamic", "graph"]
    assert all(v >= 0 for v in out["phase_s"].values())


@pytest.mark.parametrize("name, reason", [
    ("wrong", "trial 0 (nominal shapes) failed: values differ beyond atol=0.0001, rtol=0.0001"),
    ("mutates", "trial 0 (nominal shapes) failed: the kernel modified its input(s) [0]"),
    ("caches", "trial 1 (nominal shapes) failed: values differ beyond atol=0.0001, rtol=0.0001"),
])
def test_a_nominal_failure_is_incorrect_and_stops_there(tmp_path: Path, name: str, reason: str) -> None:
    out = check(tmp_path, fixture(name))
    assert (out["verdict"], out["reason"]) == ("incorrect", reason)
    assert all(not t["jittered"] for t in out["trials"])  # no jittered trial after a nominal failure


def test_a_kernel_that_goes_stale_fails_the_recheck_after_timing(tmp_path: Path) -> None:
    out = check(tmp_path, GOES_STALE)
    assert out["verdict"] == "incorrect"
    assert out["reason"] == ("correct before the timed loop but not after it: "
                             "values differ beyond atol=0.0001, rtol=0.0001")
    assert [t["passed"] for t in out["trials"]] == [True, True]


def test_the_recheck_runs_on_the_last_inputs_timed_not_the_first_trials(tmp_path: Path) -> None:
    out = check(tmp_path, FIRST_OUTPUT_FOREVER)
    assert out["verdict"] == "incorrect"
    assert out["reason"] == ("correct before the timed loop but not after it: "
                             "values differ beyond atol=0.0001, rtol=0.0001")
    assert out["recheck"]["seed"] == -1 and out["recheck"]["passed"] is False


def test_a_jittered_failure_is_incorrect_and_names_the_shapes(tmp_path: Path) -> None:
    out = check(tmp_path, fixture("nominal_only"))
    bad = next(t for t in out["trials"] if t["passed"] is False)
    assert bad["jittered"] and out["verdict"] == "incorrect"
    assert out["reason"] == (f"correct at the nominal shapes, but trial {bad['index']} (jittered shapes "
                             f"{' '.join(bad['input_shapes'])}) failed: {bad['problem']}")


@pytest.mark.parametrize("message, problem", [
    ("only 8x16 is supported\\nsecond line", "raised ValueError: only 8x16 is supported"),
    ("!" * 300, "raised ValueError: " + "!" * 200),  # the first line, cut at 200 characters
    ("", "raised ValueError: "),
])
def test_a_kernel_raising_at_jittered_shapes_ends_the_jittered_trials(tmp_path: Path, message: str,
                                                                     problem: str) -> None:
    out = check(tmp_path, RAISES_WHEN_JITTERED.replace("only 8x16 is supported\\nsecond line", message),
                jitter_trials=3)
    trials = out["trials"]
    assert [t["passed"] for t in trials] == [True, True, False]  # the third jittered trial never ran
    assert trials[2]["problem"] == problem
    assert trials[2]["max_abs_error"] is None and trials[2]["max_rel_error"] is None and "raised" not in trials[2]
    assert out["verdict"] == "incorrect" and "trial 2 (jittered shapes" in out["reason"]


def test_shapes_the_reference_cannot_run_are_skipped_not_failed(tmp_path: Path) -> None:
    out = check(tmp_path, fixture("correct"), reference=NOMINAL_REFERENCE)
    jittered = [t for t in out["trials"] if t["jittered"]]
    assert jittered and all(t["passed"] is None for t in jittered)
    assert {t["problem"] for t in jittered} == {"skipped: the reference raised IndexError"}
    assert (out["verdict"], out["reason"]) == ("correct", "all 2 trials passed")


def test_failures_at_the_nominal_shapes_are_runtime_errors(tmp_path: Path) -> None:
    out = check(tmp_path, fixture("raises"))
    assert (out["verdict"], out["reason"]) == ("runtime_error",
                                               "RuntimeError: CUDA error: an illegal memory access was encountered")
    broken_reference = REFERENCE.replace("torch.relu(self.lin(x))", "torch.relu(self.lin(x[..., :3]))")
    out = check(tmp_path, fixture("correct"), reference=broken_reference)
    assert out["verdict"] == "runtime_error"
    assert out["reason"].startswith("RuntimeError: the reference Model itself fails: ")


@pytest.mark.parametrize("limit, flagged", [(0.0, True), (1e9, False)])
def test_an_excessive_speedup_is_sent_for_review(tmp_path: Path, limit: float, flagged: bool) -> None:
    out = check(tmp_path, fixture("correct"), jitter_trials=0, excessive_speedup=limit)
    assert out["verdict"] == "correct"
    assert out["reason"].startswith("all 2 trials passed")
    assert ("review by hand" in out["reason"]) is flagged


def test_compile_mode_loads_only(tmp_path: Path) -> None:
    out = check(tmp_path, fixture("uses_problem_names"), mode="compile")
    assert (out["verdict"], out["reason"], out["problem_names"]) == ("correct", "compiled", ["batch"])
    out = check(tmp_path, "x = 1\n", mode="compile")
    assert (out["verdict"], out["reason"]) == ("compile_error", "RuntimeError: the kernel defines no ModelNew class")


# The reference sleeps 0.25 s a call: any kernel looks many times faster than it, even on a busy machine
# (5 ms and then 50 ms were not enough: a tiny linear took over 2.5 ms a call beside a full test suite on 2 cores).
SLOW_REFERENCE = "import time\n" + REFERENCE.replace(
    "        return torch.relu(self.lin(x)) * self.scale",
    "        time.sleep(0.25)  # far beyond any scheduling delay on a loaded machine\n        return torch.relu(self.lin(x)) * self.scale")


def test_a_kernel_far_faster_than_the_reference_is_sent_for_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fewest timed calls (time_cap_s, a batch of 2 rounds): timing the sleeping reference 10 rounds a batch
    # until the default cap took seconds, and how many rounds are timed is not what this rule is about.
    from reporter.validate import timing
    monkeypatch.setattr(timing, "BATCH", 2)
    out = check(tmp_path, fixture("correct"), reference=SLOW_REFERENCE, jitter_trials=0, excessive_speedup=2.0, time_cap_s=0.05)
    assert out["verdict"] == "correct" and out["reason"].startswith("all 2 trials passed; speedup ")
    assert out["reason"].endswith("x is above 2x: review by hand")


def test_a_kernel_slower_than_the_reference_is_not(tmp_path: Path) -> None:
    slow_kernel = "import time\n" + fixture("correct").replace("        return torch.clamp(",
                                                               "        time.sleep(0.002)\n        return torch.clamp(")
    out = check(tmp_path, slow_kernel, jitter_trials=0, excessive_speedup=1.0)
    assert (out["verdict"], out["reason"]) == ("correct", "all 2 trials passed")


def test_precision_defaults_to_fp32(tmp_path: Path) -> None:
    job = {"reference": REFERENCE, "kernel": fixture("wrong"), "device": "cpu",
           "settings": SETTINGS.model_copy(update={"atol": {"fp32": 1.0}, "rtol": {"fp32": 1.0}}).model_dump(mode="json")}
    (tmp_path / "job.json").write_text(json.dumps(job), encoding="utf-8")
    worker.main(["check", str(tmp_path)])
    out = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert out["verdict"] == "correct"  # 1% off passes the (only) fp32 tolerance of 1.0


@pytest.mark.parametrize("message, reason", [
    ("x" * 600, "ValueError: " + "x" * 488),  # the reason is cut at 500 characters
    ("first line\\nsecond line", "ValueError: first line"),
    ("", "ValueError: "),
])
def test_a_failure_becomes_a_verdict_with_its_first_line_and_the_traceback(tmp_path: Path, message: str,
                                                                          reason: str) -> None:
    out = check(tmp_path, f"raise ValueError('{message}')\n", mode="compile")
    assert (out["verdict"], out["reason"]) == ("compile_error", reason)
    assert out["log"].startswith("Traceback (most recent call last):")
    assert "in <module>" in out["log"] and "ValueError" in out["log"]


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    (tmp_path / "job.json").write_text(json.dumps({"reference": REFERENCE, "kernel": ""}), encoding="utf-8")
    with pytest.raises(SystemExit, match="unknown mode 'bogus'; expected one of"):
        worker.main(["bogus", str(tmp_path)])


# Only correctness checks decide a verdict -------------------------------------------------------------

CAPTURE_FAILED = "RuntimeError: operation failed due to a previous error during capture"


def _poison(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a failed CUDA-graph capture did to the H200 worker: every later computation gives NaN."""
    def nan_like(fn: Any) -> Any:
        return lambda *a, **k: torch.full_like(fn(*a, **k), float("nan"))
    monkeypatch.setattr(torch, "relu", nan_like(torch.relu))  # the reference's last op
    monkeypatch.setattr(torch, "clamp", nan_like(torch.clamp))  # the kernel's


@pytest.mark.parametrize("capture_raises", [False, True])
def test_a_capture_that_poisons_the_process_changes_no_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capture_raises: bool) -> None:
    # The graph basis is optional: it runs after every correctness check (nominal, re-check after the timed
    # loop, jittered, input statistics, dynamic checks), so what a failed capture breaks decides nothing.
    def poisoning_capture(fns: list[Any], sets: list[Any], s: CheckSettings, device: str, *_: Any) -> list[Any]:
        _poison(monkeypatch)
        if capture_raises:
            raise RuntimeError("capture blew up")
        return [(None, CAPTURE_FAILED) for _ in fns]

    monkeypatch.setattr(worker, "time_graphs", poisoning_capture)
    out = check(tmp_path, fixture("correct"))
    assert (out["verdict"], out["reason"]) == ("correct", "all 5 trials passed")
    assert out["recheck"]["passed"] is True and all(t["passed"] is not False for t in out["statistics_trials"])
    # the four dynamic checks and the two run-time defences; the L2 guard has no GPU to guard here
    assert [d["tripped"] for d in out["dynamic_checks"]] == [False] * 6 + [None]
    kt, rt = out["kernel_timing"], out["reference_timing"]
    assert kt["wall"] is not None and rt["wall"] is not None and kt["graph"] is None  # the other bases stay
    note = "not measured: CUDA-graph timing failed: RuntimeError: capture blew up" if capture_raises else CAPTURE_FAILED
    assert kt["graph_note"] == rt["graph_note"] == note
    assert out["pending"] is None  # the graph step finished: nothing is left pending


def test_the_verdict_is_saved_before_the_graph_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A capture that kills the worker (or hangs past the timeout) must leave the saved verdict standing.
    seen: list[dict[str, Any]] = []

    def dies_in_capture(fns: list[Any], sets: list[Any], s: CheckSettings, device: str, *_: Any) -> list[Any]:
        seen.append(json.loads((tmp_path / "check.json").read_text(encoding="utf-8")))
        raise SystemExit(0)  # stands in for the process dying here: nothing after this line runs

    monkeypatch.setattr(worker, "time_graphs", dies_in_capture)
    with pytest.raises(SystemExit):
        check(tmp_path, fixture("correct"))
    saved = seen[0]
    assert (saved["verdict"], saved["pending"]) == ("correct", "CUDA-graph timing")
    assert saved["kernel_timing"]["graph_note"].startswith("not measured: the worker died or ran out of time")
    from reporter.validate.process import read_result
    for rc in (None, -11):  # killed at the timeout, or crashed: the saved verdict is the result
        got = read_result("check", tmp_path, rc, 5.0)
        assert (got.verdict, got.pending) == ("correct", "CUDA-graph timing")
    (tmp_path / "check.json").write_text(json.dumps({**saved, "pending": None}), encoding="utf-8")
    assert read_result("check", tmp_path, None, 5.0).verdict == "timeout"  # not saved before an optional step


# A kernel file that copies the problem file and changes it: the module-level names it rebinds are its own.
REBINDS_PROBLEM_NAMES = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.scale = scale
        self.seen = []

    def forward(self, x):
        self.seen.append(tuple(x.shape))
        return torch.relu(self.lin(x)) * self.scale

batch = 1      # a smaller problem: every trial and timed call would shrink with it
width = 3      # the corpus case (L2 p31) rebound bias_shape, and the reference Model itself failed

def get_inputs():
    return [torch.zeros(batch, 2, width)]

def get_init_inputs():
    return [width, 0.5]
"""


def test_the_kernel_file_cannot_rebind_the_problems_inputs(tmp_path: Path) -> None:
    out = check(tmp_path, REBINDS_PROBLEM_NAMES, jitter_trials=0)
    assert out["verdict"] == "correct", out["reason"]
    # The problem's own shapes (batch 8, width 64; seq jittered around 16 only in jittered trials), not 1 x 2 x 3.
    assert {tuple(t["input_shapes"]) for t in out["trials"]} == {("8x16x64",)}
    assert out["weights_note"] == "all 2 tensors copied from Model by name"  # built with width 64 as the reference


# A kernel file with a helper class of its own named Model: its ModelNew builds that one, not the problem's.
OWN_HELPER_NAMED_MODEL = """
import torch
import torch.nn as nn

class Model(nn.Module):  # the kernel's helper, not the problem's reference
    def __init__(self, lin, scale):
        super().__init__()
        self.lin, self.scale = lin, scale

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale

class ModelNew(nn.Module):
    def __init__(self, width, scale):
        super().__init__()
        self.lin = nn.Linear(width, width)
        self.inner = Model(self.lin, scale)

    def forward(self, x):
        return self.inner(x)
"""

# A kernel file that changes the problem's own class: the harness's reference must not see it.
PATCHES_THE_REFERENCE = """
import torch
import torch.nn as nn

Model.forward = lambda self, x: torch.zeros_like(x)

class ModelNew(nn.Module):
    def __init__(self, width, scale):
        super().__init__()

    def forward(self, x):
        return torch.zeros_like(x)
"""


def test_the_kernels_own_helper_named_model_stays_its_own(tmp_path: Path) -> None:
    out = check(tmp_path, OWN_HELPER_NAMED_MODEL, jitter_trials=0)
    assert out["verdict"] == "correct", out["reason"]


def test_the_kernel_file_cannot_patch_the_reference_model(tmp_path: Path) -> None:
    out = check(tmp_path, PATCHES_THE_REFERENCE, jitter_trials=0)
    assert out["verdict"] == "incorrect"  # compared with the problem's real Model, not the patched class
