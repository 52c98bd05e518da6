"""No child Python process reporter starts imports from DATA (issue 43, item 4).

A build or a validation started inside DATA (its working directory) must not import DATA/json.py, DATA/torch.py
and the like in any interpreter it starts: `python -c` and `python -m` put the working directory first on
`sys.path`, and an empty entry of PYTHONPATH means it too. Each module planted below writes a marker when it is
imported; no marker may appear.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import KERNELS, ROOT, kernel_run, minimal_trace, write_trace
from reporter.cli import main
from reporter.collect.ncu import load_ncu
from reporter.core import interpreter
from reporter.core.cache import read_work
from reporter.core.records import ValidationSettings

# Modules an interpreter imports at start (sitecustomize, usercustomize) or that every child imports (json, torch,
# reporter itself): planted in DATA, each would run DATA's code in the child.
PLANTED = ("json", "torch", "reporter", "sitecustomize", "usercustomize")
CPU_SETTINGS = ValidationSettings(nominal_trials=1, jitter_trials=1, perf_trials=1, warmup=1, timeout_s=120,
                                  time_cap_s=0.05)

# A reference whose count is known by hand: a (8, 16) x (16, 4) fp32 matmul.
HONEST = """
import torch
class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
def get_inputs():
    return [torch.rand(8, 16), torch.rand(16, 4)]
def get_init_inputs():
    return []
"""

def plant(folder: Path, marks: Path) -> None:
    """A module of each name in `PLANTED` in `folder`, writing `marks/NAME` when imported."""
    marks.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n", encoding="utf-8")


def marked(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


@pytest.fixture
def inside_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """DATA with the planted modules, as the working directory; no PYTHONPATH (a caller's usual environment: the
    empty entry the children's PYTHONPATH then ended with meant the working directory). (DATA, the markers' folder)."""
    data = tmp_path / "data"
    data.mkdir()
    marks = tmp_path / "marks"
    plant(data, marks)
    monkeypatch.chdir(data)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return data, marks


# --- The ncu report reader (the case the issue names) ------------------------------------------------------------

FAKE_NCU_REPORT = """
def load_report(path):
    return [[]]  # one range, no kernels
"""


def test_the_ncu_report_reader_imports_nothing_from_data(inside_data: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Nsight's Python report module present (this machine has none: a module of the same interface stands in)
    data, marks = inside_data
    nsight = tmp_path / "nsight"
    nsight.mkdir()
    (nsight / "ncu_report.py").write_text(FAKE_NCU_REPORT, encoding="utf-8")
    monkeypatch.setenv("NCU_PYTHON_DIR", str(nsight))
    report = data / "run" / "profile.ncu-rep"
    report.parent.mkdir()
    report.write_bytes(b"not read by the stand-in")
    assert load_ncu(report, root=data) == []
    assert marked(marks) == []


# --- The work counter (`reporter work`), the validator's forked worker and its fresh one (the ncu path) -----------

def traces(data: Path, **refs: str) -> None:
    for i, (name, ref) in enumerate(refs.items(), start=1):
        write_trace(data, name, {**minimal_trace(problem_file=f"{i}_{name}.py", problem_id=i), "reference_source": ref})


def assert_counted(data: Path, ref: str) -> None:
    """The count of `HONEST`'s forward (also with code that writes around it) in DATA, as worked out by hand."""
    work = read_work(data, ref)  # where a build reads it
    assert work is not None and (work.how.value, work.why) == ("meta", "")
    assert (work.flop_counter_total, work.flops) == (2 * 8 * 16 * 4, 2 * 8 * 16 * 4)
    assert {t.role: (t.shape, t.dtype, t.moved) for t in work.tensors} == {
        "input 0": ((8, 16), "fp32", 8 * 16 * 4), "input 1": ((16, 4), "fp32", 16 * 4 * 4), "output 0": ((8, 4), "fp32", 8 * 4 * 4)}


def validated(data: Path, reference: str) -> None:
    """The fixture kernel that is correct, checked on CPU against `reference` by forked workers: correct."""
    from reporter.collect import collect
    from reporter.validate import validate_runs
    kernel_run(data, "correct", (KERNELS / "correct.py").read_text(), reference=reference)
    results = validate_runs(data, collect(data).runs, CPU_SETTINGS, device="cpu", jobs=1)
    result, cached = results["correct"]
    assert (result.verdict.value, cached) == ("correct", False), result.reason


def compiled_fresh(job_dir: Path, reference: str) -> None:
    """The worker in a fresh interpreter (as under ncu), loading the correct fixture kernel: compiled."""
    from reporter.core.schema import CheckSettings, WorkerJob
    from reporter.validate.process import run_fresh
    job = WorkerJob(reference, (KERNELS / "correct.py").read_text(), CheckSettings(), "cpu")
    out = run_fresh("compile", job, job_dir, 120, {})
    assert (out.verdict.value, out.reason) == ("correct", "compiled"), out.log


def test_reporter_work_imports_nothing_from_data(inside_data: tuple[Path, Path]) -> None:
    data, marks = inside_data
    traces(data, honest=HONEST)
    res = CliRunner().invoke(main, ["work", str(data), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert marked(marks) == []
    assert_counted(data, HONEST)


def test_the_validators_forked_workers_import_nothing_from_data(inside_data: tuple[Path, Path]) -> None:
    data, marks = inside_data
    validated(data, (KERNELS / "reference.py").read_text())
    assert marked(marks) == []


def test_a_fresh_worker_imports_nothing_from_data(inside_data: tuple[Path, Path], tmp_path: Path) -> None:
    _, marks = inside_data
    compiled_fresh(tmp_path / "job", (KERNELS / "reference.py").read_text())
    assert marked(marks) == []


def test_the_pythonpath_children_pass_on_has_no_working_directory_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.validate.process import package_env
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert package_env()["PYTHONPATH"] == str(ROOT)  # it was joined bare, ending in an empty entry: the working directory
    assert interpreter.pythonpath({"PYTHONPATH": "/opt/x::lib:./y:/opt/x"}) == f"{ROOT}:/opt/x"
