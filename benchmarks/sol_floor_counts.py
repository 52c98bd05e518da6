"""How many recorded times fall below the hardware floor (issue 33): the sample sweep (data/) and the shared corpus
of real KernelBench submissions (../shared/corpora/kernelbench-leaderboard-dev, recorded on an L40S).

The corpus is imported into a temporary folder the way a user would (`reporter import kernelbench`), each
reference's work is counted (`reporter work`'s path: one child per reference, no GPU), and every run's recorded
kernel and reference times are checked against the floor of the GPU they were recorded on (`collect.floors`: rated
clock, L2 flush unknown, so an L2 that may hold the working set). Also counted: times under T_SOL but above the
floor (a fraction of speed of light above 100%), each with the cause `core.sol.above_causes` assigns it, and a
table per problem: T_SOL with its launch term (`Bound.least`: a recorded time is taken from the host), the floor,
the runs and how many of them beat T_SOL. Runs on a CPU; writes benchmarks/sol_floor_counts.txt.

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
from reporter.core.sol import FLOOR_MARGIN, LAUNCH_S, time_text
from reporter.validate.work import count_work

OUT = Path(__file__).with_suffix(".txt")


def _problem_table(rows: dict[tuple[int, int], list[object]]) -> list[str]:
    out = [f"  {'lvl':>3} {'id':>3} {'T_SOL work':>11} {'T_SOL+launch':>12} {'floor':>10} {'bound':<7} {'runs':>4} {'>100%':>5}  causes"]
    for (level, pid), (sol, floor, limiter, runs, causes) in sorted(rows.items()):  # type: ignore[misc]
        least = max(sol, LAUNCH_S)  # type: ignore[call-overload]
        out.append(f"  L{level:<2} {pid:>3} {time_text(sol):>11} {time_text(least):>12} {time_text(floor):>10} "  # type: ignore[arg-type]
                   f"{limiter if sol >= LAUNCH_S else 'launch':<7} {runs:>4} {sum(causes.values()):>5}  "  # type: ignore[attr-defined,operator]
                   + ", ".join(f"{c} x{n}" for c, n in sorted(causes.items())))  # type: ignore[attr-defined]
    launch = sum(1 for sol, *_ in rows.values() if sol < LAUNCH_S)  # type: ignore[operator]
    return [f"  problems whose T_SOL is under one launch ({time_text(LAUNCH_S)}): {launch} of {len(rows)}", *out]


def survey(name: str, data: Path, per_problem: bool = False) -> list[str]:
    runs = collect(data).runs
    seen: Counter[str] = Counter()
    below, above_sol = [], []
    by_cause: Counter[str] = Counter()
    problems: dict[tuple[int, int], list[object]] = {}
    for r in runs:
        t = r.trace.metrics.timing
        if t is None or t.runtime is None:
            continue
        seen["with a recorded kernel time"] += 1
        rep = sol_report(r, None)
        if rep.why:
            seen[f"no bound: {rep.why[:60]}"] += 1
            continue
        if rep.recorded is None or rep.recorded.floor is None or rep.recorded.sol is None:
            seen[f"no bound: {rep.recorded.why if rep.recorded else '?'}"] += 1
            continue
        b = rep.recorded
        seen["checked against the floor of " + b.floor.gpu + (" (TF32 admitted by the run's rules)" if b.tf32 else "")] += 1
        key = (r.trace.run.level or 0, r.trace.run.problem_id or 0)
        row = problems.setdefault(key, [b.sol.seconds, b.floor.seconds, b.sol.limiter, 0, Counter()])
        row[3] += 1  # type: ignore[operator]
        for side in ("kernel", "reference"):
            st = rep.time(side, RECORDED)
            if st is None or st.seconds is None:
                continue
            where = f"{r.run_id} ({side} {time_text(st.seconds)}; floor {time_text(b.floor.seconds)}, T_SOL " \
                    f"{time_text(b.sol.least(True))}, {st.fraction or 0:.0%})"
            if st.below_floor:
                below.append(where)
            elif st.above:
                cause = "; ".join(st.above)
                above_sol.append(f"{where}: {cause}")
                by_cause[f"{side}: {cause}"] += 1
                if side == "kernel":
                    row[4][cause] += 1  # type: ignore[index]
    kernels_below = sum(1 for b in below if "(kernel " in b)
    return [f"{name}: {len(runs)} runs", *(f"  {k}: {n}" for k, n in sorted(seen.items())),
            f"  recorded times below {FLOOR_MARGIN:.0%} of the floor: {len(below)} ({kernels_below} kernel, "
            f"{len(below) - kernels_below} reference)", *(f"    {b}" for b in below),
            f"  under T_SOL but above the floor (fraction of SOL over 100%): {len(above_sol)}, by cause: "
            + (", ".join(f"{c} x{n}" for c, n in sorted(by_cause.items())) or "none"), *(f"    {b}" for b in above_sol),
            *(["", "  per problem (recorded GPU; T_SOL+launch = max(T_SOL, LAUNCH_S), what a recorded time is held against):",
                *_problem_table(problems)] if per_problem else []), ""]


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
                        "--problems", str(args.corpus / "problems"), "--out", str(data), "--rules", "kernelbench-2025"],
                       check=True, cwd=ROOT)  # the leaderboard era: fp32 at 1e-2, which admits TF32
        refs = [ref for r in collect(data).runs if (ref := r.source.reference_source) is not None]
        done = count_work(data, refs)
        lines += survey(f"shared corpus ({args.corpus.name}: {len(set(refs))} references, {len(done.counts)} counted, "
                        f"{sum(not w.counted for w in done.counts)} failed)", data, per_problem=True)
    usage = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    OUT.write_text("\n".join([f"recorded times against the hardware floor ({time.monotonic() - t0:.0f} s wall, {cpu:.0f} CPU-s)",
                              "", *lines]), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
