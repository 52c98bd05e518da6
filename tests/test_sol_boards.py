"""Boards on a common scale (issue 33, item 5): each leaderboard's geomean fraction of speed of light, and the
cross-GPU board that ranks a model's runs taken on different GPUs by it. Hand-made runs tables, no build."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any

import pytest

from reporter.aggregates import leaderboard
from reporter.aggregates.sol import cross_gpu
from reporter.frames import from_records


def run(model: str, problem: int, sol: float | None, gpu: str = "H200 SXM 141GB", source: str = "re-validated",
        **more: Any) -> dict[str, Any]:
    measured = source == "re-validated"
    return {"run_id": f"{model}-{problem}-{gpu}", "benchmark": "kb", "configuration": "c", "level": 1, "problem_id": problem,
            "problem": f"{problem}_P.py", "model": model, "complete": True, "correct": True, "suspect": False,
            "revalidated_correct": True if measured else None, "recorded_correct": True, "speedup_source": source,
            "speedup": 2.0, "speedup_device": 2.0 if measured else None, "recorded_speedup": None if measured else 2.0,
            "kernel_ms": 1.0, "ref_ms": 2.0, "kernel_device_ms": 1.0 if measured else None, "ref_device_ms": 2.0 if measured else None,
            "sol_fraction_device": sol if measured else None, "recorded_sol_fraction": None if measured else sol,
            "sol_fraction": sol, "sol_gpu": gpu if sol is not None else None, **more}


def test_each_board_row_has_the_geomean_of_its_fractions_of_sol() -> None:
    frame = from_records([run("a", 1, 0.8), run("a", 2, 0.2), run("a", 3, None),  # no count for problem 3: no fraction
                          run("b", 1, 0.5, gpu="L40S", source="recorded")])
    board = leaderboard(frame).set_index("model")
    assert board.loc["a", "sol_geomean"] == pytest.approx(math.sqrt(0.8 * 0.2)) and board.loc["a", "sol_n"] == 2
    assert board.loc["b", "sol_geomean"] == pytest.approx(0.5)  # a recorded run: its fraction on its recorded GPU
    wrong = from_records([run("a", 1, 0.8, correct=False), run("a", 2, 0.4, suspect=True), run("a", 3, 0.1)])
    board = leaderboard(wrong).set_index("model")
    assert board.loc["a", "sol_geomean"] == pytest.approx(0.1) and board.loc["a", "sol_n"] == 1  # only counting runs


def test_the_cross_gpu_board_ranks_runs_from_different_gpus_by_fraction_of_sol() -> None:
    frame = from_records([
        run("a", 1, 0.9, gpu="L40S", source="recorded"), run("a", 2, 0.4),  # one recorded on an L40S, one re-measured
        run("a", 1, 0.6),  # problem 1 again: the best fraction counts
        run("b", 1, 0.3), run("b", 2, 0.3),
        run("c", 1, 0.55), run("c", 2, None),  # a problem without a fraction is not one of its problems
    ])
    t = cross_gpu(frame).set_index("model")
    assert list(t.index) == ["a", "c", "b"] and list(t["rank"]) == [1, 2, 3]
    assert t.loc["a", "sol_geomean"] == pytest.approx(math.sqrt(0.9 * 0.4)) and t.loc["a", "problems"] == 2
    assert t.loc["a", "gpus"] == "H200 SXM 141GB re-measured ×1 · L40S recorded ×1" and t.loc["a", "gpu_count"] == 2
    assert t.loc["c", "problems"] == 1 and t.loc["c", "sol_best"] == pytest.approx(0.55)
    tie = cross_gpu(from_records([run("z", 1, 0.5), run("y", 1, 0.5001)])).set_index("model")
    assert list(tie["rank"]) == [1, 1] and list(tie.index) == ["y", "z"]  # equal as printed: one rank, by name


def test_the_sample_site_has_the_cross_gpu_board_and_the_column(rendered_site: Path) -> None:
    def text(page: Path) -> str:
        return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))
    cross = text(rendered_site / "cross-gpu.html")
    assert "ranked by the geometric mean of each model's best fraction of speed of light" in cross
    # alpha: T_SOL / device time = 0.895/2.659, 1.790/1.938 = 33.7%, 92.3%: geomean 55.7%, median 63.0%. Its third
    # kernel (1.790/1.945 = 92.0% when it was re-measured) patches the CUDA-event timer (planted): suspect, left out.
    assert "demo-alpha 2 55.7% 63.0% 92.3% H200 SXM 141GB re-measured ×2" in cross
    board = text(rendered_site / "leaderboards" / "kernelbench--example-sweep--l1.html")
    assert "geomean of SOL" in board and "3.07x n=2 2.07x w/ susp. (n=3) † 55.7% of SOL (n=2)" in board  # 3.087, 3.050
    assert 'href="cross-gpu.html"' in (rendered_site / "index.html").read_text(encoding="utf-8")


def test_the_sample_sites_planted_timer_patch_is_suspect_at_its_line_and_scores_nothing(rendered_site: Path) -> None:
    page = (rendered_site / "runs" / "kernelbench-sweep-kernelbench-level1-demo-alpha-l1-p96-s0.html").read_text(encoding="utf-8")
    assert "Suspect: 1 finding below, with its evidence." in page
    assert '<li><a href="#kernel-L47">timing_event_patch</a>' in page  # the assignment to torch.cuda.Event.elapsed_time
    assert "#kernel-L46" not in page  # line 46 keeps the original timer: no patch, no finding
    assert "<dt>speedup (recorded)</dt><dd>suspect: no speedup</dd>" in page
    assert "<dt>fraction of speed of light</dt><dd>— (no result for an incorrect or suspect kernel" in page
