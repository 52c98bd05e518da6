"""One run's read, redaction and rendering within a CPU-time and memory budget (core/limits.py RUN_CPU_S,
RUN_MEMORY_BYTES): a run over it becomes one message naming the budget, and the rest of the site builds."""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import pytest

from conftest import minimal_trace, write_trace
from reporter.render import pagemaker
from reporter.render.incremental import build_incremental


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    write_trace(data, "hog", minimal_trace(problem_id=1))
    write_trace(data, "fine", minimal_trace(problem_id=2))
    return data


def _hogging(monkeypatch: pytest.MonkeyPatch, hog: Any) -> None:
    """The run named "hog" does `hog()` while its cached result is looked up (inside its budget); others do not."""
    lookup = pagemaker._lookup

    def hogging(data: Path, r: Any, problems: list[Any]) -> Any:
        if r.run_id == "hog":
            hog()
        return lookup(data, r, problems)
    monkeypatch.setattr(pagemaker, "_lookup", hogging)


def test_a_run_over_its_cpu_budget_is_one_message_and_the_rest_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, site = _data(tmp_path), tmp_path / "site"
    hog = (data / "hog" / "trace.json").read_text()
    (data / "hog" / "trace.json").unlink()
    build_incremental(data, site, jobs=1)  # the other run built first: what a process imports once is not in the budget
    (data / "hog" / "trace.json").write_text(hog)
    start = _cpu()

    def spin() -> None:  # Python work that would go on for 30 CPU seconds: the budget stops it long before
        while _cpu() - start < 30:
            pass
    _hogging(monkeypatch, spin)
    monkeypatch.setenv("REPORTER_RUN_CPU_S", "0.5")
    report = build_incremental(data, site, jobs=1)
    assert _cpu() - start < 20
    assert len(report.errors) == 1, report.errors
    [error] = report.errors
    assert error.path.endswith("hog/trace.json") and error.field == "(budget)"
    assert "more than its 0.5 CPU seconds (RUN_CPU_S" in error.message and "REPORTER_RUN_CPU_S" in error.message
    assert [d.run_id for d in report.digests] == ["fine"] and (site / "runs" / "fine.html").is_file()
    assert not (site / "runs" / "hog.html").exists()
    monkeypatch.undo()  # the run's cost back to normal: the next build reads it again and builds its page
    again = build_incremental(data, site, jobs=1)
    assert not again.errors and (site / "runs" / "hog.html").is_file()


def test_a_run_over_its_memory_budget_is_one_message_and_the_rest_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def hoard() -> None:  # 64 MiB a step, far past the 256 MiB budget (and stopped at 8 GiB if no budget stops it)
        kept = [bytearray(64 << 20) for _ in range(128)]
        assert not kept, "no budget stopped the run"
    _hogging(monkeypatch, hoard)
    monkeypatch.setenv("REPORTER_RUN_MEMORY_MB", "256")
    site = tmp_path / "site"
    report = build_incremental(_data(tmp_path), site, jobs=1)
    [error] = report.errors
    assert error.field == "(budget)" and "more than its 256 MiB of memory (RUN_MEMORY_BYTES" in error.message
    assert "REPORTER_RUN_MEMORY_MB" in error.message
    assert [d.run_id for d in report.digests] == ["fine"] and (site / "runs" / "fine.html").is_file()
    assert json.loads((site / "build-info.json").read_text())["pages"] > 1


def test_budget_values_come_from_the_environment_or_the_named_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.core import limits
    monkeypatch.delenv("REPORTER_RUN_CPU_S", raising=False)
    monkeypatch.delenv("REPORTER_RUN_MEMORY_MB", raising=False)
    assert limits.run_budget() == (limits.RUN_CPU_S, limits.RUN_MEMORY_BYTES)
    monkeypatch.setenv("REPORTER_RUN_CPU_S", "2.5")
    monkeypatch.setenv("REPORTER_RUN_MEMORY_MB", "100")
    assert limits.run_budget() == (2.5, 100 << 20)
    for bad in ("", "x", "-1", "0", "inf", "nan"):
        monkeypatch.setenv("REPORTER_RUN_CPU_S", bad)
        assert limits.run_budget()[0] == limits.RUN_CPU_S
