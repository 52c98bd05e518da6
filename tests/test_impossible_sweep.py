"""No impossible time counts anywhere (issue 44, "Measure it"): the example KernelBench sweep imported as a user would,
with two of demo-beta's recorded times edited to what no L40S can do, built, and every place that shows or counts a
speedup or a fraction of speed of light read back: boards, grid, model page, run pages, runs.csv, reporter.load."""

from __future__ import annotations

import csv
import html
import json
import math
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from reporter import aggregates as ag
from reporter.cli import main
from reporter.tables import load

SWEEP = ROOT / "examples" / "kernelbench-sweep"
TIMING = SWEEP / "results" / "timing" / "L40S_example"
BETA = "kernelbench-level1_demo-beta"


def _text(path: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("impossible")
    runs = root / "runs"
    shutil.copytree(SWEEP / "runs", runs)
    path = runs / "level1_demo-beta" / "eval_results.json"
    doc = json.loads(path.read_text())
    # p92 (cumsum, 19.6 ms reference): 0.5 µs, under half of one 2 µs launch: impossible with or without a count.
    # p94 (MSE over two 32768² fp32 tensors): 8.59 GB cannot cross the L40S's 864 GB/s in under ~9.9 ms; 2 ms is
    # under half of that floor, above the launch floor, so only the counted work makes it impossible.
    for pid, ms in (("92", 0.0005), ("94", 2.0)):
        doc[pid][0]["runtime"] = doc[pid][0]["runtime_stats"]["mean"] = ms
    path.write_text(json.dumps(doc))
    # gamma's p94: a possible kernel time (4.1 ms) against a reference time of 0.5 µs, which no GPU reaches
    gamma = runs / "level1_demo-gamma" / "eval_results.json"
    doc = json.loads(gamma.read_text())
    doc["94"][0]["ref_runtime"] = 0.0005
    gamma.write_text(json.dumps(doc))
    data, site = root / "data", root / "site"
    res = CliRunner().invoke(main, ["import", "kernelbench", str(runs), "--problems", str(SWEEP / "problems"),
                                    "--baseline", str(TIMING / "baseline_time_torch.json"), "--configuration", "example-sweep",
                                    "--baseline-compile", str(TIMING / "baseline_time_torch_compile_inductor_default.json"),
                                    "--rules", "kernelbench-2025-11", "--out", str(data)])
    assert res.exit_code == 0 and "counted 4 references (0 failed)" in res.output, res.output
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert res.exit_code == 0, res.output
    return data, site


def test_the_board_counts_neither_time(built: tuple[Path, Path]) -> None:
    data, site = built
    b = ag.leaderboard(load(data)).set_index("model").loc["demo-beta"]
    # unedited, beta is 19.6/12.5 and 28.3/14.2: two fast_1.5 runs (tests/test_sweep.py); edited, both still correct
    assert (b["correct"], b["fast_0.0_n"], b["fast_1.0_n"], b["geomean_n"]) == (2, 0, 0, 0) and math.isnan(b["geomean"])
    row = _text(site / "leaderboards" / "kernelbench--example-sweep--l1.html").split("demo-beta")[1].split("demo-gamma")[0]
    assert "0.00 0/4" in row and "39200" not in row and "14.15" not in row and "497" not in row


def test_runs_csv_and_load_keep_the_times_and_drop_every_figure_made_from_them(built: tuple[Path, Path]) -> None:
    data, site = built
    rows = {r["problem_id"]: r for r in csv.DictReader((site / "runs.csv").open(encoding="utf-8")) if r["model"] == "demo-beta"}
    for pid, ms in (("92", "0.0005"), ("94", "2.0")):
        r = rows[pid]
        assert (r["recorded_kernel_ms"], r["recorded_impossible"], r["correct"]) == (ms, "True", "True")
        assert [r[c] for c in ("speedup", "recorded_speedup", "recorded_compile_speedup", "recorded_sol_fraction",
                               "recorded_sol_exec_score", "sol_fraction", "sol_exec_score")] == [""] * 7, (pid, r)
        assert r["recorded_ref_sol_fraction"] != ""  # the reference's time is possible: its fraction stays
    alpha = next(r for r in csv.DictReader((site / "runs.csv").open(encoding="utf-8"))
                 if r["model"] == "demo-alpha" and r["problem_id"] == "94")
    assert float(alpha["recorded_compile_speedup"]) == pytest.approx(9.71 / 9.62)  # a possible time keeps it
    frame = load(data).set_index("run_id")
    for pid in ("92", "94"):
        r = frame.loc[f"{BETA}/l1-p{pid}-s0"]
        assert r["recorded_impossible"] and all(pd_missing(r[c]) for c in ("speedup", "recorded_speedup", "recorded_sol_fraction"))


def pd_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) in ("<NA>", "nan")


def test_the_grid_model_and_run_pages_show_no_figure_for_them(built: tuple[Path, Path]) -> None:
    _, site = built
    grid = _text(next((site / "grids").glob("*.html")))
    assert "39200" not in grid and "14.15x" not in grid
    model = _text(next((site / "models").glob("*demo-beta.html")))
    assert "fast₁ 0.00 0/4" in model and "No run of this model has a counting speedup" in model
    assert model.count("below the hardware floor: no speedup") == 2
    for pid in ("92", "94"):
        page = _text(next((site / "runs").glob(f"*demo-beta-l1-p{pid}-s0.html")))
        assert "speedup (recorded) below the hardware floor: no speedup" in page
        assert "SOL score — (below the hardware floor)" in page and "fraction of speed of light — (below the hardware floor" in page
        assert "1988410" not in page and "497.1%" not in page and "-34.05" not in page and "1.76 (above 1" not in page


def test_a_reference_time_below_the_floor_leaves_the_kernel_no_fraction_either(built: tuple[Path, Path]) -> None:
    _, site = built
    page = _text(next((site / "runs").glob("*demo-gamma-l1-p94-s0.html")))
    assert "the recorded reference runtime 500 ns is faster than the hardware allows" in page
    assert "fraction of speed of light — (below the hardware floor" in page and "SOL score — (below the hardware floor)" in page
