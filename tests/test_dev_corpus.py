"""The dev corpus imported as docs/your-own-runs.md says (issue 45, "Measure it"): 343 real leaderboard kernels from
../shared (skipped where it is absent; never copied in). Seven models; every correct run's recorded speedup is
eval_results.json's ref_runtime / runtime; the boards, counted KernelBench's way, equal score.py's fast_p restated
here from the run folders; and no reference is of another level or version, while today's files are named."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from reporter import aggregates as ag
from reporter.cli import main
from reporter.collect import collect
from reporter.frames import load_universe
from reporter.tables import load

CORPUS = ROOT.parent / "shared" / "corpora" / "kernelbench-leaderboard-dev"
TODAY = ROOT.parent / "shared" / "kernelbench" / "KernelBench"
NAME = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py")
pytestmark = pytest.mark.skipif(not (CORPUS / "runs").is_dir() or not TODAY.is_dir(), reason="../shared is not here")


def _import(out: Path, problems: Path) -> str:
    # --no-work: the floor is not what this test reads, and counting 138 references would take a minute
    res = CliRunner().invoke(main, ["import", "kernelbench", str(CORPUS / "runs"), "--problems", str(problems),
                                    "--rules", "kernelbench-2025", "--out", str(out), "--no-work"])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def early(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dev") / "data"
    _import(out, CORPUS / "problems")
    return out


def _score_py() -> dict[tuple[str, int], tuple[float, float, dict[int, float]]]:
    """score.py per run folder: fast_0 and fast_1 over n, the level's problem files, and each correct speedup."""
    out = {}
    for folder in sorted((CORPUS / "runs").iterdir()):
        kernels = [NAME.match(p.name) for p in folder.glob("level_*_kernel.py")]
        level = int(next(m for m in kernels if m).group(1))
        n = len(list((CORPUS / "problems" / f"level{level}").glob("*.py")))
        results = json.loads((folder / "eval_results.json").read_text())
        speeds = {int(pid): e["ref_runtime"] / e["runtime"] for pid, es in results.items() for e in es[:1]
                  if e.get("correctness") and e.get("runtime", -1) > 0 and e.get("ref_runtime", -1) > 0}
        model = folder.name.rsplit("_L", 1)[0]
        out[(model, level)] = (sum(s > 0 for s in speeds.values()) / n, sum(s > 1 for s in speeds.values()) / n, speeds)
    return out


def test_seven_models_and_every_correct_runs_recorded_speedup(early: Path) -> None:
    frame = load(early)
    assert frame["model"].nunique() == 7 and len(frame) == 343
    expected = _score_py()
    for _, row in frame[frame["recorded_correct"].fillna(False).astype(bool)].iterrows():
        speed = expected[(row["model"], int(row["level"]))][2].get(int(row["problem_id"]))
        assert speed is not None and row["recorded_speedup"] == pytest.approx(speed), row["run_id"]


def test_boards_counted_kernelbenchs_way_equal_score_py(early: Path) -> None:
    board = ag.leaderboard(load(early), fast_ps=(0.0, 1.0), exclude=None, space=load_universe(early))
    got = {(r["model"], int(r["level"])): (r["fast_0.0"], r["fast_1.0"]) for _, r in board.iterrows()}
    want = {key: (f0, f1) for key, (f0, f1, _) in _score_py().items()}
    assert got.keys() == want.keys() and len(got) == 17
    for key, (f0, f1) in want.items():
        assert got[key] == pytest.approx((f0, f1)), key


def test_every_reference_is_its_own_level_and_version(early: Path) -> None:
    for r in collect(early).runs:
        run = r.trace.run
        files = list((CORPUS / "problems" / f"level{run.level}").glob(f"{run.problem_id}_*.py"))
        assert len(files) == 1 and r.trace.reference_source is not None
        assert hashlib.sha256(r.trace.reference_source.encode()).hexdigest() == hashlib.sha256(files[0].read_bytes()).hexdigest()
        assert not [f for f in r.flags if f.field == "reference_source"], r.run_id


def test_todays_problem_files_are_named_as_not_the_ones_scored(tmp_path: Path) -> None:
    said = _import(tmp_path / "data", TODAY)
    assert said.count("have a reference that may not be the version of its problem they were scored with") == 17
    runs = collect(tmp_path / "data").runs
    flagged = [r for r in runs if any(f.field == "reference_source" and "early-2025 files" in f.message for f in r.flags)]
    assert len(runs) == len(flagged) == 343
