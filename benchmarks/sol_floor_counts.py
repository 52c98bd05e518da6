"""How many recorded times fall below the hardware floor (issue 33): the sample sweep (data/) and the shared corpus
of real KernelBench submissions (../shared/corpora/kernelbench-leaderboard-dev, recorded on an L40S).

The corpus is imported into a temporary folder the way a user would (`reporter import kernelbench`), each
reference's work is counted (`reporter work`'s path: one child per reference, no GPU), and every run's recorded
kernel and reference times are checked against the floor of the GPU they were recorded on (`collect.floors`: rated
clock, L2 flush unknown, so an L2 that may hold the working set). Also counted: times under T_SOL but above the
floor (a fraction of speed of light above 100%). Runs on a CPU; writes benchmarks/sol_floor_counts.txt.

    python benchmarks/sol_floor_counts.py [--corpus DIR]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reporter.collect.sol import RECORDED, sol_report
from reporter.collect.traces import collect
from reporter.core.sol import FLOOR_MARGIN, time_text
from reporter.validate.work import count_work

OUT = Path(__file__).with_suffix(".txt")


def survey(name: str, data: Path) -> list[str]:
    runs = collect(data).runs
    seen: Counter[str] = Counter()
    below, above_sol = [], []
    for r in runs:
        t = r.trace.metrics.timing
        if t is None or t.runtime is None:
            continue
        seen["with a recorded kernel time"] += 1
        rep = sol_report(r, None)
        if rep.why:
            seen[f"no bound: {rep.why[:60]}"] += 1
            continue
        if rep.recorded is None or rep.recorded.floor is None:
            seen[f"no bound: {rep.recorded.why if rep.recorded else '?'}"] += 1
            continue
        seen["checked against the floor of " + rep.recorded.floor.gpu] += 1
        for side in ("kernel", "reference"):
            st = rep.time(side, RECORDED)
            if st is None or st.seconds is None:
                continue
            where = f"{r.run_id} ({side} {time_text(st.seconds)}; floor {time_text(rep.recorded.floor.seconds)}, T_SOL " \
                    f"{time_text(rep.recorded.sol.seconds) if rep.recorded.sol else '?'})"
            if st.below_floor:
                below.append(where)
            elif st.fraction is not None and st.fraction > 1:
                above_sol.append(where)
    kernels_below = sum(1 for b in below if "(kernel " in b)
    return [f"{name}: {len(runs)} runs", *(f"  {k}: {n}" for k, n in sorted(seen.items())),
            f"  recorded times below {FLOOR_MARGIN:.0%} of the floor: {len(below)} ({kernels_below} kernel, "
            f"{len(below) - kernels_below} reference)", *(f"    {b}" for b in below),
            f"  under T_SOL but above the floor (fraction of SOL over 100%): {len(above_sol)}", *(f"    {b}" for b in above_sol), ""]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpora" / "kernelbench-leaderboard-dev")
    args = ap.parse_args()
    t0 = time.monotonic()
    lines = survey("sample sweep (data/, work counts committed in data/validation/work)", ROOT / "data")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        subprocess.run([sys.executable, "-m", "reporter.cli", "-q", "import", "kernelbench",
                        *sorted(str(p) for p in (args.corpus / "runs").iterdir() if p.is_dir()),
                        "--problems", str(args.corpus / "problems"), "--out", str(data)], check=True, cwd=ROOT)
        refs = [ref for r in collect(data).runs if (ref := r.source.reference_source) is not None]
        done = count_work(data, refs)
        lines += survey(f"shared corpus ({args.corpus.name}: {len(set(refs))} references, {len(done.counts)} counted, "
                        f"{sum(not w.counted for w in done.counts)} failed)", data)
    usage = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    OUT.write_text("\n".join([f"recorded times against the hardware floor ({time.monotonic() - t0:.0f} s wall, {cpu:.0f} CPU-s)",
                              "", *lines]), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
