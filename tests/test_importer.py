"""KernelBench run folders: both eval_results generations, kernels only, and the error cases."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT
from reporter.collect import collect
from reporter.collect.kernelbench import import_kernelbench
from reporter.collect.validation import load_validations
from reporter.render import build_site
from reporter.validate import cached_lookup

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


def test_site_from_imported_folder_shows_gpu_results() -> None:
    # examples/kernelbench was imported from run_new and validated on an H200 (results committed).
    data = ROOT / "examples" / "kernelbench"
    col = collect(data)
    assert not col.errors and len(col.runs) == 2
    for run in col.runs:
        hit = cached_lookup(data, run)
        assert hit is not None and hit[0].environment.gpu == "NVIDIA H200"
    relu = next(r for r in col.runs if r.run_id.endswith("l1-p2-s0"))
    assert relu.trace.run.recorded_verdict == "compile_error"
    assert cached_lookup(data, relu)[0].verdict == "correct"  # type: ignore[index]


def test_build_imported(tmp_path: Path) -> None:
    data = ROOT / "examples" / "kernelbench"
    col = collect(data)
    build_site(col, load_validations(data, col.runs)[0], data, tmp_path / "site")
    html = (tmp_path / "site" / "runs" / "kernelbench-run-new-l1-p1-s0.html").read_text()
    assert "no_cuda_kernel" in html and "torch_computation" in html  # the static checks caught cuBLAS
