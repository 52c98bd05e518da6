"""The command line, through click's test runner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conftest import DATA, write_trace
from reporter.cli import main


def test_build_summary_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["build", str(DATA), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("read 4 runs (0 unreadable), wrote 15 pages") and "flagged" in last and " s" in last
    assert (tmp_path / "site" / "index.html").is_file()


def test_strict_turns_bad_traces_into_a_failure(tmp_path: Path, sample_data: Path) -> None:
    write_trace(sample_data, "broken", '{"schema_version": 2}')
    runner = CliRunner()
    lax = runner.invoke(main, ["build", str(sample_data), str(tmp_path / "a"), "--no-validate"])
    assert lax.exit_code == 0
    assert "broken/trace.json: run: Field required" in lax.output
    strict = runner.invoke(main, ["build", str(sample_data), str(tmp_path / "b"), "--no-validate", "--strict"])
    assert strict.exit_code == 1
    assert (tmp_path / "b" / "runs" / "seed-000-l2-p10.html").is_file()  # nothing valid is dropped


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
    assert res.exit_code != 0 and "no CUDA device" in res.output


def test_tolerance_option_is_checked() -> None:
    res = CliRunner().invoke(main, ["validate", str(DATA), "--tol", "fp64=1"])
    assert res.exit_code == 2 and "precision must be one of" in res.output
    from reporter.cli import _settings
    s = _settings(None, None, None, False, ("fp32=1e-3",))
    assert s.atol["fp32"] == s.rtol["fp32"] == 1e-3 and s.atol["fp16"] == 1e-2
