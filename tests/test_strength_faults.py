"""Check strength at its edges (issue 32's blind round: str-*, pc-* survivors): the sparse transform keeps one value
in ten, atol scales with the output, a batched matmul has a transposed-operand mutant, the stored strength's key
holds the rtol, and only measured strengths are stored. Expected values by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from reporter.core.schema import CheckSettings, CheckStrength, WorkerJob
from reporter.validate import problemcheck, strength


def test_the_sparse_transform_zeroes_nine_values_in_ten() -> None:
    g = torch.Generator().manual_seed(0)
    out = strength.TRANSFORMS["sparse"](torch.ones(100_000), g)
    kept = float((out != 0).float().mean())
    assert 0.09 < kept < 0.11 and set(out.unique().tolist()) <= {0.0, 1.0}


def test_atol_scales_as_the_reference_output_grows_and_shrinks() -> None:
    nominal = torch.ones(4)
    assert strength.scaled_atol(1e-2, torch.full((4,), 3.0), nominal) == pytest.approx(3e-2)
    assert strength.scaled_atol(1e-2, torch.full((4,), 0.5), nominal) == pytest.approx(5e-3)
    assert strength.scaled_atol(1e-2, torch.zeros(4), nominal) == 1e-2  # nothing to scale by: as given


def test_a_batched_matmul_gets_its_transposed_operand_mutant() -> None:
    ref = "import torch\nclass Model:\n    def forward(self, a, b):\n        return torch.bmm(a, b)\n"
    labels = dict(strength.mutants(ref))
    assert "mutant: `bmm` with its second operand transposed" in labels
    assert "torch.bmm(a, b.transpose(-1, -2))" in labels["mutant: `bmm` with its second operand transposed"]


def _job(rtol: float) -> WorkerJob:
    return WorkerJob("class Model: pass\n", "", CheckSettings(rtol={"fp32": rtol, "fp16": 1e-2, "bf16": 1e-2}), "cpu")


def test_the_stored_strength_is_keyed_by_the_rtol_too() -> None:
    assert problemcheck.strength_key(_job(1e-4)) != problemcheck.strength_key(_job(1e-2))
    assert problemcheck.strength_key(_job(1e-4)) == problemcheck.strength_key(_job(1e-4))


def test_only_a_measured_strength_is_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good, failed = _job(1e-4), _job(1e-2)
    answers = {problemcheck.strength_key(good): CheckStrength(passes=("zeros",), still_pass=("zeros",)),
               problemcheck.strength_key(failed): CheckStrength(note="not measured: crashed")}

    def measured(todo: dict[str, Any], *args: Any) -> dict[str, CheckStrength]:
        return {k: answers[k] for k in todo}
    monkeypatch.setattr(problemcheck, "measure", measured)
    found = problemcheck.strengths(tmp_path, [good, failed], [], 1, 10.0, "cpu")
    assert found == answers
    stored = sorted(p.stem for p in tmp_path.rglob("*.json"))
    assert stored == [problemcheck.strength_key(good)]  # the failed one is measured again next time
    doc = json.loads(next(tmp_path.rglob("*.json")).read_text())
    assert doc["strength"]["still_pass"] == ["zeros"]
