"""No recorded value costs the site: numbers the runs table cannot hold are flagged and left out of it,
and a recorded runtime of 0 beside a cached re-validation is no division by zero."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from click.testing import CliRunner

from conftest import minimal_trace, write_trace
from reporter.cli import main
from reporter.core import cache
from reporter.core.records import Environment, ValidationResult, ValidationSettings, sha256_text
from reporter.core.schema import BasisStats, TimingFigures
from reporter.validate import manifest


def build(data: Path, site: Path) -> str:
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 0, res.output
    return res.output


def rows(site: Path) -> dict[str, dict[str, str]]:
    return {r["run_id"]: r for r in csv.DictReader(io.StringIO((site / "runs.csv").read_text()))}


def test_an_integer_beyond_the_table_is_flagged_and_the_site_builds(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "good", minimal_trace())
    write_trace(data, "huge", minimal_trace(tokens_total=10**39, max_turns=2**63, model="big"))
    build(data, tmp_path / "site")
    table = rows(tmp_path / "site")
    assert table["huge"]["tokens_total"] == "" and table["huge"]["max_turns"] == ""  # unknown in the table, never wrapped
    assert table["huge"]["flag_fields"] == "run.max_turns; run.tokens_total" and table["good"]["tokens_total"] == ""
    page = next((tmp_path / "site" / "runs").glob("huge*.html")).read_text()
    assert "1,000,000,000,000,000,000,000,000,000,000,000,000,000" in page  # shown as recorded
    assert "beyond the largest integer the tables hold" in page


def test_a_recorded_runtime_of_0_beside_a_cached_result(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "good", minimal_trace())
    doc = minimal_trace(recorded_gpu="Test GPU", model="zero")
    doc["final_kernel"], doc["reference_source"] = {"source": "kernel"}, "reference"
    doc["metrics"] = {"timing": {"unit": "ms", "runtime": 0, "ref_runtime": 0.5, "speedup": 2.0}}
    write_trace(data, "zero", doc)
    wall = BasisStats(median_ms=0.25, min_ms=0.2, max_ms=0.3, n=30)
    result = ValidationResult(kernel_sha256=sha256_text("kernel"), reference_sha256=sha256_text("reference"),
                              settings=ValidationSettings(), environment=Environment(gpu="Test GPU"), verdict="correct",  # type: ignore[arg-type]
                              measured_at="2030-01-01T00:00:00Z", kernel_timing=TimingFigures(wall=wall),
                              reference_timing=TimingFigures(wall=wall))
    manifest.store(data, cache.content_key("kernel", "reference"), result)
    build(data, tmp_path / "site")
    assert set(rows(tmp_path / "site")) == {"good", "zero"}
    assert "re-validated" in next((tmp_path / "site" / "runs").glob("zero*.html")).read_text()
