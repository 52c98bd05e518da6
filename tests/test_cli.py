"""The command line, through click's test runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, validation_entry, write_trace
from reporter.cli import main
from reporter.collect import collect
from reporter.core.errors import CacheError, ConfigError, NoDeviceError, PublishError, StrictError


def test_build_summary_line(tmp_path: Path, small_data: Path) -> None:
    res = CliRunner().invoke(main, ["build", str(small_data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    runs = len(collect(small_data).runs)
    pages = len(list((tmp_path / "site").rglob("*.html")))
    assert last.startswith(f"read {runs} runs (0 unreadable), wrote {pages} pages to ") and " s" in last
    flagged = sum(len(r.flags) for r in collect(small_data).runs)
    assert f"flagged {flagged} recorded values" in last and flagged > 0


def test_strict_turns_bad_traces_into_a_failure(tmp_path: Path, small_data: Path) -> None:
    write_trace(small_data, "broken", '{"schema_version": 2}')
    runner = CliRunner()
    lax = runner.invoke(main, ["build", str(small_data), str(tmp_path / "a"), "--no-validate"])
    assert lax.exit_code == 0
    assert "broken/trace.json: run: Field required" in lax.output
    assert (tmp_path / "a" / "runs" / "seed-000-l2-p10.html").is_file()  # nothing valid is dropped
    before = {p: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    strict = runner.invoke(main, ["build", str(small_data), str(tmp_path / "a"), "--no-validate", "--strict"])
    assert strict.exit_code == StrictError.exit_code == 3, strict.output
    assert "left as it was" in strict.output
    # --strict leaves the previous site exactly as it was, and no temporary folder behind
    assert {p: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "data"]


def test_strict_counts_an_unreadable_cache_entry(tmp_path: Path, small_data: Path) -> None:
    # No trace is bad: the only problem is a cache entry, which must be named, counted and fail --strict.
    entry = validation_entry(small_data, "seed-000-l2-p10")
    entry.write_text("{not json", encoding="utf-8")
    runner = CliRunner()
    lax = runner.invoke(main, ["build", str(small_data), str(tmp_path / "a"), "--no-validate"])
    assert lax.exit_code == 0, lax.output
    assert f"warning: could not read {entry}: (json): not valid JSON" in lax.output
    assert "1 file not used" in lax.output
    strict = runner.invoke(main, ["build", str(small_data), str(tmp_path / "b"), "--no-validate", "--strict"])
    assert strict.exit_code == 3, strict.output


def test_strict_passes_a_clean_build(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["build", str(DATA), str(tmp_path / "site"), "--no-validate", "--strict"])
    assert res.exit_code == 0, res.output


def test_quiet_and_verbose(tmp_path: Path, small_data: Path) -> None:
    write_trace(small_data, "broken", '{"schema_version": 2}')
    runner = CliRunner()
    quiet = runner.invoke(main, ["-q", "build", str(small_data), str(tmp_path / "a")])
    assert "no CUDA device" not in quiet.output and "rendering pages" not in quiet.output
    assert "warning: could not read" in quiet.output  # warnings are never hidden
    normal = runner.invoke(main, ["build", str(small_data), str(tmp_path / "b")])
    assert "no CUDA device here" in normal.output


@pytest.mark.parametrize("kind", ["usage", "config", "publish", "cache", "device"])
def test_exit_code_per_kind(kind: str, tmp_path: Path, sample_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args, code = {
        "usage": (["build"], 2),  # no DATA, no [tool.reporter] to take it from
        "config": (["--config", str(tmp_path / "bad.toml"), "schema"], ConfigError.exit_code),
        "publish": (["publish", str(sample_data)], PublishError.exit_code),
        "cache": (["cache", "check", str(sample_data)], CacheError.exit_code),
        "device": (["validate", str(sample_data)], NoDeviceError.exit_code),
    }[kind]
    (tmp_path / "bad.toml").write_text("[tool.reporter]\ndata = 3\n")
    (sample_data / "validation" / "status.json").unlink(missing_ok=True)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == code, res.output
    assert isinstance(res.exception, SystemExit) and "Traceback" not in res.output
    assert len({2, ConfigError.exit_code, PublishError.exit_code, CacheError.exit_code, NoDeviceError.exit_code,
                StrictError.exit_code}) == 5  # config shares click's usage code; the rest are distinct


def test_schema_is_json(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["schema"])
    schema = json.loads(res.output)
    assert schema["title"] == "Trace" and "schema_version" in schema["required"]


def test_help_reads_well() -> None:
    res = CliRunner().invoke(main, ["--help"])
    assert res.exit_code == 0
    for cmd in ("build", "validate", "publish", "schema", "import", "init-workflow"):
        assert cmd in res.output


def test_validate_without_gpu_says_so() -> None:
    res = CliRunner().invoke(main, ["validate", str(DATA)])
    assert res.exit_code == NoDeviceError.exit_code and "no CUDA device" in res.output


def test_tolerance_option_is_checked() -> None:
    res = CliRunner().invoke(main, ["validate", str(DATA), "--tol", "fp64=1"])
    assert res.exit_code == 2 and "precision must be one of" in res.output
    res = CliRunner().invoke(main, ["validate", str(DATA), "--tol", "fp32=x"])
    assert res.exit_code == 2 and "expected PRECISION=NUMBER" in res.output


def _without_numpy(tmp_path: Path) -> dict[str, str]:
    """An environment where `import numpy` fails, like CI's fresh install (torch's CPU wheel does not need it)."""
    import os
    fake = tmp_path / "no_numpy" / "numpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError('No module named numpy', name='numpy')\n")
    root = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), root])}


def test_build_prints_no_numpy_warning(tmp_path: Path) -> None:
    # pandas (the runs table behind leaderboards and runs.csv) depends on numpy, so a build always has it;
    # what must hold is that no NumPy warning reaches the user.
    import shutil
    import subprocess
    import sys
    env = dict(os.environ)
    data = tmp_path / "data"  # one sample run: the build imports what any build imports
    shutil.copytree(DATA / "seed-000-l2-p10", data / "seed-000-l2-p10")
    proc = subprocess.run([sys.executable, "-m", "reporter.cli", "build", str(data), str(tmp_path / "site")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "NumPy" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr


def test_torch_imports_quietly_without_numpy(tmp_path: Path) -> None:
    import subprocess
    import sys

    import pytest
    pytest.importorskip("torch")
    code = "from reporter.validate.runner import import_torch; import_torch(); import reporter.validate.worker"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_without_numpy(tmp_path), timeout=300)
    assert proc.returncode == 0 and "NumPy" not in proc.stderr, proc.stderr


def test_the_sample_data_s_validation_cache_matches_its_manifest() -> None:
    # The committed results are what a machine without a GPU renders: an entry the manifest lists with no file
    # beside it (a result removed by hand, its entry left) makes `cache check` fail on a fresh clone.
    res = CliRunner().invoke(main, ["cache", "check", str(DATA)])
    assert res.exit_code == 0, res.output
    assert "every entry matches the manifest" in res.output


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_works_before_or_after_the_command_s_name(tmp_path: Path, small_data: Path, where: str) -> None:
    args = ["build", str(small_data), str(tmp_path / "site"), "--no-validate"]
    res = CliRunner().invoke(main, ["-q", *args] if where == "before" else [*args, "-q"])
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("read 3 runs"), res.output


def test_validate_checks_every_run_or_only_those_named(small_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run filter, with the GPU and the validator stood in for: no --run is every run, --run names one, an unknown
    id is a message (a filter that dropped every run would validate nothing and say nothing)."""
    # patched where they live: the package hands them out lazily (setting them on the package would leave a copy
    # there after the test, and hide every later patch of the modules from the command)
    from reporter.validate import machine, runner, work
    asked: list[list[str]] = []
    monkeypatch.setattr(machine, "gpu_available", lambda: True)
    monkeypatch.setattr(machine, "torch_installed", lambda: True)
    monkeypatch.setattr(work, "count_missing", lambda data, runs: "counted")
    monkeypatch.setattr(runner, "validate_runs",
                        lambda data, runs, *a, **k: asked.append(sorted(r.run_id for r in runs)) or {})
    every = sorted(p.parent.relative_to(small_data).as_posix() for p in small_data.rglob("trace.json"))
    assert CliRunner().invoke(main, ["validate", str(small_data)]).exit_code == 0
    assert CliRunner().invoke(main, ["validate", str(small_data), "--run", every[0]]).exit_code == 0
    res = CliRunner().invoke(main, ["validate", str(small_data), "--run", "no-such-run"])
    assert res.exit_code != 0 and "no run with id no-such-run" in res.output
    assert asked == [every, [every[0]]]
