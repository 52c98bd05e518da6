"""Issue 49, item 1, measured: what one run holding a huge base64 tool result adds to a cold build, indexing
included. Each build runs in its own process (`reporter build DATA SITE --no-validate`); CPU-s are that process's
and its children's (Pagefind included), so other work on the machine does not count. Target: each case adds
less than 5 CPU-s to the build without it.

    nice -n 5 python benchmarks/search_bounds.py

Output committed beside this file: search_bounds.txt.
"""

from __future__ import annotations

import base64
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def trace(run_id: str, tool_text: str) -> dict[str, object]:
    return {"schema_version": 2, "run": {"configuration": "cfg", "benchmark": "b", "model": "m", "level": 1, "problem_id": 1,
                                         "problem_file": "1_T.py", "recorded_verdict": "correct", "id": run_id},
            "turns": [{"index": 0, "reasoning": "I will dump the tensor to look at it.",
                       "calls": [{"tool": "run", "arguments": {"cmd": "python dump.py"}, "result": {"ok": True, "text": tool_text}}]}]}


def cold_build(data: Path, site: Path) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "reporter.cli", "build", str(data), str(site), "--no-validate"],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.returncode


def main() -> None:
    rng = random.Random(49)
    cases = {"no blob (two small runs)": None, "a 4 MB base64 tool result": 3_000_000, "a 50 MB base64 tool result": 37_500_000}
    lines = [__doc__.split("\n\n")[0].replace("\n", " "), "", f"{'case':32s} {'trace':>9s} {'CPU-s':>7s} {'wall s':>7s} {'adds CPU-s':>10s}  exit"]
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, raw in cases.items():
            data = Path(tmp) / name.split()[1] / "data"
            for rid in ("small-a", "small-b"):
                (data / rid).mkdir(parents=True)
                (data / rid / "trace.json").write_text(json.dumps(trace(rid, "ok")))
            size = 0
            if raw is not None:
                blob = base64.encodebytes(rng.randbytes(raw)).decode()  # line-wrapped at 76, as tools print it
                (data / "blob").mkdir()
                text = json.dumps(trace("blob", blob))
                (data / "blob" / "trace.json").write_text(text)
                size = len(text)
            cpu, wall, rc = cold_build(data, data.parent / "site")
            base = cpu if base is None else base
            lines.append(f"{name:32s} {size / 1e6:7.1f}MB {cpu:7.2f} {wall:7.1f} {cpu - base:10.2f}  {rc}")
            print(lines[-1], flush=True)
    lines += ["", "target: each case adds less than 5 CPU-s (issue 49)"]
    (Path(__file__).with_suffix(".txt")).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
