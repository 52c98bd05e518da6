"""The driver's side of validation without a worker: what a stored result records of its run, the order
kernels are queued in, and the build variables a check repeats (validate/recorder.py, validate/steps.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import minimal_trace, write_trace
from reporter.collect import collect
from reporter.collect.traces import RunRecord
from reporter.core.records import Environment, ValidationSettings, sha256_text
from reporter.core.schema import Verdict, WorkerJob, WorkerResult
from reporter.validate import buildcache, steps
from reporter.validate.recorder import Outcome, check_settings, make_items, to_result

KEY = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
KERNEL = "import torch\n__global__ void k() {}\nclass ModelNew(torch.nn.Module):\n    pass\n"
REFERENCE = f"# token {KEY}\nimport torch\nclass Model(torch.nn.Module):\n    pass\n"


def runs(data: Path, **precisions: str | None) -> dict[str, RunRecord]:
    for name, precision in precisions.items():
        doc = minimal_trace(precision=precision) if precision else minimal_trace()
        doc["reference_source"] = REFERENCE
        doc["final_kernel"] = {"source": KERNEL.replace("k()", f"k_{name}()")}
        write_trace(data, name, doc)
    return {r.run_id: r for r in collect(data).runs}


def stored(run: RunRecord, tmp_path: Path) -> Any:
    (item,) = make_items([(run, "key")], ValidationSettings(), "cpu", {}, tmp_path / "builds")
    out = WorkerResult(verdict=Verdict.CORRECT, reason="all 2 trials passed")
    return to_result(Outcome(item, out), run, ValidationSettings(), Environment(gpu="cpu"))


def test_a_result_hashes_the_sources_as_written_and_says_when_its_precision_was_assumed(tmp_path: Path) -> None:
    found = runs(tmp_path / "data", plain=None, half="fp16")
    assert KEY not in (found["plain"].trace.reference_source or "")  # the page's copy is redacted ...
    plain, half = stored(found["plain"], tmp_path), stored(found["half"], tmp_path)
    # ... the result's hashes are those of the sources the worker ran
    assert plain.reference_sha256 == sha256_text(REFERENCE)
    assert plain.kernel_sha256 == sha256_text(KERNEL.replace("k()", "k_plain()"))
    assert (plain.precision, plain.precision_assumed) == ("fp32", True)
    assert (half.precision, half.precision_assumed) == ("fp16", False)


def test_kernels_already_built_are_queued_first(tmp_path: Path) -> None:
    found = runs(tmp_path / "data", a=None, b=None, c=None)
    root = tmp_path / "builds"
    todo = [(found[name], name) for name in ("a", "b", "c")]
    keys = {it.run_id: it.build_key for it in make_items(todo, ValidationSettings(), "cpu", {}, root)}
    buildcache.mark_built(root, keys["c"], {}, 1.0, 1.0)
    assert [it.run_id for it in make_items(todo, ValidationSettings(), "cpu", {}, root)] == ["c", "a", "b"]


def test_a_check_repeats_the_builds_variables_and_architecture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, dict[str, str | None]]] = []

    def forked(server: object, mode: str, job: WorkerJob, job_dir: Path, timeout_s: float,
               env: dict[str, str | None], on_start: object = None) -> tuple[WorkerResult, float]:
        seen.append((mode, env))
        return WorkerResult(Verdict.CORRECT, "compiled"), 1.5
    monkeypatch.setattr(steps, "run_forked", forked)
    job = WorkerJob(REFERENCE, KERNEL, check_settings(ValidationSettings()), "cuda")
    root, tools = tmp_path / "builds", {"TORCH_CUDA_ARCH_LIST": "9.0+PTX"}
    built = steps.build(None, job, root, "k1", tmp_path / "job", 60.0, tools)  # type: ignore[arg-type]
    assert built.build == "accelerated" and built.cpu_s == 1.5
    assert built.build_env == {"TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES": "1", "REPORTER_LIGHT_HEADERS": "1",
                               "TORCH_CUDA_ARCH_LIST": "9.0+PTX", "REPORTER_BUILD": "accelerated"}
    marker = buildcache.built(root, "k1")
    assert marker is not None and marker.env == built.build_env
    steps.check(None, job, root, "k1", built.build_env, tmp_path / "job", 60.0, None)  # type: ignore[arg-type]
    (mode, env) = seen[-1]
    assert mode == "check" and env["TORCH_CUDA_ARCH_LIST"] == "9.0+PTX" and env["REPORTER_LIGHT_HEADERS"] == "1"
    assert env["TORCH_EXTENSIONS_DIR"] == str(root / "k1")
