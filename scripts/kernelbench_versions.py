"""Record one KernelBench problem-file snapshot (every levelN/P_*.py and its sha256) in
reporter/collect/kernelbench-versions.json, the table `collect.refversion` tells versions apart with.

    python scripts/kernelbench_versions.py NAME FOLDER --title TITLE [--date YYYY-MM-DD]

The snapshots shipped: `leaderboard-2025`, the early-2025 files the public KernelBench leaderboard's runs were
scored on (the dev corpus's problems/ folder), and `423217d`, KernelBench at commit 423217d9fda9 (2026-03-05).
A problem id restarts at 1 in each level, so files are keyed "level/problem id".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "reporter" / "collect" / "kernelbench-versions.json"


def scan(folder: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for level in sorted(folder.glob("level*")):
        lv = re.fullmatch(r"level(\d+)", level.name)
        for path in sorted(level.glob("*.py")) if lv else []:
            if (m := re.match(r"(\d+)_", path.name)) is not None:
                files[f"{int(lv.group(1))}/{int(m.group(1))}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(files.items(), key=lambda kv: tuple(map(int, kv[0].split("/")))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--title", required=True)
    ap.add_argument("--date", default="")
    args = ap.parse_args()
    doc = json.loads(TABLE.read_text()) if TABLE.exists() else {"format": 1, "snapshots": {}}
    files = scan(args.folder)
    if not files:
        raise SystemExit(f"no levelN/P_*.py file under {args.folder}")
    doc["snapshots"][args.name] = {"title": args.title, "date": args.date, "files": files}
    TABLE.write_text(json.dumps(doc, indent=0, sort_keys=False) + "\n")
    print(f"{args.name}: {len(files)} problem files -> {TABLE}")


if __name__ == "__main__":
    main()
