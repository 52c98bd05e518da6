"""Our leaderboards against KernelBench's own scoring, on a hand-written KernelBench-format sweep (issue 23).

KernelBench's definitions (ScalingIntelligence/KernelBench, `src/kernelbench/score.py`):
- `fastp(is_correct, baseline_speed, actual_speed, n, p)`: of the correct samples, those whose speedup
  baseline / actual is strictly greater than p, divided by n, the level's number of problems;
- `geometric_mean_speed_ratio_correct_only(...)`: the product of the correct samples' speedups to the power
  1 / (number correct);
and `scripts/benchmark_eval_analysis.py` scores a level over every problem of the level's dataset, a problem
with no eval result counting as not correct. `kb_fastp` and `kb_geomean` below restate those definitions;
the expected values are worked out from the folder contents written here, never read from reporter.

The sweep: level 1 has 5 problems, level 2 has 2 (the --problems folder).
- m1 (level 1 only): P1 correct 2.0/1.0, P2 correct 2.0/4.0 (0.5x), P3 incorrect (its "4x" never counts),
  P4 compile error, P5 no kernel (not attempted).
- m2 level 1: P1 correct 3.0/2.0 (1.5x, reference time from the baseline file), P2 correct 6.0/2.0 (3x) but
  its kernel has no CUDA kernel at all (suspect: our fast_p leaves it out, KernelBench's counts it);
  P3-P5 no kernel. m2 level 2: P1 correct 3.0/1.0 (3x), P2 runtime error.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter import aggregates as ag
from reporter.cli import main
from reporter.frames import load_universe
from reporter.tables import load

CLEAN = '''import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
__global__ void add_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    add_one<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
ext = load_inline(name="add_one", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=CUDA, functions=["run"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.run(x)
'''
NO_KERNEL = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
PROBLEM = "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x + {k}\n"


def result(correct: bool, runtime: float, ref: float | None = None, compiled: bool = True, **meta: str) -> list[dict[str, object]]:
    entry: dict[str, object] = {"sample_id": 0, "compiled": compiled, "correctness": correct, "runtime": runtime,
                                "metadata": {"hardware": "NVIDIA L40S", **meta}}
    if ref is not None:
        entry["ref_runtime"] = ref
    return [entry]


def run_folder(root: Path, name: str, model: str, level: int, kernels: dict[int, str], results: dict[int, object]) -> None:
    folder = root / "runs" / name
    folder.mkdir(parents=True)
    (folder / "generation_config.yaml").write_text(f"model_name: {model}\nlevel: {level}\n")
    for pid, src in kernels.items():
        (folder / f"level_{level}_problem_{pid}_sample_0_kernel.py").write_text(src)
    (folder / "eval_results.json").write_text(json.dumps({str(k): v for k, v in results.items()}))


def sweep(root: Path, edit: dict[tuple[int, int], str] | None = None) -> Path:
    names = {1: ["1_A.py", "2_B.py", "3_C.py", "4_D.py", "5_E.py"], 2: ["1_F.py", "2_G.py"]}
    for level, files in names.items():
        (root / "problems" / f"level{level}").mkdir(parents=True)
        for k, name in enumerate(files):
            text = (edit or {}).get((level, k + 1), PROBLEM.format(k=k))
            (root / "problems" / f"level{level}" / name).write_text(text)
    base = {"level1": {"1_A.py": {"mean": 3.0, "hardware": "NVIDIA L40S"}, "2_B.py": {"mean": 6.0, "hardware": "NVIDIA L40S"}}}
    (root / "baseline_time_torch.json").write_text(json.dumps(base))
    run_folder(root, "m1-level1", "m1", 1, {1: CLEAN, 2: CLEAN, 3: CLEAN, 4: CLEAN}, {
        1: result(True, 1.0, 2.0), 2: result(True, 4.0, 2.0), 3: result(False, 0.5, 2.0), 4: result(False, 1.0, 2.0, compiled=False)})
    run_folder(root, "m2-level1", "m2", 1, {1: CLEAN, 2: NO_KERNEL}, {1: result(True, 2.0), 2: result(True, 2.0)})
    run_folder(root, "m2-level2", "m2", 2, {1: CLEAN, 2: CLEAN}, {
        1: result(True, 1.0, 3.0), 2: result(False, 1.0, 3.0, runtime_error="illegal memory access")})
    return root


def imported(root: Path, out: Path) -> CliRunner:
    res = CliRunner().invoke(main, ["import", "kernelbench", str(root / "runs"), "--problems", str(root / "problems"),
                                    "--baseline", str(root / "baseline_time_torch.json"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return res


def kb_fastp(speedups_of_correct: list[float], n: int, p: float) -> float:
    return sum(1 for s in speedups_of_correct if s > p) / n if n > 0 else 0.0


def kb_geomean(speedups_of_correct: list[float]) -> float:
    return math.prod(speedups_of_correct) ** (1 / len(speedups_of_correct)) if speedups_of_correct else 0.0


@pytest.fixture(scope="module")
def boards(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object]:
    root = sweep(tmp_path_factory.mktemp("kb"))
    out = root / "data"
    imported(root, out)
    frame, space = load(out), load_universe(out)
    return (ag.leaderboard(frame, space=space).set_index(["level", "model"]),
            ag.leaderboard(frame, by=("benchmark", "configuration"), space=space).set_index("model"))


def test_the_problem_set_is_recorded_with_each_files_hash(tmp_path: Path) -> None:
    root = sweep(tmp_path)
    imported(root, tmp_path / "data")
    doc = json.loads((tmp_path / "data" / "kernelbench-problems.json").read_text())
    assert sorted(doc["levels"]) == ["1", "2"] and sorted(doc["levels"]["1"], key=int) == ["1", "2", "3", "4", "5"]
    import hashlib
    assert doc["levels"]["2"]["2"] == {"file": "2_G.py",
                                       "sha256": hashlib.sha256(PROBLEM.format(k=1).encode()).hexdigest()}


def test_level_boards_agree_with_kernelbench(boards: tuple[object, object]) -> None:
    level, _ = boards
    m1, m2, m2l2 = level.loc[(1, "m1")], level.loc[(1, "m2")], level.loc[(2, "m2")]  # type: ignore[attr-defined]
    assert (m1["problems"], m1["attempted"], m1["not_attempted"], m1["correct"]) == (5, 4, 1, 2)
    for p in ag.FAST_P:
        assert m1[ag.fast_column(p)] == pytest.approx(kb_fastp([2.0, 0.5], 5, p))
        # KernelBench counts the suspect kernel (it has no cheat checks); our own fast_p leaves it out
        assert m2[f"{ag.fast_column(p)}_with_suspects"] == pytest.approx(kb_fastp([1.5, 3.0], 5, p))
        assert m2[ag.fast_column(p)] == pytest.approx(kb_fastp([1.5], 5, p))
        assert m2l2[ag.fast_column(p)] == pytest.approx(kb_fastp([3.0], 2, p))
    assert m1["geomean"] == pytest.approx(kb_geomean([2.0, 0.5]))
    assert (m2["problems"], m2["not_attempted"], m2["excluded"]) == (5, 3, 1)


def test_all_levels_board_uses_the_same_universe_for_every_model(boards: tuple[object, object]) -> None:
    _, every = boards
    m1, m2 = every.loc["m1"], every.loc["m2"]  # type: ignore[attr-defined]
    assert m1["problems"] == m2["problems"] == 7  # 5 + 2, though m1 has no level-2 kernel
    assert (m1["levels_missing"], m2["levels_missing"]) == ("L2", "")
    assert (m1["not_attempted"], m2["not_attempted"]) == (3, 3)
    assert m1["fast_1.0"] == pytest.approx(kb_fastp([2.0, 0.5], 7, 1.0))
    assert m2["fast_1.0_with_suspects"] == pytest.approx(kb_fastp([1.5, 3.0, 3.0], 7, 1.0))


def test_imported_runs_have_unknown_turns(tmp_path: Path) -> None:
    root = sweep(tmp_path)
    imported(root, tmp_path / "data")
    frame = load(tmp_path / "data")
    assert frame["turns"].isna().all()
    trace = json.loads(next((tmp_path / "data").rglob("trace.json")).read_text())
    assert "turns_used" not in trace["run"]


def test_a_changed_problem_file_is_one_message_per_kernel_naming_both_hashes(tmp_path: Path) -> None:
    import hashlib
    first = sweep(tmp_path / "then")
    out = tmp_path / "data"
    imported(first, out)
    changed = "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    again = sweep(tmp_path / "now", edit={(1, 1): changed})
    res = imported(again, out)
    old, new = hashlib.sha256(PROBLEM.format(k=0).encode()).hexdigest(), hashlib.sha256(changed.encode()).hexdigest()
    lines = [ln for ln in res.output.splitlines() if "level 1 problem 1:" in ln]
    assert len(lines) == 2  # m1's and m2's kernels for level 1 problem 1, each named
    assert all(old[:12] in ln and new[:12] in ln and "1_A.py" in ln for ln in lines)
    assert any("m1-level1" in ln for ln in lines) and any("m2-level1" in ln for ln in lines)
    trace = json.loads((out / "kernelbench-m1-level1" / "l1-p1-s0" / "trace.json").read_text())
    assert "Problem drift" in trace["run"]["source_note"] and old[:12] in trace["run"]["source_note"]
    recorded = json.loads((out / "kernelbench-problems.json").read_text())
    assert recorded["levels"]["1"]["1"]["sha256"] == old  # the record is never rewritten


def test_without_a_recorded_set_today_s_files_are_compared_with_the_imported_references(tmp_path: Path) -> None:
    import hashlib
    out = tmp_path / "data"
    imported(sweep(tmp_path / "then"), out)
    (out / "kernelbench-problems.json").unlink()  # imported by a reporter that recorded no problem set
    changed = "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 3\n"
    res = imported(sweep(tmp_path / "now", edit={(1, 1): changed}), out)
    old = hashlib.sha256(PROBLEM.format(k=0).encode()).hexdigest()
    lines = [ln for ln in res.output.splitlines() if "level 1 problem 1:" in ln]
    assert len(lines) == 2 and all("1_A.py changed" in ln and old[:12] in ln for ln in lines)
    recorded = json.loads((out / "kernelbench-problems.json").read_text())
    assert recorded["levels"]["1"]["1"]["sha256"] == old  # the reference the runs were imported with, not today's
    assert recorded["levels"]["1"]["2"]["sha256"] == hashlib.sha256(PROBLEM.format(k=1).encode()).hexdigest()


def test_a_renamed_problem_file_names_both_files(tmp_path: Path) -> None:
    out = tmp_path / "data"
    imported(sweep(tmp_path / "then"), out)
    again = sweep(tmp_path / "now")
    (again / "problems" / "level2" / "1_F.py").rename(again / "problems" / "level2" / "1_Renamed.py")
    lines = [ln for ln in imported(again, out).output.splitlines() if "level 2 problem 1:" in ln]
    assert len(lines) == 1 and "m2-level2" in lines[0] and "renamed 1_F.py -> 1_Renamed.py" in lines[0]


def test_the_site_shows_denominators_labels_and_counts_that_agree(tmp_path: Path) -> None:
    root = sweep(tmp_path)
    imported(root, tmp_path / "data")
    res = CliRunner().invoke(main, ["build", str(tmp_path / "data"), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    boards = tmp_path / "site" / "leaderboards"
    (level1_path,) = boards.glob("kernelbench*--l1.html")  # no --configuration: the group's name says "unknown"
    level1 = level1_path.read_text()
    row = level1.split("</span> m1")[1].split("</tr>")[0]
    assert "1 not attempted" in row and ">4/5<" in row
    assert "1 of 5 problems correct and faster than 1× (4 attempted, 1 not attempted)" in row
    every = level1_path.with_name(level1_path.name.replace("--l1.html", ".html")).read_text()
    assert "no L2 kernels" in every.split("</span> m1")[1].split("</tr>")[0] and "the n = 7 problems" in every
    heading = level1.split("<h2>")[1].split("</h2>")[0]
    assert heading.startswith("Speedups recorded by the harness on NVIDIA L40S against ") and "device time" not in heading
    # an imported run recorded no turns: unknown, and no empty Turns section
    run_page = next((tmp_path / "site" / "runs").glob("kernelbench-m1-level1*l1-p1-s0.html")).read_text()
    assert "turns / max</dt><dd>not recorded</dd>" in run_page
    assert "<h2>Turns" not in run_page and "turns unknown" in run_page
    # the index names the GPU and counts what the boards count: correct 2 + 1 + 1 + m2's suspect (correct, never fast),
    # all as recorded; the suspect is also counted in its own column
    index = (tmp_path / "site" / "index.html").read_text()
    kb = re.sub(r"<[^>]+>", "|", index.split("<td>recorded: NVIDIA L40S</td>")[1].split("</tr>")[0])
    assert re.sub(r"\|+", "|", kb).startswith("|5 |0 by us · 5 as recorded|1|")
