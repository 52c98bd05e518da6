"""KernelBench run folders: both eval_results generations, kernels only, and the error cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reporter.collect import collect
from reporter.collect.kernelbench import import_kernelbench
from reporter.collect.traces import RunRecord
from reporter.collect.validation import load_validations
from reporter.core import cache
from reporter.core.cheats import scan
from reporter.core.records import Environment, StaticFinding, ValidationResult, ValidationSettings, sha256_text
from reporter.render import build_site
from reporter.validate import cached_lookup, manifest

KB = Path(__file__).resolve().parent / "fixtures" / "kernelbench"


def load(out: Path, name: str) -> dict:
    return json.loads((out / name / "trace.json").read_text())


def test_current_schema(tmp_path: Path) -> None:
    rep = import_kernelbench(KB / "run_new", KB / "problems", tmp_path)
    assert len(rep.written) == 2
    assert any("duplicate result for level 1 problem 2 sample 0" in m for m in rep.messages)
    t1 = load(tmp_path, "kernelbench-run_new/l1-p1-s0")
    assert t1["run"]["model"] == "gpt-4o"  # from generation_config.yaml
    assert t1["run"]["problem_file"] == "1_Square_matrix_multiplication_.py"
    assert t1["run"]["recorded_verdict"] == "correct"
    assert t1["metrics"]["timing"] == {"source": "kernelbench.timing", "unit": "ms", "runtime": 0.0312,
                                       "kernel_mean": 0.0312, "kernel_std": 0.0011}
    assert t1["prompt"].startswith("Write a fast kernel")
    assert "class Model" in t1["reference_source"]
    t2 = load(tmp_path, "kernelbench-run_new/l1-p2-s0")
    assert t2["run"]["recorded_verdict"] == "compile_error"
    assert t2["harness_metadata"]["compilation_error"].startswith("Error building extension")
    assert t2["metrics"] == {}  # runtime -1 means "not measured", never a time


def test_older_per_sample_schema(tmp_path: Path) -> None:
    rep = import_kernelbench(KB / "run_old", KB / "problems", tmp_path)
    assert len(rep.written) == 2 and not rep.messages
    t2 = load(tmp_path, "kernelbench-run_old/l1-p2-s0")
    assert t2["run"]["recorded_verdict"] == "incorrect"
    assert t2["harness_metadata"]["correctness_issue"] == "Output mismatch"
    assert t2["harness_metadata"]["avg_difference"] == ["0.51"]
    assert load(tmp_path, "kernelbench-run_old/l1-p1-s0")["metrics"]["timing"]["runtime"] == 0.05


def test_kernels_only_unreadable_json_and_missing_problem(tmp_path: Path) -> None:
    rep = import_kernelbench(KB / "run_kernels_only", KB / "problems", tmp_path)
    assert len(rep.written) == 3  # nothing dropped
    assert any("unreadable JSON" in m for m in rep.messages)
    assert any("no problem file 3_*.py" in m for m in rep.messages)
    t = load(tmp_path, "kernelbench-run_kernels_only/l1-p3-s0")
    assert t["run"]["recorded_verdict"] == "not_evaluated" and t["reference_source"] is None


def measured(run: RunRecord, verdict: str) -> ValidationResult:
    """A re-validation result as `validate_runs` would store it (static checks from the real scanner)."""
    fk, ref = run.trace.final_kernel, run.trace.reference_source
    assert fk is not None and ref is not None
    findings = [StaticFinding(check=f.check, severity=f.severity, line=f.line, text=f.text, message=f.message)  # type: ignore[arg-type]
                for f in scan(fk.source, run.trace.run.backend)]
    return ValidationResult(kernel_sha256=sha256_text(fk.source), reference_sha256=sha256_text(ref),
                            settings=ValidationSettings(), environment=Environment(gpu="Test GPU"), verdict=verdict,  # type: ignore[arg-type]
                            measured_at="2030-01-01T00:00:00Z", static_findings=findings)


def test_imported_runs_find_their_results_and_show_them(tmp_path: Path) -> None:
    # Import, re-validate (a stored result stands in for the GPU), build: the imported kernel and reference
    # are exactly what the cache key was made from, and the page shows the flip from the recorded verdict.
    data = tmp_path / "data"
    import_kernelbench(KB / "run_new", KB / "problems", data)
    col = collect(data)
    assert not col.errors and len(col.runs) == 2
    relu = next(r for r in col.runs if r.run_id.endswith("l1-p2-s0"))
    assert relu.trace.run.recorded_verdict == "compile_error"
    for run in col.runs:
        fk, ref = run.trace.final_kernel, run.trace.reference_source
        assert fk is not None and ref is not None
        manifest.store(data, cache.content_key(fk.source, ref), measured(run, "correct"))
    for run in collect(data).runs:
        hit = cached_lookup(data, run)
        assert hit is not None and hit[0].environment.gpu == "Test GPU"
    build_site(col, load_validations(data, col.runs)[0], data, tmp_path / "site")
    html = (tmp_path / "site" / "runs" / "kernelbench-run-new-l1-p2-s0.html").read_text()
    assert "verdict flip: recorded compile_error, reproduced correct" in html
    matmul = (tmp_path / "site" / "runs" / "kernelbench-run-new-l1-p1-s0.html").read_text()
    assert "torch_computation" in matmul  # the scanner's finding for a kernel that calls torch.matmul


@pytest.mark.parametrize(("yaml_text", "model"), [
    ('model_name: "gpt-4o"  # the served name\n', "gpt-4o"),
    ("server:\n  model_name: proxy\nmodel_name: >-\n  claude\n  sonnet\n", "claude sonnet"),
    ("server:\n  model_name: proxy\n", "run_new"),  # only a nested key: not the run's model
    ("model_name: [unclosed\n", "run_new"),
])
def test_generation_config_is_read_as_yaml(tmp_path: Path, yaml_text: str, model: str) -> None:
    run = tmp_path / "run_new"
    shutil.copytree(KB / "run_new", run)
    (run / "generation_config.yaml").write_text(yaml_text, encoding="utf-8")
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert load(tmp_path / "out", "kernelbench-run_new/l1-p1-s0")["run"]["model"] == model
    assert any("unreadable YAML" in m for m in rep.messages) == ("unclosed" in yaml_text)


# Issue 32's survivors -----------------------------------------------------------------------------------

def test_a_result_keyed_by_problem_file_name_is_read_by_its_number(tmp_path: Path) -> None:
    """eval_results.json keyed "2_ReLU" (a problem file's stem) belongs to problem 2, read from the number before
    the first "_" (read from the last part, "ReLU", every result was skipped and every test passed)."""
    run = tmp_path / "run_named"
    shutil.copytree(KB / "run_new", run)
    doc = json.loads((run / "eval_results.json").read_text())
    (run / "eval_results.json").write_text(json.dumps({"1_Square_matrix_multiplication_": doc["1"], "2_ReLU": doc["2"]}))
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert not [m for m in rep.messages if "not a problem id" in m], rep.messages
    verdicts = {p.parent.name: json.loads(p.read_text())["run"]["recorded_verdict"] for p in (tmp_path / "out").rglob("trace.json")}
    assert verdicts == {"l1-p1-s0": "correct", "l1-p2-s0": "compile_error"}


@pytest.mark.parametrize("meta", [{"cuda_error": "CUDA error: an illegal memory access was encountered"},
                                  {"runtime_error": "RuntimeError: CUDA error: misaligned address"}])
def test_a_cuda_or_runtime_error_imports_as_a_runtime_error_not_as_incorrect(tmp_path: Path, meta: dict) -> None:
    run = tmp_path / "run_err"
    shutil.copytree(KB / "run_new", run)
    doc = json.loads((run / "eval_results.json").read_text())
    doc["1"] = [{"sample_id": 0, "compiled": True, "correctness": False, "metadata": meta, "runtime": -1.0, "runtime_stats": {}}]
    (run / "eval_results.json").write_text(json.dumps(doc))
    import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert json.loads((tmp_path / "out" / "kernelbench-run_err" / "l1-p1-s0" / "trace.json").read_text())["run"]["recorded_verdict"] \
        == "runtime_error"
