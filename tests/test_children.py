"""No child Python process reporter starts imports from DATA, and trace content writes nothing into DATA or the
caller's folder (issue 43, items 4 and 7).

A build or a validation started inside DATA (its working directory) must not import DATA/json.py, DATA/torch.py
and the like in any interpreter it starts: `python -c` and `python -m` put the working directory first on
`sys.path`, and an empty entry of PYTHONPATH means it too. Each module planted below writes a marker when it is
imported; no marker may appear. A reference (`reporter work`, the validator) or a kernel runs in a folder of its
own: what its code writes where it runs, or where $PWD says it was started, must land there.
"""

from __future__ import annotations

from dataclasses import dataclass
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
# Module-level code that writes a file where it runs and where $PWD says it was started.
WRITE = """
import os
open("written-relative.txt", "w").write("x")
open(os.path.join(os.environ.get("PWD", "."), "written-pwd.txt"), "w").write("x")
"""


def plant(folder: Path, marks: Path) -> None:
    """A module of each name in `PLANTED` in `folder`, writing `marks/NAME` when imported."""
    marks.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n", encoding="utf-8")


def marked(marks: Path) -> list[str]:
    return sorted(p.name for p in marks.iterdir())


def written(data: Path, caller: Path) -> list[str]:
    """The files trace content wrote anywhere in DATA or in the caller's working directory."""
    return sorted(str(p) for p in [*data.rglob("written-*"), *caller.glob("written-*")])


@dataclass(frozen=True)
class Started:
    data: Path
    caller: Path  # the caller's working directory: DATA itself, or a folder beside it
    marks: Path  # where the planted modules leave their markers


@pytest.fixture
def started(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Started:
    """DATA with the planted modules; the caller's working directory DATA (or, with the parameter "elsewhere", a folder
    beside it), $PWD saying so as a shell sets it; no PYTHONPATH (a caller's usual environment: the empty entry the
    children's PYTHONPATH then ended with meant the working directory)."""
    data = tmp_path / "data"
    data.mkdir()
    marks = tmp_path / "marks"
    plant(data, marks)
    caller = tmp_path / "caller" if getattr(request, "param", "in DATA") == "elsewhere" else data
    caller.mkdir(exist_ok=True)
    monkeypatch.chdir(caller)
    monkeypatch.setenv("PWD", str(caller))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    return Started(data, caller, marks)


def assert_isolated(s: Started) -> None:
    assert marked(s.marks) == []  # no child imported a module from DATA
    assert written(s.data, s.caller) == []  # trace content wrote nothing into DATA or the caller's folder


# --- The ncu report reader (the case the issue names) ------------------------------------------------------------

FAKE_NCU_REPORT = """
def load_report(path):
    return [[]]  # one range, no kernels
"""


def test_the_ncu_report_reader_imports_nothing_from_data(started: Started, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Nsight's Python report module present (this machine has none: a module of the same interface stands in)
    nsight = tmp_path / "nsight"
    nsight.mkdir()
    (nsight / "ncu_report.py").write_text(FAKE_NCU_REPORT, encoding="utf-8")
    monkeypatch.setenv("NCU_PYTHON_DIR", str(nsight))
    report = started.data / "run" / "profile.ncu-rep"
    report.parent.mkdir()
    report.write_bytes(b"not read by the stand-in")
    assert load_ncu(report, root=started.data) == []
    assert marked(started.marks) == []


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


@pytest.mark.parametrize("started", ["in DATA", "elsewhere"], indirect=True)
def test_reporter_work_counts_each_reference_isolated(started: Started) -> None:
    traces(started.data, honest=HONEST, writes=HONEST + WRITE)
    res = CliRunner().invoke(main, ["work", str(started.data), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "counted 2 references (0 failed)" in res.output
    assert_isolated(started)
    assert_counted(started.data, HONEST)
    assert_counted(started.data, HONEST + WRITE)


def test_the_validators_forked_workers_are_isolated(started: Started) -> None:
    from reporter.collect import collect
    from reporter.validate import validate_runs
    kernel_run(started.data, "correct", (KERNELS / "correct.py").read_text(), reference=(KERNELS / "reference.py").read_text() + WRITE)
    results = validate_runs(started.data, collect(started.data).runs, CPU_SETTINGS, device="cpu", jobs=1)
    result, cached = results["correct"]
    assert (result.verdict.value, cached) == ("correct", False), result.reason
    assert_isolated(started)


def test_a_fresh_worker_is_isolated(started: Started, tmp_path: Path) -> None:
    # the worker as ncu starts it, loading the correct fixture kernel
    from reporter.core.schema import CheckSettings, WorkerJob
    from reporter.validate.process import run_fresh
    job = WorkerJob((KERNELS / "reference.py").read_text() + WRITE, (KERNELS / "correct.py").read_text(), CheckSettings(), "cpu")
    out = run_fresh("compile", job, tmp_path / "job", 120, {})
    assert (out.verdict.value, out.reason) == ("correct", "compiled"), out.log
    assert_isolated(started)


def test_the_pythonpath_children_pass_on_has_no_working_directory_in_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.validate.process import package_env
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert package_env()["PYTHONPATH"] == str(ROOT)  # it was joined bare, ending in an empty entry: the working directory
    assert interpreter.pythonpath({"PYTHONPATH": "/opt/x::lib:./y:/opt/x"}) == f"{ROOT}:/opt/x"


def test_the_working_directory_named_in_full_is_left_out_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A blind planting survivor: a build run from inside DATA, with DATA on sys.path as an absolute entry, would
    # let a child import DATA/json.py despite -I.
    monkeypatch.chdir(tmp_path)
    assert interpreter.pythonpath({"PYTHONPATH": f"{tmp_path}:/opt/x:{tmp_path}/"}) == f"{ROOT}:/opt/x"


def test_a_helper_binary_dies_with_the_build_that_started_it(tmp_path: Path) -> None:
    # Issue 49, item 1: a killed build's Pagefind went on writing into the folder the next build cleans.
    import os
    import signal
    import subprocess
    import sys
    import time
    parent = subprocess.run([sys.executable, "-c", (
        "import os, signal, subprocess, sys; from reporter.core.interpreter import die_with_parent; "
        "c = subprocess.Popen(['sleep', '600'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent); "
        "print(c.pid, flush=True); "
        "os.kill(os.getpid(), signal.SIGKILL)")], capture_output=True, text=True, cwd=ROOT)
    assert parent.returncode == -signal.SIGKILL
    child = int(parent.stdout.split()[0])
    for _ in range(200):  # the kernel signals at once; the poll only waits for the zombie to be reaped by init
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as fh:
            if fh.read().split(") ")[-1].startswith("Z"):
                break
        time.sleep(0.05)
    else:
        raise AssertionError(f"sleep {child} outlived the process that started it")
