"""Our boards against KernelBench's own scoring on the real dev corpus (issue 42, item 4): cell by cell.

The corpus (../shared/corpora/kernelbench-leaderboard-dev) is imported the way a user would, under the rules that
scored it (`--rules kernelbench-2025`), with no re-validation: every verdict and time is the harness's. KernelBench's
definitions (`src/kernelbench/score.py`: fastp counts the correct samples whose baseline / actual speedup is strictly
above p, over n, the level's problems; the geometric mean over the correct samples) are computed here straight from
each run folder's eval_results.json and the problem folder's file count, never from reporter. Then, for every
model x level, our board with suspect runs counted (`exclude=None`, KernelBench's way) must equal them, and our
default board (suspect runs, weak-check wins, foreign baselines and impossible times left out) differs by exactly the
runs it names. Runs on a CPU; writes benchmarks/kernelbench_scoring_corpus.txt.

    python benchmarks/kernelbench_scoring_corpus.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reporter import aggregates as ag
from reporter.frames import load_universe
from reporter.tables import load

OUT = Path(__file__).with_suffix(".txt")
PS = (0.0, 1.0, 2.0)
NAME = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py")


def kernelbench_scores(corpus: Path) -> dict[tuple[str, int], dict[str, float]]:
    """score.py's fast_p and geomean per run folder (model x level), from the folder's own files."""
    out = {}
    for folder in sorted(p for p in (corpus / "runs").iterdir() if p.is_dir()):
        model, level = folder.name.rsplit("_L", 1)
        n = len(list((corpus / "problems" / f"level{level}").glob("*.py")))
        evals = json.loads((folder / "eval_results.json").read_text())
        speeds = []
        for samples in evals.values():
            for s in samples if isinstance(samples, list) else [samples]:
                if s.get("correctness") and s.get("runtime", -1) > 0 and s.get("ref_runtime", -1) > 0:
                    speeds.append(s["ref_runtime"] / s["runtime"])
        row = {f"fast_{p:g}": sum(1 for x in speeds if x > p) / n for p in PS}
        row["geomean"] = math.exp(sum(math.log(x) for x in speeds) / len(speeds)) if speeds else math.nan
        row["n"] = n
        out[(model, int(level))] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "kernelbench-leaderboard-dev")
    args = ap.parse_args()
    t0 = time.monotonic()
    kb = kernelbench_scores(args.corpus)
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        subprocess.run([sys.executable, "-m", "reporter.cli", "-q", "import", "kernelbench",
                        *sorted(str(p) for p in (args.corpus / "runs").iterdir() if p.is_dir()),
                        "--problems", str(args.corpus / "problems"), "--out", str(data), "--rules", "kernelbench-2025"],
                       check=True, cwd=ROOT)
        frame, space = load(data), load_universe(data)
        by = ("benchmark", "level")
        theirs = ag.leaderboard(frame, by=by, fast_ps=PS, exclude=None, space=space)
        ours = ag.leaderboard(frame, by=by, fast_ps=PS, space=space)
        scoped = ag.scoped(frame)
    agree = cells = 0
    diffs: list[str] = []
    default_moves: list[str] = []
    for (model, level), want in sorted(kb.items()):
        got = theirs.loc[(theirs["model"] == model) & (theirs["level"] == level)]
        row = got.iloc[0] if len(got) else None
        for col in (*(f"fast_{p:g}" for p in PS), "geomean"):
            cells += 1
            mine = None if row is None else float(row[ag.fast_column(float(col[5:]))] if col != "geomean" else row["geomean"])
            same = mine is not None and (math.isclose(mine, want[col], rel_tol=1e-9) or (math.isnan(mine) and math.isnan(want[col])))
            agree += same
            if not same:
                diffs.append(f"  {model} L{level} {col}: KernelBench {want[col]:.6g}, ours {mine}")
        d = ours.loc[(ours["model"] == model) & (ours["level"] == level)].iloc[0]
        if row is not None and int(d["fast_0.0_n"]) != int(row["fast_0.0_n"]):
            left = scoped.loc[(scoped["model"] == model) & (scoped["level"] == level) & scoped["correct"] & ~scoped["counts"]]
            why = ", ".join(f"{r.run_id.split('/')[-1]} ({'suspect' if r.excluded else 'weak check' if r.weak else 'foreign baseline' if r.foreign_baseline else 'no speedup'})"
                            for r in left.itertuples())
            default_moves.append(f"  {model} L{level}: fast_0 {int(row['fast_0.0_n'])} -> {int(d['fast_0.0_n'])}, fast_1 "
                                 f"{int(row['fast_1.0_n'])} -> {int(d['fast_1.0_n'])} of {int(d['problems'])}; left out: {why}")
    lines += [f"KernelBench's score.py on the dev corpus ({len(kb)} run folders, 343 runs, recorded verdicts and times, "
              f"kernelbench-2025) against our boards ({time.monotonic() - t0:.0f} s wall)", "",
              f"our board counted KernelBench's way (suspect runs in): {agree} of {cells} cells equal "
              f"(fast_0, fast_1, fast_2, geomean per model x level)", *diffs, "",
              f"our default board (suspect runs, weak-check wins, foreign baselines, impossible times left out): "
              f"{len(default_moves)} model x level rows move (fast_0, the correct ones counted)", *default_moves, ""]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
