"""Nothing outside DATA (or the import source) is opened: every open of a build and an import is recorded
under patched `open` / `os.open` (which `Path.read_bytes` and `read_text` go through), over a DATA folder
whose traces, attachments, cache entries and config files are links out of it, FIFOs and /dev/zero."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, hang_guard, minimal_trace, write_trace
from reporter.build import build
from reporter.collect.kernelbench import import_kernelbench
from reporter.core import cache
from reporter.core.records import ValidationSettings

KB = Path(__file__).resolve().parent / "fixtures" / "kernelbench"
sys.path.insert(0, str(ROOT / "benchmarks"))
from fuzz_hostile import Opens  # noqa: E402 - the recorder the fuzz benchmark counts outside opens with


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    with hang_guard(300):
        yield


@pytest.fixture
def opened() -> Iterator[list[str]]:
    """Every path opened from now on (resolved), by `open`, `io.open`, `os.open` and so by pathlib's reads."""
    recorder = Opens()
    try:
        with recorder.recording() as paths:
            yield paths
    finally:
        recorder.close()


def outside_of(paths: list[str], *allowed: Path) -> list[str]:
    return Opens.outside(paths, *allowed)


def hostile_data(tmp_path: Path) -> tuple[Path, Path]:
    """DATA with one good run and every kind of link out, FIFO and device as an input file."""
    data, out = tmp_path / "data", tmp_path / "outside"
    out.mkdir()
    for name in ("trace.json", "k.csv", "reviews.toml", "allow.txt", "result.json"):
        (out / name).write_text(json.dumps(minimal_trace(model="outside")) if name == "trace.json" else "OUTSIDE\n")
    write_trace(data, "good", minimal_trace())
    (data / "linked").mkdir()
    (data / "linked" / "trace.json").symlink_to(out / "trace.json")
    doc = minimal_trace(model="attached")
    doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": p} for p in ("k.csv", "../../outside/k.csv",
                                                                                         "fifo.csv", "zero.csv")]
    doc["final_kernel"] = {"source": "kernel"}
    doc["reference_source"] = "ref"
    write_trace(data, "att", doc)
    (data / "att" / "k.csv").symlink_to(out / "k.csv")
    os.mkfifo(data / "att" / "fifo.csv")
    (data / "att" / "zero.csv").symlink_to("/dev/zero")
    (data / "reviews.toml").symlink_to(out / "reviews.toml")
    os.mkfifo(data / "redact-allow.txt")
    (data / "fifo").mkdir()
    os.mkfifo(data / "fifo" / "trace.json")
    (data / "zero").mkdir()
    (data / "zero" / "trace.json").symlink_to("/dev/zero")
    entry = cache.entry_dir(data, cache.content_key(doc["final_kernel"]["source"], "ref"))
    entry.mkdir(parents=True)
    (entry / "x.json").symlink_to(out / "result.json")
    os.mkfifo(entry / "y.json")
    return data, out


def test_a_build_opens_nothing_outside_data(tmp_path: Path, opened: list[str]) -> None:
    data, out = hostile_data(tmp_path)
    site = tmp_path / "built" / "site"
    opened.clear()  # what the setup wrote is not the build's
    for _ in range(2):  # the first build, then a rebuild that checks every input's signature
        summary = build(data, site, ValidationSettings(), validate=False, jobs=1)
        assert summary.runs == 2 and summary.committed  # good and att; linked, fifo and zero are refused
        # a run's memory budget reads this process's own size (render/budget.py), nothing of DATA's
        seen = [p for p in opened if p != f"/proc/{os.getpid()}/statm"]
        assert not [p for p in seen if p.startswith(str(out))]
        assert outside_of(seen, data, site.parent) == []
        assert not any(p.startswith(("/dev/zero", "/proc")) for p in seen)
    assert not [p for p in site.rglob("*") if p.is_file() and b"OUTSIDE" in p.read_bytes()]
    assert "linked" not in json.loads((site / ".reporter-status.json").read_text())["runs"]


def test_an_import_opens_nothing_outside_its_source_and_out(tmp_path: Path, opened: list[str]) -> None:
    run, outside = tmp_path / "run_new", tmp_path / "outside"
    shutil.copytree(KB / "run_new", run)
    shutil.copytree(KB / "problems", tmp_path / "problems")
    outside.mkdir()
    for name in ("level_1_problem_1_sample_0_kernel.py", "level_1_problem_1_sample_0_prompt.txt", "eval_results.json",
                 "generation_config.yaml"):
        (outside / name).write_text("OUTSIDE\n")
        (run / name).unlink()
        (run / name).symlink_to(outside / name)
    (run / "level_1_problem_3_sample_0_kernel.py").symlink_to("/proc/self/environ")
    opened.clear()
    rep = import_kernelbench(run, tmp_path / "problems", tmp_path / "out")
    assert [p.parent.name for p in rep.written] == ["l1-p2-s0"]
    assert outside_of(opened, run, tmp_path / "problems", tmp_path / "out") == []
    assert "OUTSIDE" not in (tmp_path / "out" / "kernelbench-run_new" / "l1-p2-s0" / "trace.json").read_text()
