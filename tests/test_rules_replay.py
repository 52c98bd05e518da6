"""Issue 42: a kernel replayed under the rules that scored its run (KernelBench's), on CPU with Python kernels.

Each kernel below is judged both ways: KernelBench's construction, mode, casting and comparison against ours
(copied weights, eval mode, float64 with tuples flattened). The expected verdicts are what KernelBench's own
eval would say, worked out by hand from its rules, not read from the code under test.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from reporter.core.rules import KERNELBENCH_2025, KERNELBENCH_2025_11, STRICT, rules_named  # noqa: E402
from reporter.core.schema import CheckSettings, WorkerJob  # noqa: E402
from reporter.validate import replay  # noqa: E402
from reporter.validate.inputs import PopcornJitter, load  # noqa: E402

REFERENCE = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.a = nn.Linear(n, n)
        self.b = nn.Linear(n, n)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))

def get_inputs():
    return [torch.randn(8, 32)]

def get_init_inputs():
    return [32]
"""

SAME = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.a = nn.Linear(n, n)
        self.b = nn.Linear(n, n)

    def forward(self, x):
        return RESULT
"""

RIGHT = SAME.replace("RESULT", "self.b(torch.relu(self.a(x)))")
# The same layers created in the other order: under seeded construction each draws the other's weights.
REORDERED = RIGHT.replace("        self.a = nn.Linear(n, n)\n        self.b = nn.Linear(n, n)\n",
                          "        self.b = nn.Linear(n, n)\n        self.a = nn.Linear(n, n)\n")
FLOAT64 = SAME.replace("RESULT", "self.b(torch.relu(self.a(x))).double()")
TUPLE = SAME.replace("RESULT", "(self.b(torch.relu(self.a(x))),)")
# o1-preview L3 p15's shape: the kernel runs only in eval mode, and it is wrong there.
EVAL_ONLY = SAME.replace("RESULT", "self.b(torch.relu(self.a(x))) if self.training else self.b(self.a(x))")

GELU_REFERENCE = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x)

def get_inputs():
    return [torch.randn(64, 256) * 3]

def get_init_inputs():
    return []
"""
GELU_TANH = """
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")
"""


def judged(kernel: str, rules: str, reference: str = REFERENCE) -> replay.BenchmarkReplay:
    job = WorkerJob(reference, kernel, CheckSettings(), "cpu", rules=rules)
    return replay.run(job)


def test_the_rule_sets_hold_kernelbench_s_values_in_each_era() -> None:
    assert KERNELBENCH_2025.tolerance("fp32") == (1e-2, 1e-2) and KERNELBENCH_2025_11.tolerance("fp32") == (1e-4, 1e-4)
    assert KERNELBENCH_2025_11.tolerance("bf16") == (1e-2, 1e-2) and STRICT.tolerance("fp32") == (1e-4, 1e-4)
    assert (KERNELBENCH_2025.trials, KERNELBENCH_2025.train_mode, KERNELBENCH_2025.construction) == (5, True, "seeded")
    assert (STRICT.train_mode, STRICT.construction, STRICT.comparison) == (False, "copied", "float64")
    assert rules_named("kernelbench-leaderboard") is KERNELBENCH_2025
    with pytest.raises(KeyError, match="known: kernelbench-2025"):
        rules_named("kernelbench-1999")


def test_a_right_kernel_is_correct_under_every_rule_set() -> None:
    for name in ("kernelbench-2025", "kernelbench-2025-11", "strict"):
        got = judged(RIGHT, name)
        assert (got.passed, got.trials_passed, got.problem) == (True, got.trials, None), name
    assert judged(RIGHT, "kernelbench-2025").trials == 5


@pytest.mark.parametrize("kernel, problem", [
    (REORDERED, "values differ beyond atol=0.01, rtol=0.01"),
    (FLOAT64, "runtime error: RuntimeError: Float did not match Double"),
    (TUPLE, "runtime error: AttributeError: 'tuple' object has no attribute 'shape'"),
])
def test_what_kernelbench_refused_is_incorrect_under_its_rules_and_correct_under_ours(kernel: str, problem: str) -> None:
    kb = judged(kernel, "kernelbench-2025")
    assert (kb.passed, kb.trials_passed, kb.problem) == (False, 0, problem)
    ours = judged(kernel, "strict")
    assert ours.passed is True, ours.problem


def test_weights_copied_names_the_cause_of_a_reordered_model() -> None:
    got = judged(REORDERED, "kernelbench-2025")
    assert [(v.change, v.passed) for v in got.variants] == [("eval mode", False), ("weights copied", True)]


def test_a_kernel_that_only_runs_in_eval_mode_is_correct_under_kernelbench_and_wrong_in_eval_mode() -> None:
    got = judged(EVAL_ONLY, "kernelbench-2025")
    assert got.passed is True and got.worst_ratio == 0.0
    assert [(v.change, v.passed) for v in got.variants] == [("eval mode", False), ("weights copied", True)]
    assert judged(EVAL_ONLY, "strict").passed is False


def test_tanh_gelu_passes_at_the_leaderboard_tolerance_and_fails_at_1e_4() -> None:
    old = judged(GELU_TANH, "kernelbench-2025", GELU_REFERENCE)
    assert old.passed is True and old.max_abs_error is not None and 1e-4 < old.max_abs_error < 1e-3
    assert old.strict_ratio is not None and old.strict_ratio > 1 and old.worst_ratio is not None and old.worst_ratio < 0.1
    new = judged(GELU_TANH, "kernelbench-2025-11", GELU_REFERENCE)
    assert (new.passed, new.trials_passed) == (False, 0)


