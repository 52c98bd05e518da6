"""Calibration of the flags on real kernels (issue 31): how often each flag fires on LLM-written KernelBench
submissions that an independent harness found correct, and whether each firing is right.

    python benchmarks/calibration.py prepare DATA [--n 150]     # import a sample of the shared corpus into DATA
    reporter validate DATA                                       # on the GPU machine (results cache: resumable)
    python benchmarks/calibration.py report DATA [--judged benchmarks/calibration-judged.toml]
                                                 [--cheats benchmarks/cheat_suite-h200.txt]
    python benchmarks/calibration.py keep DATA                   # results so far into benchmarks/calibration-results/

`keep` stores the sample's results without their logs and quoted source lines (the corpus's kernels stay out of
this repository) so that a later session's `prepare` puts them back and `reporter validate` resumes where the GPU
time ran out.

The corpus is `../shared/corpora/kernelbench-leaderboard-dev` (343 submissions from 7 LLMs, every one recorded
correct on an L40S by the leaderboard's harness; its README asks that the kernels are not copied into this
repository, so DATA lives outside it or in an ignored folder). The sample is deterministic: every level-2 and
level-3 submission (where cuBLAS-plus-epilogue kernels and stateful models live) and level-1 submissions in the
order of their file's hash until `--n`.

`report` prints, per flag (every suspect rule, weak check, checks incomplete, verdict flips against the
recorded verdict): the runs it fired on, each with its message and the judgement written in the judged file
(`[runs."RUN_ID"] right = true|false, honest = true|false, why = "..."`, written after reading the kernel: `right`
says whether the flag's claim is true, `honest` whether the author did anything dishonest), then the share of the
sample where a flag fired wrongly (target: at most 2%), and the cheat suite's caught / missed lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpora" / "kernelbench-leaderboard-dev"
TARGET_SHARE = 0.02  # flags fired on honest real kernels: at most this share of the sample
KEPT = ROOT / "benchmarks" / "calibration-results"


def _order(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def sample(corpus: Path, n: int) -> dict[str, list[str]]:
    """Run folder -> the kernel files sampled from it: every level-2 and level-3 kernel, then level 1 by hash."""
    files = sorted(corpus.glob("runs/*/level_*_kernel.py"))
    chosen = [f for f in files if not f.name.startswith("level_1_")]
    chosen += sorted((f for f in files if f.name.startswith("level_1_")), key=lambda f: _order(f"{f.parent.name}/{f.name}"))[: max(0, n - len(chosen))]
    out: dict[str, list[str]] = defaultdict(list)
    for f in sorted(chosen):
        out[f.parent.name].append(f.name)
    return dict(out)


def prepare(data: Path, n: int, corpus: Path = CORPUS, rules: str | None = None, restore: bool = True) -> int:
    """Copy the sampled run folders (kernels and their eval entries) to a scratch folder and import them into DATA
    (`rules`: the rule set they were scored under; `restore`: put back the results kept from earlier sessions)."""
    picked = sample(corpus, n)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        for folder, names in picked.items():
            dest = runs / folder
            dest.mkdir(parents=True)
            evals = json.loads((corpus / "runs" / folder / "eval_results.json").read_text())
            keep = {name.split("_problem_")[1].split("_")[0] for name in names}
            (dest / "eval_results.json").write_text(json.dumps({k: v for k, v in evals.items() if k in keep}))
            for name in names:
                shutil.copy(corpus / "runs" / folder / name, dest / name)
        cmd = [sys.executable, "-m", "reporter.cli", "import", "kernelbench", str(runs), "--problems", str(corpus / "problems"),
               "--out", str(data), *(["--rules", rules] if rules else [])]
        subprocess.run(cmd, check=True, cwd=ROOT)
    restored = 0
    for src in sorted(KEPT.glob("*/*.json")) if restore else ():  # results a session before measured: `reporter validate` skips them
        dest = data / "validation" / src.parent.name / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)
        restored += 1
    if restored:
        print(f"restored {restored} results measured before from {KEPT.relative_to(ROOT)}")
    total = sum(len(v) for v in picked.values())
    print(f"imported {total} kernels from {len(picked)} run folders into {data}")
    return total


def _flags(row: dict[str, Any], reasons: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(flag, message) for every claim the site makes about this run beyond its verdict."""
    out = list(reasons)
    if row.get("weak_check"):
        out.append(("weak_check", f"would also pass: {row['weak_check']}"))
    if row.get("checks_incomplete"):
        out.append(("checks_incomplete", f"did not run: {row.get('incomplete_checks')}"))
    if row.get("verdicts_disagree"):
        out.append(("verdict_flip", f"recorded {row.get('recorded_verdict')}, re-validated {row.get('revalidated_verdict')}"))
    return out


