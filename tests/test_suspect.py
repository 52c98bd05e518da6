"""Static cheat findings count: scanned at collect time (no GPU), suspect unless a reviewer cleared the kernel."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT, minimal_trace, write_trace
from reporter.collect import collect
from reporter.core.records import sha256_text

KB = ROOT / "examples" / "kernelbench"
MATMUL = "kernelbench-run_new/l1-p1-s0"  # plain torch.matmul, no __global__


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    dest = tmp_path / "kb"
    shutil.copytree(KB, dest)
    return dest


def test_findings_come_from_collect_without_validation(kb: Path) -> None:
    shutil.rmtree(kb / "validation")  # no GPU result at all
    runs = {r.run_id: r for r in collect(kb).runs}
    assert {f.check for f in runs[MATMUL].findings} >= {"no_cuda_kernel", "no_extension", "torch_computation"}
    assert runs[MATMUL].suspect
    assert not runs["kernelbench-run_new/l1-p2-s0"].suspect


def test_warnings_alone_do_not_make_a_run_suspect(tmp_path: Path) -> None:
    doc = minimal_trace()
    doc["final_kernel"] = {"source": "from torch.utils.cpp_extension import load_inline\n__global__ void k() {}\n"
                                     "try:\n    pass\nexcept Exception:\n    pass\n"}
    write_trace(tmp_path, "warned", doc)
    (run,) = collect(tmp_path).runs
    assert run.findings and all(f.severity == "warn" for f in run.findings) and not run.suspect


def clearance(run: str, sha: str, **extra: str) -> str:
    fields = {"run": run, "kernel_sha256": sha, "reviewer": "ada", "note": "cuBLAS on purpose", **extra}
    return "[[cleared]]\n" + "".join(f'{k} = "{v}"\n' for k, v in fields.items())


def test_a_reviewer_clears_exactly_this_kernel(kb: Path) -> None:
    run = next(r for r in collect(kb).runs if r.run_id == MATMUL)
    (kb / "reviews.toml").write_text(clearance(MATMUL, run.kernel_hash or ""))
    col = collect(kb)
    run = next(r for r in col.runs if r.run_id == MATMUL)
    assert not col.errors and col.reviews is not None and not col.reviews.errors and not run.suspect and run.clearance is not None and run.clearance.reviewer == "ada"


def test_a_changed_kernel_is_not_silently_cleared(kb: Path) -> None:
    (kb / "reviews.toml").write_text(clearance(MATMUL, sha256_text("an older kernel")))
    run = next(r for r in collect(kb).runs if r.run_id == MATMUL)
    assert run.suspect and run.clearance is None
    assert "changed after the review" in run.review_problem


@pytest.mark.parametrize("text, field, words", [
    ("[[cleared]\nrun = 1", "(toml)", "not valid TOML"),
    ('cleared = "yes"', "cleared", "array of tables"),
    (clearance(MATMUL, "abc123"), "cleared[0].kernel_sha256", "64 lowercase hex"),
    (clearance(MATMUL, "0" * 64, reviewer=""), "cleared[0].reviewer", "non-empty"),
    (clearance(MATMUL, "0" * 64, when="today"), "cleared[0].when", "unknown field"),
    (clearance("no/such/run", "0" * 64), "cleared[0].run", "no run 'no/such/run'"),
    ("[other]\nx = 1\n", "other", "unknown table"),
])
def test_a_bad_reviews_file_is_a_message_naming_file_and_field(kb: Path, text: str, field: str, words: str) -> None:
    (kb / "reviews.toml").write_text(text)
    col = collect(kb)  # never raises
    assert not col.errors and col.reviews is not None  # the traces themselves are fine
    (err,) = col.reviews.errors
    assert err.field == field and words in err.message
    assert next(r for r in col.runs if r.run_id == MATMUL).suspect  # nothing unreadable clears anything


def test_reviews_file_must_be_a_regular_file(kb: Path) -> None:
    (kb / "reviews.toml").mkdir()
    col = collect(kb)
    assert col.reviews is not None and any(e.path.endswith("reviews.toml") and "regular file" in e.message for e in col.reviews.errors)


def test_a_bad_reviews_file_is_reported_by_build_not_counted_as_a_trace(kb: Path, tmp_path: Path) -> None:
    from reporter.build import build
    from reporter.core.records import ValidationSettings
    (kb / "reviews.toml").write_text("[[cleared]\n")
    summary = build(kb, tmp_path / "site", ValidationSettings(), validate=False)
    assert summary.unreadable == 0
    (problem,) = [p for p in summary.problems if p.path.endswith("reviews.toml")]
    assert problem.kind == "config" and problem.field == "(toml)"