def test_trial_inputs_come_from_kernelbench_s_seeds_on_the_cpu_generator() -> None:
    # KernelBench: manual_seed(42), then one randint(0, 2**32 - 1) per trial (torch's CPU generator, the same on
    # every machine); each trial seeds with its own before get_inputs().
    expected = [734796314, 576165995, 2197670066, 839703249, 2584932063]
    assert replay._trial_seeds(KERNELBENCH_2025) == expected
    ns, _ = load(REFERENCE, RIGHT, PopcornJitter())
    torch.manual_seed(expected[0])
    first = ns["get_inputs"]()[0]
    seen: list[object] = []
    ns["Model"].forward = lambda self, x: seen.append(x.clone()) or x  # type: ignore[method-assign]
    ns["ModelNew"].forward = lambda self, x: x  # type: ignore[method-assign]
    replay.replay(ns, KERNELBENCH_2025, "fp32", "cpu")
    assert len(seen) == 5 and torch.equal(seen[0], first)  # type: ignore[arg-type]


@pytest.mark.xdist_group("harness")
def test_validate_replays_a_run_under_its_own_rules_and_measures_again_once_they_change(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The whole pipeline on CPU: the check, then the replay in a child of its own, stored with the result; a
    # cached result stands until the run's rules change, when the run is measured again.
    import json

    import pandas as pd

    from conftest import KERNELS, kernel_run
    from reporter.collect import collect
    from reporter.core.records import ValidationSettings
    from reporter.validate import validate_runs

    settings = ValidationSettings(nominal_trials=2, jitter_trials=0, perf_trials=3, warmup=1, timeout_s=60, time_cap_s=0.05)
    for name in ("correct", "wrong"):
        trace = kernel_run(tmp_path, name, (KERNELS / f"{name}.py").read_text())
        doc = json.loads(trace.read_text())
        doc["run"]["rules"] = "kernelbench-2025"
        trace.write_text(json.dumps(doc))
    got = validate_runs(tmp_path, collect(tmp_path).runs, settings, device="cpu", jobs=2)
    bench = {k: r.benchmark for k, (r, _) in got.items()}
    assert bench["correct"] is not None and bench["correct"].rules == "kernelbench-2025"
    assert (bench["correct"].passed, bench["correct"].trials_passed, bench["correct"].trials) == (True, 5, 5)
    # wrong.py scales the output by 1.01: within 1e-2 of it (|0.01 y| <= 1e-2 + 1e-2 * |1.01 y|), so KernelBench's
    # leaderboard-era rules pass it, while at our 1e-4 it is off (our audit says incorrect).
    wrong = bench["wrong"]
    assert wrong is not None and wrong.passed is True and wrong.worst_ratio < 1 < wrong.strict_ratio
    assert got["wrong"][0].verdict == "incorrect"
    # reporter.load (and runs.csv) carry both verdicts and the cause, as the run page shows them
    import reporter
    rows = reporter.load(tmp_path).set_index("run_id")
    assert rows.loc["wrong", "rules"] == "kernelbench-2025" and rows.loc["wrong", "benchmark_verdict"] == "correct"
    assert rows.loc["wrong", "revalidated_verdict"] == "incorrect" and rows.loc["wrong", "verdicts_cause_class"] == "tolerance"
    assert "passes at 0.01, fails at 0.0001" in rows.loc["wrong", "verdicts_cause"]
    assert rows.loc["correct", "benchmark_verdict"] == "correct" and rows.loc["correct", "verdicts_cause"] is pd.NA
    assert {c.change for c in bench["correct"].variants} == {"eval mode", "weights copied"}
    again = validate_runs(tmp_path, collect(tmp_path).runs, settings, device="cpu", jobs=2)
    assert all(fresh for _, fresh in again.values())  # (result, from the cache): nothing measured again
    trace = tmp_path / "wrong" / "trace.json"
    doc = json.loads(trace.read_text())
    doc["run"]["rules"] = "kernelbench-2025-11"
    trace.write_text(json.dumps(doc))
    changed = validate_runs(tmp_path, collect(tmp_path).runs, settings, device="cpu", jobs=2)
    assert changed["correct"][1] is True
    assert changed["wrong"][1] is False
    wrong = changed["wrong"][0].benchmark
    assert (wrong.rules, wrong.passed, wrong.trials_passed) == ("kernelbench-2025-11", False, 0)


def test_rtol_scales_the_kernel_s_output_as_torch_allclose_ref_out_does() -> None:
    # torch.allclose(ref, out) tests |ref - out| <= atol + rtol * |out|: with ref 1.0 and out 1.9 at rtol 0.5 the bound
    # is 0.95 and the error 0.9, so it passes (0.9 / 0.95 = 0.947); rtol on the reference would allow 0.5 only (1.8).
    ref, out = torch.tensor([1.0]), torch.tensor([1.9])
    assert torch.allclose(ref, out, atol=0.0, rtol=0.5)
    assert replay._ratio_on_output(ref, out, 0.0, 0.5) == pytest.approx(0.9 / 0.95)
