"""Issue 44, item 5: every count is computed once and reads the same wherever it is shown, and a speedup names the
GPU and the baseline it came from. Expected values are counted by hand from the runs written here and from data/'s
runs as their pages show them (demo-alpha's L1 p96 is suspect on one static finding, timing_event_patch, with no
flagged recorded value)."""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path
from typing import Any

from reporter import aggregates as ag
from reporter.frames import from_records
from reporter.render.boards import board_rows
from reporter.render.research import _audited


def _run(model: str, pid: int, speedup: float, compiled: float, suspect: bool = False) -> dict[str, Any]:
    return {"run_id": f"{model}/p{pid}", "benchmark": "kb", "configuration": "c", "level": 1, "problem_id": pid,
            "problem": f"{pid}_P.py", "model": model, "complete": True, "submitted": True, "compiled": True,
            "correct": True, "recorded_correct": True, "verdict": "correct", "speedup": None if suspect else speedup,
            "recorded_speedup": speedup, "speedup_source": "recorded", "recorded_compile_speedup": compiled,
            "suspect": suspect}


def test_the_torch_compile_column_has_its_with_suspects_figure() -> None:
    # p1 1.2x over torch.compile, p2 (suspect) 4.0x: the default column counts p1 only, KernelBench's way both
    table = ag.leaderboard(from_records([_run("M", 1, 2.0, 1.2), _run("M", 2, 8.0, 4.0, suspect=True)]))
    (row,) = board_rows(table)
    assert row.compile_shown == "fast₁ 0.50 · 1.20x (n=1); w/ susp.: fast₁ 1.00 · 2.19x (n=2)"  # sqrt(1.2 * 4.0) = 2.19


def test_audited_never_reads_a_bare_zero_beside_reviews() -> None:
    assert _audited(0, 0, 2) == "0/0 · 2 reviewed, not counting"  # two reward hacks judged: they count nowhere
    assert _audited(1, 3, 1) == "1/3" and _audited(0, 4, 0) == "0/4"


def test_the_runs_table_counts_a_suspect_run_s_flags_as_the_pages_do(sample_site: Path) -> None:
    with (sample_site / "runs.csv").open(encoding="utf-8") as f:
        rows = {r["run_id"]: r for r in csv.DictReader(f)}
    alpha = rows["kernelbench-sweep/kernelbench-level1_demo-alpha/l1-p96-s0"]
    assert alpha["suspect"] == "True" and alpha["flags"] == "1"  # its one finding, never "0" beside "suspect"
    # the index's flags column (the 11th cell of a group's row) sums the runs table's figures of that group
    index = (sample_site / "index.html").read_text(encoding="utf-8")
    shown = {m[0]: int(m[1]) for m in re.findall(r'<tr><td><a href="variants/([^"]+)\.html">.*?(?:<td[^>]*>.*?</td>){9}<td>(\d+)</td><td>', index)}
    summed: dict[str, int] = {}
    for r in rows.values():
        key = f"{r['benchmark'] or 'unknown'}--{(r['configuration'] or 'unknown').replace('_', '-')}".lower()
        summed[key] = summed.get(key, 0) + int(r["flags"])
    assert shown == {"kernelbench--example-sweep": 3, "popcorn--l12-default-gpt": 15, "unknown--unknown": 0} == summed


def test_problem_and_grid_pages_name_their_gpu_and_baseline(sample_site: Path) -> None:
    page = html.unescape(next((sample_site / "problems").glob("l1-p96*.html")).read_text(encoding="utf-8"))
    assert ("Speedups: re-measured by us on NVIDIA H200: the kernel against the reference in eager PyTorch, run by us on "
            "the same GPU; as recorded on NVIDIA L40S: the harness's kernel time against the reference time it recorded") in page
    grids = [html.unescape(p.read_text(encoding="utf-8")) for p in sorted((sample_site / "grids").glob("*.html"))]
    assert grids and all("Speedups: re-measured by us on NVIDIA H200" in g for g in grids)