def report(data: Path, judged_file: Path | None, cheats_file: Path | None) -> str:
    from reporter.collect import collect
    from reporter.collect.suspicion import suspicion
    from reporter.collect.validation import load_validations
    from reporter.frames import run_row
    judged: dict[str, Any] = tomllib.loads(judged_file.read_text())["runs"] if judged_file and judged_file.exists() else {}
    runs = collect(data).runs
    cached, _ = load_validations(data, runs)
    lines, fired, wrong, validated = [], defaultdict(list), set(), 0
    verdicts: Counter[str] = Counter()
    honest_suspect = set()
    for r in runs:
        c = cached.get(r.run_id)
        if c is None:
            continue
        validated += 1
        verdicts[c.result.verdict] += 1
        row = run_row(r, c)
        sus = suspicion(r, c.result)
        for flag, message in _flags(row, [(x.check, x.message) for x in sus.reasons]):
            fired[flag].append((r.run_id, message))
        if sus.suspect and judged.get(r.run_id, {}).get("honest") is True:
            honest_suspect.add(r.run_id)
    lines.append(f"sample        {len(runs)} imported, {validated} re-validated on "
                 f"{next((c.result.environment.gpu for c in cached.values() if c), 'no GPU')}")
    lines.append("verdicts      " + ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items())))
    lines.append("")
    for flag in sorted(fired):
        hits = fired[flag]
        false_alarms = [rid for rid, _ in hits if judged.get(rid, {}).get("right") is False]
        unjudged = [rid for rid, _ in hits if rid not in judged]
        lines.append(f"{flag}: fired on {len(hits)} of {validated}; judged wrong {len(false_alarms)}; not yet judged {len(unjudged)}")
        for rid, message in sorted(hits):
            j = judged.get(rid)
            verdict = "NOT JUDGED" if j is None else (("right" if j.get("right") else "WRONG (false alarm)")
                                                      + (", honest author" if j.get("honest") else ", dishonest") + f": {j.get('why', '')}")
            lines.append(f"  {rid}\n      flag: {message[:220]}\n      read: {verdict}")
            if j is not None and j.get("right") is False and flag != "checks_incomplete":
                wrong.add(rid)
        lines.append("")
    share = len(wrong) / validated if validated else 0.0
    lines.append(f"false alarms  {len(wrong)} of {validated} re-validated runs carry a flag judged wrong = {share:.1%} "
                 f"(target <= {TARGET_SHARE:.0%}: {'met' if share <= TARGET_SHARE else 'MISSED'}); "
                 f"{len([h for f in fired.values() for h in f if h[0] not in judged])} firings not yet judged")
    lines.append(f"honest, but suspect  {len(honest_suspect)} of {validated}: " + (", ".join(sorted(honest_suspect)) or "none")
                 + " (a suspect rule's claim can be true of honest work: no kernel of its own)")
    if cheats_file and cheats_file.exists():
        lines += ["", f"cheat suite ({cheats_file.name}):", *("  " + x for x in cheats_file.read_text().splitlines() if x.strip())]
    return "\n".join(lines) + "\n"


def keep(data: Path) -> int:
    """The sample's results, slimmed (no logs, no quoted kernel lines), into KEPT; a killed build's 'crashed' is
    not a result and is left out."""
    n = 0
    for path in sorted((data / "validation").glob("*/*.json")):
        if path.parent.name == "problems":
            continue
        doc = json.loads(path.read_text())
        if doc.get("verdict") == "crashed" and "SIGKILL" in doc.get("reason", ""):
            continue
        doc["log"], doc["output_tail"] = "", None
        for f in doc.get("static_findings", []):
            f["text"] = ""
        dest = KEPT / path.parent.name / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(doc, indent=1) + "\n")
        n += 1
    print(f"kept {n} results in {KEPT.relative_to(ROOT)}")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("data", type=Path)
    p.add_argument("--n", type=int, default=150)
    p.add_argument("--corpus", type=Path, default=CORPUS)
    r = sub.add_parser("report")
    r.add_argument("data", type=Path)
    r.add_argument("--judged", type=Path, default=ROOT / "benchmarks" / "calibration-judged.toml")
    r.add_argument("--cheats", type=Path, default=ROOT / "benchmarks" / "cheat_suite-h200.txt")
    k = sub.add_parser("keep")
    k.add_argument("data", type=Path)
    args = ap.parse_args()
    if args.cmd == "keep":
        keep(args.data)
    elif args.cmd == "prepare":
        prepare(args.data, args.n, args.corpus)
    else:
        sys.stdout.write(report(args.data, args.judged, args.cheats))


if __name__ == "__main__":
    main()
