"""A KernelBench sweep (several models, one level, a baseline file) imported in one call, and its leaderboard."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from reporter import aggregates as ag
from reporter.cli import main
from reporter.collect import collect
from reporter.collect.kernelbench import read_baseline
from reporter.core.errors import ReporterError
from reporter.tables import load

SWEEP = ROOT / "examples" / "kernelbench-sweep"
TIMING = SWEEP / "results" / "timing" / "L40S_example"
NOTE = "Example sweep written for reporter: the kernels, eval results and baseline times are illustrative, not measured."
ARGS = ["--problems", str(SWEEP / "problems"), "--baseline", str(TIMING / "baseline_time_torch.json"),
        "--baseline-compile", str(TIMING / "baseline_time_torch_compile_inductor_default.json"),
        "--configuration", "example-sweep", "--rules", "kernelbench-2025-11", "--note", NOTE]


def imported(out: Path, *run_dirs: Path) -> Path:
    res = CliRunner().invoke(main, ["import", "kernelbench", *map(str, run_dirs or (SWEEP / "runs",)), *ARGS, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return imported(tmp_path_factory.mktemp("sweep"))


def test_the_sample_data_holds_this_import(sweep: Path) -> None:
    # data/kernelbench-sweep is what the README's command writes: the sample site includes the sweep.
    fresh = sorted(p.relative_to(sweep) for p in sweep.rglob("trace.json"))
    committed = ROOT / "data" / "kernelbench-sweep"
    assert len(fresh) == 12 and fresh == sorted(p.relative_to(committed) for p in committed.rglob("trace.json"))
    assert all((sweep / p).read_text() == (committed / p).read_text() for p in fresh)


def test_a_runs_root_is_the_same_as_its_folders(sweep: Path, tmp_path: Path) -> None:
    out = imported(tmp_path, *sorted((SWEEP / "runs").iterdir()))
    assert sorted(p.relative_to(out) for p in out.rglob("trace.json")) == sorted(p.relative_to(sweep) for p in sweep.rglob("trace.json"))


def test_level_1_leaderboard_by_hand(sweep: Path) -> None:
    board = ag.leaderboard(load(sweep)).set_index("model")
    assert list(board.index) == ["demo-alpha", "demo-beta", "demo-gamma"]  # by fast_1.0, then geomean
    assert set(board["level"]) == {1} and set(board["attempted"]) == {4}
    # alpha: 92 wrong; 94 28.1/9.62; 96 10.2/10.9 (slower) but its file patches the CUDA-event timer (planted):
    # suspect, so it never counts, except with the suspects counted, as KernelBench would; 100 33.5/5.31 (baseline file, L40S)
    a = board.loc["demo-alpha"]
    assert (a["correct"], a["fast_0.0_n"], a["fast_1.0_n"], a["fast_2.0_n"]) == (3, 2, 2, 2)
    assert a["geomean"] == pytest.approx((28.1 / 9.62 * 33.5 / 5.31) ** (1 / 2)) and a["geomean_n"] == 2
    assert (a["fast_0.0_with_suspects_n"], a["fast_1.0_with_suspects_n"]) == (3, 2)
    assert a["geomean_with_suspects"] == pytest.approx((28.1 / 9.62 * 10.2 / 10.9 * 33.5 / 5.31) ** (1 / 3))
    # beta: its own ref_runtime wins over the file: 92 19.6/12.5, 94 28.3/14.2 (1.99x: not fast_2); 96 no build; 100 wrong
    b = board.loc["demo-beta"]
    assert (b["compiled"], b["correct"], b["fast_1.5_n"], b["fast_2.0_n"]) == (3, 2, 2, 0)
    assert b["geomean"] == pytest.approx(math.sqrt(19.6 / 12.5 * 28.3 / 14.2))
    # gamma: 92 correct but no runtime (never fast), 94 28.1/4.10 and 96 10.2/4.40 timed on an H100 against the L40S
    # file (two machines, never counted), 100 runtime error
    g = board.loc["demo-gamma"]
    assert (g["correct"], g["fast_0.0_n"], g["fast_2.0_n"], g["geomean_n"], g["baseline_other_gpu"]) == (3, 0, 0, 0, 2)
    assert math.isnan(g["geomean"]) and (board["revalidated"] == 0).all() and (board["recorded_only"] > 0).all()


def test_baseline_provenance_and_another_gpu_is_flagged(sweep: Path) -> None:
    runs = {r.run_id: r for r in collect(sweep).runs}
    gamma = runs["kernelbench-level1_demo-gamma/l1-p94-s0"]
    t = gamma.trace.metrics.timing
    assert t is not None and (t.ref_runtime, t.ref_gpu, t.speedup) == (28.1, "NVIDIA L40S", pytest.approx(28.1 / 4.10))
    assert t.compile_speedup == pytest.approx(9.71 / 4.10) and "L40S_example/baseline_time_torch.json" in (t.ref_source or "")
    assert any(f.field == "timing.ref_gpu" and "another GPU" in f.message for f in gamma.flags)
    beta = runs["kernelbench-level1_demo-beta/l1-p92-s0"]
    assert beta.trace.metrics.timing.ref_runtime == 19.6 and not beta.flags  # type: ignore[union-attr]
    assert beta.trace.run.recorded_gpu == "NVIDIA L40S" and beta.trace.run.sample == 0
    assert runs["kernelbench-level1_demo-beta/l1-p96-s0"].trace.run.recorded_verdict == "compile_error"
    assert runs["kernelbench-level1_demo-gamma/l1-p100-s0"].trace.run.recorded_verdict == "runtime_error"
    assert runs["kernelbench-level1_demo-alpha/l1-p94-s0"].trace.run.model == "demo-alpha"  # from generation_config.yaml


def test_a_bad_baseline_file_names_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "baseline_time_torch.json"
    bad.write_text(json.dumps({"level1": {"1_x.py": {"std": 0.1}}}))
    with pytest.raises(ReporterError, match=r"baseline_time_torch.json: level1\.1_x\.py\.mean"):
        read_baseline(bad)
    bad.write_text(json.dumps({"one": {}}))
    with pytest.raises(ReporterError, match="key 'one'"):
        read_baseline(bad)


def test_site_has_one_level_1_leaderboard_with_a_row_per_model(sweep: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["build", str(sweep), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    boards = tmp_path / "site" / "leaderboards"
    page = (boards / "kernelbench--example-sweep--l1.html").read_text()
    body = page.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == 3 and body.index("demo-alpha") < body.index("demo-beta") < body.index("demo-gamma")
    # fast_1.0 of alpha: 2 of 4 attempted, none re-validated, as the cell says and its tooltip explains
    alpha = body.split("demo-alpha")[1].split("</tr>")[0]
    assert "0.50 <span class=\"sub line\">2/4</span><span class=\"sub line\">0.75 w/ susp.</span>" in alpha  # fast_0
    assert "0 of the 4 attempted re-validated by us, 4 as recorded" in alpha
    assert "4.29x" in alpha and "2.58x w/ susp. (n=3)" in alpha  # the geomean without and with the suspect run
    # the sweep's problem set (4 problems, recorded at import) is the denominator, named in the definition
    assert "the n = 4 problems of the benchmark&#39;s problem set" in page
    # where our harness differs from KernelBench's, the board says so: eval() mode against its training mode
    assert "both models in <code>eval()</code> mode; KernelBench's harness leaves them in training mode" in page
    # nothing is re-validated here: one view, headed as the harness's numbers, with GPU and baseline file
    heading = page.split("<h2>")[1].split("</h2>")[0]
    assert heading.startswith("Speedups recorded by the harness on NVIDIA H100 80GB HBM3, NVIDIA L40S against ")
    assert "L40S_example/baseline_time_torch.json" in heading and "device time" not in heading
    assert "data-basis-switch" not in page
    # the torch.compile baseline was given: its column is there (alpha: 94 9.71/9.62, 96 fails, 100 ...)
    assert "vs torch.compile" in page
    # the re-validated-only switch is a page of its own, linked both ways
    assert 'href="../leaderboards/kernelbench--example-sweep--l1--revalidated.html"' in page
    twin = (boards / "kernelbench--example-sweep--l1--revalidated.html").read_text()
    assert "re-validated only" in twin and 'href="../leaderboards/kernelbench--example-sweep--l1.html"' in twin
    assert "No run here was re-validated" in twin
    # downloads: every run on the index, the leaderboard's own runs beside it
    index_csv = (tmp_path / "site" / "runs.csv").read_text().splitlines()
    board_csv = (boards / "kernelbench--example-sweep--l1.runs.csv").read_text().splitlines()
    assert len(index_csv) == 13 and board_csv == index_csv  # only the sweep was built here: the same 12 runs
    assert 'href="runs.csv"' in (tmp_path / "site" / "index.html").read_text()
    assert "all levels" in (tmp_path / "site" / "index.html").read_text()
