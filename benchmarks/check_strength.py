"""Which KernelBench problems' correctness checks cannot fail, before and after the strengthened inputs (issue 31).

    python benchmarks/check_strength.py [--problems DIR] [--levels 1 2 3] [--per-gpu 4] [--tol 1e-4] [--out FILE]

For every problem file, the very step `reporter validate` runs before checking a problem's kernels
(`reporter/validate/strength.py`, mode "strength", a worker process per problem on the reference alone):
wrong answers (zeros, another input's answer, the input itself, mutants of the reference) put through the
default comparison at the nominal shapes, and the input transforms under which those that pass fail. One
line per problem: what passes on the problem's own inputs ("before"), the transforms added, and what still
passes after them. Needs a GPU for the nominal shapes (some inputs are gigabytes); `--device cpu` works for
small problems.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reporter.core.schema import CheckSettings, CheckStrength, WorkerJob
from reporter.validate import problemcheck

PROBLEMS = ROOT.parent / "shared" / "kernelbench" / "KernelBench"


def jobs(problems: Path, levels: list[int], device: str, tol: float) -> dict[str, WorkerJob]:
    settings = replace(CheckSettings(), atol={"fp32": tol}, rtol={"fp32": tol})
    return {f"level{lv}/{p.name}": WorkerJob(p.read_text(encoding="utf-8"), "", settings, device, "fp32")
            for lv in levels for p in sorted((problems / f"level{lv}").glob("*.py"), key=lambda p: (len(p.name), p.name))}


def line(name: str, st: CheckStrength) -> str:
    if st.note:
        return f"{name:<58} NOT MEASURED  {st.note[:150]}"
    if not st.weak:
        return f"{name:<58} strong"
    after = ", ".join(st.still_pass) or "nothing"
    return (f"{name:<58} WEAK  before: {', '.join(st.passes)}\n{'':<64}strengthened with: {', '.join(st.strengthen) or '-'}"
            f"\n{'':<64}after: {after}" + (f"\n{'':<64}equivalent (not counted): {', '.join(st.equivalent)}" if st.equivalent else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=Path, default=PROBLEMS)
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--per-gpu", type=int, default=4, help="problems measured at once on the GPU")
    ap.add_argument("--tol", type=float, default=1e-4, help="fp32 atol = rtol (reporter's default 1e-4; KernelBench's 1e-2)")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per problem")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    gpus = ["0"] if args.device == "cuda" else []
    t0 = time.monotonic()
    todo: dict[str, WorkerJob] = {}
    found: dict[str, CheckStrength] = {}
    for lv in args.levels:  # a level at a time, the output rewritten after each: a run cut short keeps what it measured
        level = jobs(args.problems, [lv], args.device, args.tol)
        todo |= level
        # measure() keys its jobs by strength key; here by problem name, which is as unique.
        found |= problemcheck.measure(level, gpus, args.per_gpu, args.timeout)
        again = {k: level[k] for k in level if found[k].note}
        if again:  # out of memory beside other problems: once more, one at a time
            found |= problemcheck.measure(again, gpus, 1, args.timeout)
        write(report(todo, found, args, time.monotonic() - t0), args.out)


def report(todo: dict[str, WorkerJob], found: dict[str, CheckStrength], args: argparse.Namespace, wall: float) -> str:
    weak = {k: v for k, v in found.items() if not v.note and v.weak}
    still = {k: v for k, v in weak.items() if v.still_pass}
    failed = {k: v for k, v in found.items() if v.note}
    out = [f"check strength of {len(todo)} problems ({args.problems.name}, levels {' '.join(map(str, args.levels))}), fp32 atol = rtol = "
           f"{args.tol:g}, device {args.device}, {wall:.0f} s",
           f"weak before strengthening: {len(weak)}   still weak after: {len(still)}   not measured: {len(failed)}", ""]
    for lv in args.levels:
        names = [k for k in todo if k.startswith(f"level{lv}/")]
        wk = [k for k in names if k in weak]
        out.append(f"level {lv}: {len(names)} problems, {len(wk)} weak before, {sum(1 for k in wk if k in still)} still weak after, "
                   f"{sum(1 for k in names if k in failed)} not measured")
    out.append("")
    out += [line(k, found[k]) for k in todo]
    return "\n".join(out) + "\n"


def write(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)


if __name__ == "__main__":
    main()
