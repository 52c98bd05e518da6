"""The fast Nsight round's ways out (`reporter.validate.profiling._profile_both`), with ncu and the worker faked: a
profile that is not correct, an export that wrote nothing and one that does not split each give no files and say why
in the log (the slower per-side round follows); one that splits gives the kernel the launches before the marker."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from reporter.core.schema import CheckSettings, Verdict, WorkerJob, WorkerResult
from reporter.validate import profiling

HEADER = ["ID", "Process ID", "Kernel Name", "gpu__time_duration.sum"]


def _export_text(names: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL).writerows([HEADER, ["", "", "", "ns"], *[[str(i), "1", n, "100"]
                                                                                 for i, n in enumerate(names)]])
    return "==PROF== Disconnected\n" + out.getvalue()


@pytest.fixture
def faked(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    state: dict[str, Any] = {"verdict": Verdict.CORRECT, "report": True, "export": _export_text(
        ["my_kernel_a", "my_kernel_b", "at::cuda::spin_kernel(long)", "aten_gemm"]), "said": []}

    def run_fresh(mode: str, job: WorkerJob, job_dir: Path, *args: Any) -> WorkerResult:
        job_dir.mkdir(parents=True, exist_ok=True)
        if state["report"]:
            (job_dir / "profile.ncu-rep").write_bytes(b"report")
        return WorkerResult(state["verdict"], reason="faked worker")

    def export(ncu: str, report: Path, csv_path: Path) -> bool:
        csv_path.write_text(state["export"], encoding="utf-8")
        return bool(state["export"])
    monkeypatch.setattr(profiling.shutil, "which", lambda name: "/fake/ncu")
    monkeypatch.setattr(profiling, "run_fresh", run_fresh)
    monkeypatch.setattr(profiling, "_export", export)
    monkeypatch.setattr(profiling.log, "warning", lambda msg, *a: state["said"].append(msg % a if a else msg))
    return state


def _run(tmp_path: Path) -> dict[str, Path]:
    job = WorkerJob(reference="", kernel="", settings=CheckSettings(), device="cuda")
    return profiling._profile_both(job, tmp_path / "builds", "key", {}, tmp_path / "work", 60.0)


def test_a_split_export_gives_the_kernel_the_launches_before_the_marker(faked: dict[str, Any], tmp_path: Path) -> None:
    files = _run(tmp_path)
    assert sorted(files) == ["kernel", "reference"] and not faked["said"]
    kernel, reference = (files[r].read_text(encoding="utf-8") for r in ("kernel", "reference"))
    assert "my_kernel_a" in kernel and "my_kernel_b" in kernel and "aten_gemm" not in kernel
    assert "aten_gemm" in reference and "my_kernel" not in reference and "spin_kernel" not in reference + kernel


def test_a_profile_that_did_not_pass_gives_nothing_and_says_so(faked: dict[str, Any], tmp_path: Path) -> None:
    faked["verdict"] = Verdict.CRASHED  # its report file is there: a failed profile's numbers are not used
    assert _run(tmp_path) == {}
    assert len(faked["said"]) == 1 and "crashed" in faked["said"][0] and "faked worker" in faked["said"][0]


def test_a_profile_without_a_report_gives_nothing_and_says_so(faked: dict[str, Any], tmp_path: Path) -> None:
    faked["report"] = False
    assert _run(tmp_path) == {}
    assert len(faked["said"]) == 1 and "no report" in faked["said"][0]


def test_an_export_that_wrote_nothing_gives_nothing_and_says_so(faked: dict[str, Any], tmp_path: Path) -> None:
    faked["export"] = ""
    assert _run(tmp_path) == {}
    assert len(faked["said"]) == 1 and "exported nothing" in faked["said"][0]


def test_an_export_without_one_marker_gives_nothing_and_says_so(faked: dict[str, Any], tmp_path: Path) -> None:
    faked["export"] = _export_text(["my_kernel_a", "aten_gemm"])
    assert _run(tmp_path) == {}
    assert len(faked["said"]) == 1 and "0 found" in faked["said"][0]
