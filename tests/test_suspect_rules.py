"""Every way a run becomes suspect is a rule that names its hack and an honest kernel it must not trip, and
docs/checks.md says both (issue 31: a flag is a claim about a person's work)."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT, validation_entry
from reporter.cli import main
from reporter.collect.transcript import CHECK as TRANSCRIPT_CHECK
from reporter.core.cheats import RULES as STATIC_RULES
from reporter.core.schema import DynamicCheck
from reporter.core.suspects import RULES


def test_every_error_level_finding_and_measured_check_is_a_named_rule() -> None:
    named = {r.check for r in RULES}
    static_errors = {check for check, severity, _, _ in STATIC_RULES if severity == "error"} | {"no_cuda_kernel", "no_extension"}
    expected = static_errors | {TRANSCRIPT_CHECK, "attribution.submission", "attribution.streams"} | {c.value for c in DynamicCheck}
    assert expected <= named, f"suspect sources without a rule: {sorted(expected - named)}"
    assert all(r.hack and r.honest for r in RULES)


def test_docs_list_each_rule_with_its_hack_and_honest_twin() -> None:
    doc = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    for r in RULES:
        assert f"| `{r.check}` | {r.source} | {r.hack} | {r.honest} |" in doc, r.check


def test_a_check_that_did_not_run_and_a_weak_check_show_wherever_the_run_is_listed(small_data: Path, tmp_path: Path) -> None:
    # seed 000 is correct; say its statistics check ran out of memory beside another process and that its problem's
    # comparison also accepts zeros even after strengthening.
    entry = validation_entry(small_data, "seed-000-l2-p10")
    doc = json.loads(entry.read_text())
    doc["dynamic_checks"][-1] = {"check": "input_statistics", "tripped": None, "detail": "not run: OutOfMemoryError: CUDA out of memory"}
    doc["check_strength"] = {"passes": ["zeros"], "equivalent": [], "strengthen": [], "still_pass": ["zeros"], "note": ""}
    entry.write_text(json.dumps(doc))
    site = tmp_path / "site"
    assert CliRunner().invoke(main, ["build", str(small_data), str(site), "--no-validate"]).exit_code == 0
    page = (site / "runs" / "seed-000-l2-p10.html").read_text()
    assert "⚠ checks incomplete</b> input_statistics did not run" in page
    assert "⚠ weak check</b> zeros would also pass this problem" in page
    row = next(r for r in csv.DictReader(io.StringIO((site / "runs.csv").read_text())) if r["run_id"] == "seed-000-l2-p10")
    assert (row["checks_incomplete"], row["incomplete_checks"], row["weak_check"]) == ("True", "input_statistics", "zeros")
    index = (site / "index.html").read_text()
    assert re.search(r"<td>2</td><td>1</td><td>1</td><td>\d+</td><td>", index)  # re-validated, incomplete, weak, flags
    grid = next((site / "grids").glob("*.html")).read_text()
    assert 'class="mark m-incomplete" title="checks incomplete: a suspect check did not run">◌</span>' in grid
    assert 'class="mark m-weak"' in grid
    board = next((site / "leaderboards").glob("*.html")).read_text()
    assert re.search(r"<td>0<span class=\"sub line\"[^>]*>1 weak check</span><span class=\"sub line\"[^>]*>1 checks incomplete</span></td>", board)


LABELS = {  # what a reader sees for each tripped dynamic check: written here, not read from the renderer
    "output_changes_after_return": "output changes after the call returned",
    "output_aliases_input": "output is an input's or the reference's memory",
    "output_reuses_earlier_output": "output reuses an earlier call's output",
    "input_statistics": "right on other input distributions",
    "harness_patched": "a timer, comparison or harness function replaced",
    "nondeterministic_output": "two calls on the same inputs differ beyond the tolerance",
    "l2_persistence": "persisting L2 set aside across the timer's flush",
}


@pytest.mark.parametrize("check", [c.value for c in DynamicCheck])
def test_every_dynamic_check_that_trips_makes_the_run_suspect_with_its_evidence(small_data: Path, tmp_path: Path,
                                                                                check: str) -> None:
    """By member (issue 47, item 3): a new check must be given its words here before it can ship."""
    entry = validation_entry(small_data, "seed-000-l2-p10")
    doc = json.loads(entry.read_text())
    evidence = f"evidence of {check}: 123 values"
    doc["dynamic_checks"] = [{"check": c.value, "tripped": c.value == check, "detail": evidence if c.value == check else "ok"}
                             for c in DynamicCheck]
    doc["statistics_trials"] = []
    entry.write_text(json.dumps(doc))
    site = tmp_path / "site"
    assert CliRunner().invoke(main, ["build", str(small_data), str(site), "--no-validate"]).exit_code == 0
    page = html.unescape((site / "runs" / "seed-000-l2-p10.html").read_text())
    assert LABELS[check] in page and evidence in page
    row = next(r for r in csv.DictReader(io.StringIO((site / "runs.csv").read_text())) if r["run_id"] == "seed-000-l2-p10")
    assert row["suspect"] == "True" and check in row["suspect_checks"], row
