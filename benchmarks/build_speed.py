"""Time `reporter build` on a synthetic corpus: collect and render wall time, pages per second, site size.

    python benchmarks/build_speed.py [--runs 240]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=240)
    args = ap.parse_args()
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.render import build_site

    with tempfile.TemporaryDirectory() as tmp:
        data, site = Path(tmp) / "data", Path(tmp) / "site"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), str(data), "--runs", str(args.runs)],
                       check=True, capture_output=True)
        t0 = time.perf_counter()
        col = collect(data)
        t1 = time.perf_counter()
        pages = build_site(col, load_validations(data, col.runs)[0], data, site).pages
        t2 = time.perf_counter()
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        print(f"runs {len(col.runs)}  collect {t1 - t0:.2f} s  render {t2 - t1:.2f} s  pages {pages}  "
              f"{pages / (t2 - t1):.1f} pages/s  site {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
