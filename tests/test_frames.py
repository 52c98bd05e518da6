"""Tidy tables: `reporter.load`, `reporter.load_turns` and `reporter export`, checked against the run pages."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import DATA, ROOT, minimal_trace, write_trace
from reporter.cli import main
from reporter.collect import collect, find_traces
from reporter.frames import COLUMNS, TURN_COLUMNS, load_turns
from reporter.render import numbers
from reporter.tables import load


def test_import_reporter_stays_light_and_load_works() -> None:
    code = ("import sys, reporter; light = 'pandas' not in sys.modules and 'pydantic' not in sys.modules; "
            "print(light, reporter.load('data').shape)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"True ({len(find_traces(DATA))}, {len(COLUMNS)})"


def test_units_live_in_column_names_and_unknown_is_missing(tmp_path: Path) -> None:
    doc = minimal_trace(recorded_verdict="correct")
    doc["metrics"] = {"timing": {"unit": "us", "runtime": 21.3, "ref_runtime": 42.6, "speedup": 2.0}}
    doc["final_kernel"] = {"source": "x"}
    write_trace(tmp_path, "r1", doc)
    write_trace(tmp_path, "r2", minimal_trace(recorded_verdict=None))
    f = load(tmp_path).set_index("run_id")
    assert f.loc["r1", "recorded_kernel_ms"] == pytest.approx(0.0213)  # converted from the claimed µs
    assert (f.loc["r1", "recorded_speedup"], f.loc["r1", "speedup_source"]) == (2.0, "recorded")
    # its kernel "x" trips a static cheat check: suspect, so no speedup (checks.speedup_reported)
    assert f.loc["r1", "suspect"] and pd.isna(f.loc["r1", "speedup"])
    assert pd.isna(f.loc["r2", "speedup"]) and pd.isna(f.loc["r2", "recorded_correct"])
    assert f.loc["r2", "compiled"] is not pd.NA and not f.loc["r2", "compiled"]  # no submission: never "compiled"
    assert all(not re.search(r"(time|runtime)$", c) for c in f.columns)  # a time column always names its unit


def test_turns_one_row_per_call() -> None:
    t = load_turns(DATA)
    assert list(t.columns) == list(TURN_COLUMNS)
    one = t[t["run_id"] == "seed-000-l2-p10"]
    assert one["call"].notna().sum() == sum(len(x["calls"]) for x in
                                            json.loads((DATA / "seed-000-l2-p10" / "trace.json").read_text())["turns"])


def _page_value(html: str, label: str) -> str:
    hit = re.search(rf"<dt>{label}[^<]*(?:<span[^>]*>[^<]*</span>)?</dt><dd>(?:<span[^>]*>)?([^<]*)", html)  # a time's tooltip span
    assert hit, label
    return hit.group(1).strip()


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_export_csv_matches_the_run_pages(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["export", str(DATA), "--format", "csv"])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(io.StringIO(res.stdout))
    assert list(table.columns) == list(COLUMNS) and len(table) == len(find_traces(DATA))
    assert runner.invoke(main, ["build", str(DATA), str(tmp_path / "site"), "--no-validate"]).exit_code == 0
    slugs = {r.run_id: r.slug for r in collect(DATA).runs}
    for row in table.itertuples():
        html = (tmp_path / "site" / "runs" / f"{slugs[row.run_id]}.html").read_text()
        shown = _page_value(html, "speedup")
        if row.suspect:  # its pill is its status (the sample's planted timer patch), and its speedup is no result
            assert "v-suspect" in html and shown == "suspect: no speedup" and row.verdict == "correct"
            continue
        assert f"v-{row.verdict.replace('_', '-')}" in html
        if row.verdict == "incorrect":
            assert shown == "kernel incorrect"  # an incorrect kernel's speedup is no result on the page
        else:
            assert shown == numbers.speedup(None if pd.isna(row.speedup) else row.speedup)
        if row.speedup_source != "recorded" and pd.isna(row.kernel_ms):
            assert _page_value(html, "runtime") == numbers.DASH
        elif row.speedup_source != "recorded":
            # the card may show it in its group's unit (448 μs beside 49.2 μs): its tooltip holds the exact value
            exact = re.search(r'<dt>runtime[^<]*</dt><dd><span class="t" title="([^"]+) ms">', html)
            assert exact and float(exact.group(1)) == pytest.approx(row.kernel_ms), row.run_id


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_export_other_formats_have_the_same_columns(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"runs.{fmt}"
    res = CliRunner().invoke(main, ["export", str(DATA), "--format", fmt, "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_json(out, lines=True) if fmt == "jsonl" else pd.read_parquet(out)
    assert list(table.columns) == list(COLUMNS) and len(table) == len(find_traces(DATA))
    assert table.set_index("run_id").loc["seed-003-l2-p8", "revalidated_verdict"] == "incorrect"


def test_a_run_without_a_transcript_has_unknown_turns_not_zero(tmp_path: Path) -> None:
    write_trace(tmp_path, "imported", minimal_trace())  # no turns, no turns_used: a KernelBench import
    write_trace(tmp_path, "talked", {**minimal_trace(), "turns": [{"index": 0, "calls": []}]})
    table = load(tmp_path).set_index("run_id")
    assert pd.isna(table.loc["imported", "turns"]) and pd.isna(table.loc["imported", "tool_calls"])
    assert table.loc["talked", "turns"] == 1 and table.loc["talked", "tool_calls"] == 0
