"""A "correct" on a problem whose check cannot fail is not a result (issue 31, item 3): each problem's comparison
is put through wrong answers, strengthened where they pass, and what still passes is said on every verdict.

The worker runs in this process on CPU, on shrunken copies of the KernelBench problems the issue found weak.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from reporter.core import suspects  # noqa: E402
from reporter.core.records import ValidationSettings, measured  # noqa: E402
from reporter.core.schema import CheckStrength, DynamicCheck, DynamicResult, Verdict, WorkerResult  # noqa: E402
from reporter.render.evidence import strength_lines  # noqa: E402
from reporter.validate import strength, worker  # noqa: E402

CHEATS = Path(__file__).resolve().parent / "fixtures" / "cheats"
# At 2048 x 2048 a wrong pairing moves HingeLoss's mean by at most 5e-4 (seeds 0-5), under this tolerance; rows of
# their own scale move it by 0.4-2%. (The real problem, 32768 x 32768, is the same story at 1e-4.)
TOL = {"fp32": 1e-3, "fp16": 1e-2, "bf16": 1e-2}
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=0, perf_trials=2, warmup=1, time_cap_s=0.05, atol=TOL, rtol=TOL)


def run(tmp_path: Path, mode: str, reference: str, kernel: str = "", given: CheckStrength | None = None) -> dict[str, Any]:
    job = {"reference": (CHEATS / "references" / f"{reference}.py").read_text(),
           "kernel": (CHEATS / "kernels" / f"{kernel}.py").read_text() if kernel else "", "device": "cpu",
           "precision": "fp32", "settings": SETTINGS.model_dump(mode="json"), "strength": asdict(given) if given else None}
    folder = tmp_path / f"{mode}-{kernel or reference}-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
    assert worker.main([mode, str(folder)]) == 0
    out: dict[str, Any] = json.loads((folder / f"{mode}.json").read_text(encoding="utf-8"))
    return out


def test_hinge_loss_pairs_targets_in_any_order_until_rows_are_scaled(tmp_path: Path) -> None:
    measured = run(tmp_path, "strength", "hinge_weak")
    assert measured["verdict"] == "correct", measured["reason"]
    got = measured["check_strength"]
    # The demo-beta kernel's bug, as a mutant of the reference, passes on the problem's own inputs...
    assert "mutant: `predictions * targets` with `targets` broadcast along dim -1" in got["passes"]
    # ...and fails once each row of predictions has its own scale; broadcasts that give the same function are not counted.
    assert got["strengthen"][0] == "per-row scales" and got["still_pass"] == []
    assert "mutant: `predictions * targets` with `targets` broadcast along dim 0" in got["equivalent"]
    given = CheckStrength(**{k: tuple(v) if isinstance(v, list) else v for k, v in got.items()})
    wrong = run(tmp_path, "check", "hinge_weak", "hinge_wrong_pairing", given)
    assert wrong["verdict"] == "incorrect"
    assert wrong["reason"].startswith("trial 2 (strengthened: per-row scales inputs at the nominal shapes) failed")
    assert [t["passed"] for t in wrong["trials"]] == [True, True, False]  # the problem's own inputs could not tell
    honest = run(tmp_path, "check", "hinge_weak", "hinge_honest", given)
    assert honest["verdict"] == "correct", honest["reason"]
    assert [(t["inputs"], t["passed"]) for t in honest["trials"]] == [(None, True), (None, True)] + [
        (f"strengthened: {name}", True) for name in got["strengthen"]]
    assert honest["check_strength"] == got


def test_a_zero_output_kernel_on_a_softmax_whose_outputs_are_below_atol(tmp_path: Path) -> None:
    got = strength.strength_entry((CHEATS / "references" / "softmax_wide.py").read_text(), "cpu", 42, 1e-3, 1e-3)
    assert set(got.passes) == {"zeros", "another input's answer"} and got.weak
    assert got.strengthen and not got.still_pass
    # Without the strengthened trials the zero kernel is "correct"; with them it is not, and the honest one still is.
    assert run(tmp_path, "check", "softmax_wide", "zeros_output")["verdict"] == "correct"
    assert run(tmp_path, "check", "softmax_wide", "zeros_output", got)["verdict"] == "incorrect"
    assert run(tmp_path, "check", "softmax_wide", "softmax_honest", got)["verdict"] == "correct"


def test_zeros_on_l1norm_at_the_leaderboard_tolerance_are_a_weak_check_not_an_equivalent() -> None:
    # x / sum|x| over 16,384 columns: every output is ~1e-4, under atol 1e-2, so zeros pass on any input at all.
    # Zeros are wrong by construction: only a mutant of the reference can be "the same function within tolerance".
    got = strength.strength_entry((CHEATS / "references" / "l1norm_2025.py").read_text(), "cpu", 42, 1e-2, 1e-2)
    assert "zeros" in got.passes and "zeros" in got.still_pass and got.weak
    assert "zeros" not in got.equivalent and "another input's answer" not in got.equivalent


def test_mutants_change_one_thing_each() -> None:
    ref = "class Model:\n    def forward(self, x, y):\n        return torch.sum(x * y, dim=1) + x.mean(0)\n"
    labels = [label for label, _ in strength.mutants(ref)]
    assert "mutant: `sum` over dim 0 instead of 1" in labels and "mutant: `mean` over dim 1 instead of 0" in labels
    assert "mutant: `x * y` without its right operand" in labels
    source = dict(strength.mutants(ref))["mutant: `x * y` without its right operand"]
    assert "torch.sum(x, dim=1) + x.mean(0)" in source
    assert strength.mutants("not python (") == [] and strength.mutants("x = 1") == []


def _stored(verdict: Verdict, strength_: CheckStrength | None) -> Any:
    return measured(WorkerResult(verdict, "ok", check_strength=strength_, dynamic_checks=(
        DynamicResult(DynamicCheck.OUTPUT_REUSED, False, "each call returned new storage"),)),
        kernel_sha256="k", reference_sha256="r", settings={})


def test_what_still_passes_is_a_weak_check_on_a_correct_verdict_only() -> None:
    weak = CheckStrength(passes=("zeros",), still_pass=("zeros",))
    assert suspects.weak_check(_stored(Verdict.CORRECT, weak)) == "zeros"
    assert suspects.weak_check(_stored(Verdict.INCORRECT, weak)) is None  # an incorrect kernel's check failed it
    strengthened = CheckStrength(passes=("zeros",), strengthen=("peaked rows",))
    assert suspects.weak_check(_stored(Verdict.CORRECT, strengthened)) is None
    lines = strength_lines(_stored(Verdict.CORRECT, weak))
    assert lines[0] == "Check strength: on the problem's own inputs the comparison also accepts zeros."
    assert "Still accepted even so: zeros." in lines[-1]
    # Not measured (an older result, or the strength worker failed): the run's checks are incomplete, not weak.
    assert suspects.missing_checks(_stored(Verdict.CORRECT, None)) == ("check strength",)
    assert suspects.missing_checks(_stored(Verdict.CORRECT, CheckStrength(note="not measured: timeout"))) == ("check strength",)
    assert suspects.missing_checks(_stored(Verdict.CORRECT, CheckStrength())) == ()


def test_strengthened_inputs_keep_what_the_problem_guarantees() -> None:
    # A kernel may rely on what a problem's inputs always are: a symmetric matrix (KernelBench L1 13), +-1 targets
    # (HingeLoss), rows that are distributions (KLDiv). A strengthened trial decides a verdict, so it never breaks them.
    a = torch.rand(32, 32)
    sym, targets, dist = a + a.T, torch.randint(0, 2, (32,)).float() * 2 - 1, torch.softmax(torch.randn(8, 16), -1)
    assert strength.structure(sym) == ("non-negative", "symmetric") and strength.structure(targets) == ("integer-valued",)
    assert strength.structure(dist) == ("non-negative", "rows sum to 1")
    for name in strength.TRANSFORMS:
        got = strength.transformed([sym, targets, dist, a], name, 1, "cpu")
        assert torch.equal(got[1], targets) and torch.equal(got[2], dist), name
        assert torch.equal(got[0], got[0].mT), name  # kept symmetric (or left as drawn)
    assert not torch.equal(strength.transformed([a], "per-row scales", 1, "cpu")[0], a)  # a plain input is transformed
    # So the symmetric problem's "transposed operand" mutant is the same function on its inputs, not a weak check.
    ref = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, A, B):\n        return torch.matmul(A, B)\n"
           "def get_inputs():\n    A = torch.rand(64, 64)\n    B = torch.rand(64, 64)\n    return [A + A.T, B + B.T]\n"
           "def get_init_inputs():\n    return []\n")
    got = strength.strength_entry(ref, "cpu", 42, 1e-4, 1e-4)
    assert not got.weak and got.equivalent == ("mutant: `matmul` with its second operand transposed",)
