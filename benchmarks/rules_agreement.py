"""Issue 42's measure: each calibration kernel replayed under the rules that scored it, against its recorded verdict,
and our strict audit beside it, every disagreement with its cause.

    python benchmarks/rules_agreement.py prepare DATA          # the 150 calibration kernels, imported under
                                                               # kernelbench-2025 (the leaderboard's era)
    bash benchmarks/rules_agreement.sh PART OF                 # on the GPU: part PART (0-based) of OF of the runs
    python benchmarks/rules_agreement.py report DATA > benchmarks/rules_agreement.txt

The sample is `calibration.py`'s (every level-2 and level-3 submission of the shared leaderboard corpus, level 1 by
hash up to 150). Every one of them is recorded correct by the leaderboard's harness on an L40S, under KernelBench's
early-2025 rules (fp32 atol = rtol = 1e-2, training mode, seeded construction, five trials). The corpus's
`eval_results.json` files carry this workplace's copy date, so the rules are given (`--rules`), not inferred.

Targets (issue 42): the replay agrees with the recorded verdict on at least 99% of the kernels, each disagreement
listed with its cause; every flip under our audit (recorded correct, strict not) carries a cause class.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
RULES = "kernelbench-2025"
AGREE_TARGET = 0.99


def run_ids(data: Path) -> list[str]:
    return sorted(str(p.parent.relative_to(data)) for p in data.rglob("trace.json") if "validation" not in p.parts)


def device(data: Path, part: int, of: int, budget_s: int) -> int:
    """`reporter validate` on this part of the runs, stopped after `budget_s` (what finished is stored)."""
    ids = run_ids(data)[part::of]
    cmd = [sys.executable, "-m", "reporter.cli", "validate", str(data), "--quiet", *(a for i in ids for a in ("--run", i))]
    print(f"part {part} of {of}: {len(ids)} runs", flush=True)
    try:
        return subprocess.run(cmd, cwd=ROOT, timeout=budget_s).returncode
    except subprocess.TimeoutExpired:
        print(f"stopped after {budget_s} s: the finished results are stored, a later call resumes", flush=True)
        return 124


def report(data: Path) -> str:
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.core.judgement import judge, run_rules

    runs = collect(data).runs
    cached, _ = load_validations(data, runs)
    lines: list[str] = []
    agree, replayed, flips, flips_caused, no_replay = 0, 0, 0, 0, []
    disagreements: list[str] = []
    flip_lines: list[str] = []
    causes: Counter[str] = Counter()
    at_bound: list[str] = []
    audit: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    for r in runs:
        c = cached.get(r.run_id)
        if c is None:
            continue
        res = c.result
        gpus[res.environment.gpu or "?"] += 1
        audit[res.verdict] += 1
        rules, why = run_rules(r.source.run.rules, r.source.run.rules_from)
        j = judge(rules, why, res.benchmark, res.verdict, res.reason or "", res.precision or "fp32")
        recorded = r.source.run.recorded_verdict or "?"
        if j.benchmark not in ("correct", "incorrect"):
            no_replay.append(f"  {r.run_id}: {j.benchmark}: {j.benchmark_why[:200]}")
            continue
        replayed += 1
        if j.benchmark == recorded:
            agree += 1
        else:
            disagreements.append(f"  {r.run_id}: recorded {recorded}, replayed {j.benchmark} under {rules.name}: "
                                 f"{j.benchmark_why[:240]}")
        if j.at_bound:
            at_bound.append(f"  {r.run_id} ({j.benchmark}): {j.at_bound}")
        if recorded == "correct" and res.verdict != "correct":
            flips += 1
            flips_caused += j.cause_class is not None or j.benchmark == "incorrect"
            causes[j.cause_class or ("none: the replay is incorrect too" if j.benchmark == "incorrect" else "NONE")] += 1
            flip_lines.append(f"  {r.run_id}: ours {res.verdict}; {rules.name} {j.benchmark}; cause "
                              f"{j.cause_class or '-'}: {(j.cause or (res.reason or ''))[:260]}")
    share = agree / replayed if replayed else 0.0
    if not replayed:
        return (f"kernels       {len(runs)} imported under {RULES}; {sum(gpus.values())} with a result\n\n"
                "PENDING: no kernel has been replayed yet (the replay runs CUDA kernels: it needs the GPU machine).\n"
                "Every figure of this benchmark waits for `bash benchmarks/rules_agreement.sh PART OF` on a GPU.\n")
    lines += [f"kernels       {len(runs)} imported under {RULES}; {sum(gpus.values())} with a result "
              f"({', '.join(f'{g} {n}' for g, n in sorted(gpus.items()))})",
              "our audit     " + ", ".join(f"{v} {n}" for v, n in sorted(audit.items())),
              "",
              f"replayed under {RULES}: {replayed}; agrees with the recorded verdict: {agree} of {replayed} "
              f"({100 * share:.1f}%; target >= {100 * AGREE_TARGET:.0f}%: {'met' if share >= AGREE_TARGET else 'MISSED'})"]
    lines += disagreements or ["  (no disagreement)"]
    lines += ["", f"no replay verdict: {len(no_replay)}", *no_replay, "",
              f"flips under our audit (recorded correct, strict not): {flips}; with a cause: {flips_caused} "
              f"(target 100%: {'met' if flips == flips_caused else 'MISSED'})",
              "  causes: " + (", ".join(f"{k} {n}" for k, n in sorted(causes.items())) or "-"), *flip_lines, "",
              f"at the tolerance (worst value within 0.5-2x {RULES}'s bound): {len(at_bound)}", *at_bound]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("data", type=Path)
    p.add_argument("--n", type=int, default=150)
    d = sub.add_parser("device")
    d.add_argument("data", type=Path)
    d.add_argument("part", type=int)
    d.add_argument("of", type=int)
    d.add_argument("--budget-s", type=int, default=480)
    r = sub.add_parser("report")
    r.add_argument("data", type=Path)
    a = ap.parse_args()
    if a.cmd == "prepare":
        from calibration import prepare
        prepare(a.data, a.n, rules=RULES, restore=False)
        return 0
    if a.cmd == "device":
        return device(a.data, a.part, a.of, a.budget_s)
    sys.stdout.write(report(a.data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
