"""What sharding the search index by model saves a rebuild: CPU seconds and bytes written for the index.

    python benchmarks/search_shards.py [--runs 1000 10000] > benchmarks/search_shards.txt

Rows are synthetic, spread over `make_corpus.MODELS` (six models) as `make_corpus.py` spreads its runs,
with a kernel name of their own per run (as `--unique` renames identifiers). Three figures per size:
- one index: the whole index made again (what every rebuild that changed a row cost before sharding);
- cold: every shard and the manifest made;
- one row changed: every shard's key, and the one changed shard made (the others are kept).
CPU time is this process's (`time.process_time`), the best of three, so a busy machine inflates it little.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_corpus import MODELS, PROBLEM_NAMES

from reporter.render import search

VERDICTS = ["correct", "incorrect", "compile_error", "no_submission", "runtime_error"]


def rows(n: int, seed: int = 0) -> list[tuple[str, search.IndexRow]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        model, pid, name = rng.choice(MODELS), rng.randint(1, 100), rng.choice(PROBLEM_NAMES)
        level = rng.choice([1, 2])
        out.append((model, search.IndexRow(
            f"runs/r{i:05d}.html", f"L{level} · problem {pid}", f"{pid}_{name}.py", model, "popcorn · synthetic_l12",
            rng.choice(VERDICTS), "re-validated", round(rng.uniform(0.1, 4), 3), rng.randint(0, 3),
            f"{name.lower()}_kernel_{i} reduce_{i}", (0, "popcorn", 0, "synthetic_l12", model, level, pid, f"r{i:05d}"))))
    return sorted(out, key=lambda mr: mr[1].order)


def best(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(3):
        search.tokens.cache_clear()  # a build's process starts with none of its terms cut
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def measure(n: int) -> None:
    given = rows(n)
    just_rows = [r for _, r in given]
    def one_index() -> str:
        return search._jsonp(search.INDEX_CALLBACK, {"rows": [r.as_list() for r in just_rows],
                                                     "index": search.minisearch_index(just_rows)})
    whole = one_index()
    shards = search.shards(given)
    texts = [s.text() for s in shards]
    edited = list(given)
    model, row = edited[n // 2]
    edited[n // 2] = (model, dataclasses.replace(row, kernels="renamed_kernel"))
    after = search.shards(edited)
    changed = [s for s, old in zip(after, shards) if s.key != old.key]
    one = best(one_index)
    cold = best(lambda: [s.text() for s in search.shards(given)] + [search.manifest_js(shards)])
    rebuild = best(lambda: [s.text() for s in search.shards(edited) if s.key not in {o.key for o in shards}])
    size = sum(len(t.encode()) for t in texts)
    print(f"{n} runs, {len(shards)} shards: one index {one:.3f} CPU-s, {len(whole.encode()) / 1e6:.2f} MB; "
          f"cold (all shards) {cold:.3f} CPU-s, {size / 1e6:.2f} MB; one row changed: {len(changed)} shard rewritten, "
          f"{rebuild:.3f} CPU-s, {len(changed[0].text().encode()) / 1e6:.2f} MB written; "
          f"manifest {len(search.manifest_js(shards).encode())} bytes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[1000, 10000])
    for n in ap.parse_args().runs:
        measure(n)
    print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
