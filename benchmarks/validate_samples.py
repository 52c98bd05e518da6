"""Validate the sample kernels and print wall time per kernel: compile, correctness, timing; cold and cached.

    python benchmarks/validate_samples.py [DATA]

Works on a private copy of DATA and a fresh build cache, so the numbers are cold the first time:
  cold   - nothing built: load_inline compiles the extension
  warm   - extension already built (content-addressed build cache), results re-measured (--force)
  cached - results already in DATA/validation: no GPU work at all
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(data: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="reporter-bench-"))
    os.environ["REPORTER_BUILD_CACHE"] = os.environ.get("REPORTER_BUILD_CACHE", str(work / "ext"))
    from reporter.collect import collect
    from reporter.core.records import ValidationSettings
    from reporter.validate import gpu_available, validate_runs

    if not gpu_available():
        sys.exit("no CUDA device: this benchmark measures GPU validation")
    copy = work / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("validation"))
    runs = [r for r in collect(copy).runs if r.trace.final_kernel is not None]
    settings = ValidationSettings()
    from reporter.core.schema import PHASES
    cols = ("compile", *PHASES)
    print(f"{'pass':<7} {'run':<22} {'verdict':<14} " + " ".join(f"{c[:11]:>11}" for c in cols) + f" {'wall s':>8}")
    for label, force in (("cold", True), ("warm", True), ("cached", False)):
        t0 = time.perf_counter()
        results = validate_runs(copy, runs, settings, force=force, jobs=4)
        wall = time.perf_counter() - t0
        for run_id, (res, cached) in sorted(results.items()):
            p = {} if cached else res.phase_s
            print(f"{label:<7} {run_id:<22} {res.verdict:<14} " + " ".join(f"{p.get(c, 0.0):>11.2f}" for c in cols)
                  + f" {wall / max(1, len(results)):>8.2f}")
        print(f"{label:<7} {'(all ' + str(len(results)) + ' kernels)':<22} {'':<14} " + " ".join(f"{'':>11}" for _ in cols)
              + f" {wall:>8.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "data")
