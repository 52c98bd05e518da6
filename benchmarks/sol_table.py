"""FLOPs, bytes, arithmetic intensity and T_SOL on the H200 for every KernelBench problem of levels 1-3 (issue 33).

Each problem file goes through the same path as `reporter work`: the fork server counts it in a child of its
own, with no GPU visible (meta tensors; small CPU tensors where a meta run cannot be done). The table gives,
per problem, how it was counted and by which rules (`core.work.RULE`), and the problems where counting
failed, with the reason. Runs on a CPU; writes benchmarks/sol_table.txt.

    python benchmarks/sol_table.py [--kernelbench ../shared/kernelbench/KernelBench] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reporter.collect.floors import default_tf32
from reporter.core.cache import read_work
from reporter.core.peaks import TABLE
from reporter.core.sol import floor_bound, sol_bound
from reporter.core.work import Counting, WorkCount
from reporter.validate.work import count_work

GPU = TABLE["H200 SXM"]
OUT = Path(__file__).with_suffix(".txt")


def problems(root: Path) -> list[tuple[int, int, Path]]:
    found = []
    for level in (1, 2, 3):
        for path in (root / f"level{level}").glob("*.py"):
            m = re.match(r"(\d+)_", path.name)
            if m:
                found.append((level, int(m.group(1)), path))
    return sorted(found)


def rules(w: WorkCount) -> str:
    kinds = sorted({o.kind.value for o in w.ops}) or ["none"]
    return "+".join(kinds) + (f" (estimated: {', '.join(w.estimated)})" if w.estimated else "")


def row(level: int, pid: int, path: Path, w: WorkCount) -> str:
    if not w.counted:
        return f"L{level} {pid:>3} {path.name[:44]:<44} FAILED"
    b = sol_bound(w, GPU, None, default_tf32(w.dtype))
    f = floor_bound(w, GPU, flushed=True)
    ai = w.intensity
    return (f"L{level} {pid:>3} {path.name[:44]:<44} {w.how.value:<4} {w.dtype or '-':<4} {w.flops / 1e9:>10.3f} "
            f"{w.floor_flops / 1e9:>10.3f} {w.read_bytes / 1e6:>10.2f} {w.write_bytes / 1e6:>9.2f} "
            f"{ai if ai is not None else float('nan'):>9.2f} {b.seconds * 1e6:>10.2f} {f.seconds * 1e6:>10.2f} {b.limiter:<7} {rules(w)}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernelbench", type=Path, default=ROOT.parent / "shared" / "kernelbench" / "KernelBench")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = ap.parse_args()
    found = problems(args.kernelbench)
    sources = [p.read_text(encoding="utf-8") for _, _, p in found]
    t0, c0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as tmp:
        count_work(Path(tmp), sources, jobs=args.jobs)
        works = [read_work(Path(tmp), s) for s in sources]
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
    counted = [w for w in works if w is not None and w.counted]
    lines = [f"KernelBench levels 1-3 ({len(found)} problems, {args.kernelbench.name}): work per problem and T_SOL on the "
             f"{GPU.name} (rated {GPU.boost_mhz} MHz; fp32 matmuls at the fp32 CUDA-core peak, as the default 1e-4 "
             "tolerance admits no TF32; floor after an L2 flush at the fastest 16-bit tensor rate)",
             f"counted in {time.monotonic() - t0:.0f} s wall, {cpu:.0f} CPU-s in the counting children, {args.jobs} at once; "
             f"torch {counted[0].torch if counted else '?'}",
             f"on meta tensors: {sum(w.how is Counting.META for w in counted)}, on CPU tensors: "
             f"{sum(w.how is Counting.CPU for w in counted)}, failed: {len(found) - len(counted)}; memory-bound on the H200: "
             f"{sum(sol_bound(w, GPU, None, default_tf32(w.dtype)).limiter == 'memory' for w in counted)}, compute-bound: "
             f"{sum(sol_bound(w, GPU, None, default_tf32(w.dtype)).limiter == 'compute' for w in counted)}",
             "", f"{'lvl id':<6} {'problem':<44} {'how':<4} {'dtype':<4} {'GFLOP':>10} {'floorGFLOP':>10} {'MB read':>10} "
             f"{'MB write':>9} {'FLOP/B':>9} {'T_SOL us':>10} {'floor us':>10} {'bound':<7} rules"]
    lines += [row(level, pid, path, w) if w is not None else f"L{level} {pid:>3} {path.name} NOT STORED"
              for (level, pid, path), w in zip(found, works)]
    failed = [(p, w) for (_, _, p), w in zip(found, works) if w is None or not w.counted]
    lines += ["", f"counting failed ({len(failed)}):"] + [f"  {p.parent.name}/{p.name}: {w.why if w else 'no result'}" for p, w in failed]
    cpu_runs = [(p, w) for (_, _, p), w in zip(found, works) if w is not None and w.how is Counting.CPU]
    lines += ["", f"counted on CPU tensors ({len(cpu_runs)}):"] + [f"  {p.parent.name}/{p.name}: {w.why}" for p, w in cpu_runs]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
