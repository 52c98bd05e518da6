"""Fuzz collect and the site build with mutated traces; prints tracebacks / cases (target: 0).

    python benchmarks/fuzz_collect.py [--cases 1100] [--batch 50] [--seed 10]

Every case is a run folder: a sample trace from data/ (with its attachments) mutated once, or one of
the hostile cases of issue 10 (links to /dev/zero, FIFOs, loops, NUL bytes, huge integers, deep
nesting, lone surrogates, non-UTF-8 and over-long names, bad profiler `dur`, bad ncu IDs and fields).
Cases are built 50 to a DATA folder through `reporter.pipeline.build` (collect, then render and write);
a batch that raises is rebuilt case by case to count the cases that crash. A "traceback" is an
exception escaping collect or the build; an "internal" error is one a per-run guard caught (a bug
that cost only that run: collect's guard, or a page the renderer could not write). Output committed beside this file: fuzz_collect.txt.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reporter.pipeline import build
from reporter.records import ValidationSettings

HOSTILE_VALUES: list[Any] = [None, True, -1, 0, 10**30, 1e308, "", "\ud800", "x" * 5000, [], {}, "../../etc/passwd",
                             "<script>alert(1)</script>", "a\u0000b", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0",
                             float("nan"), float("inf"), {"a": [1, {"b": None}]}]


def seeds() -> list[tuple[Path, dict[str, Any]]]:
    found = sorted((ROOT / "data").glob("*/trace.json")) + sorted((ROOT / "examples").rglob("trace.json"))
    return [(p.parent, json.loads(p.read_text(encoding="utf-8"))) for p in found]


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths_of(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths_of(v, (*prefix, i))
    return out


def set_at(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def mutate_json(rng: random.Random, doc: dict[str, Any]) -> str:
    doc = copy.deepcopy(doc)
    path = rng.choice([p for p in paths_of(doc) if p])
    op = rng.choice(["delete", "value", "value", "deep", "surrogate", "bigint"])
    if op == "delete":
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    elif op == "deep":
        depth = rng.choice([20, 70, 990, 3000])
        set_at(doc, path, json.loads("[" * depth + "]" * depth) if depth < 900 else None)
        if depth >= 900:
            return json.dumps(doc).replace("null", "[" * depth + "]" * depth, 1)
    elif op == "surrogate":
        set_at(doc, path, f"before \ud800 {rng.random()} \udfff after")
    elif op == "bigint":
        text = json.dumps(doc)
        return text.replace('"schema_version": 2', '"schema_version": 2, "turns_used": 1' + "0" * rng.choice([30, 400, 5000]))
    else:
        set_at(doc, path, rng.choice(HOSTILE_VALUES))
    return json.dumps(doc)


def mutate_bytes(rng: random.Random, doc: dict[str, Any]) -> bytes:
    raw = bytearray(json.dumps(doc).encode())
    if rng.random() < 0.5:
        return bytes(raw[: rng.randrange(len(raw))])
    for _ in range(rng.randint(1, 8)):
        raw[rng.randrange(len(raw))] = rng.randrange(256)
    return bytes(raw)


def hostile(rng: random.Random, folder: Path, doc: dict[str, Any]) -> str:
    """One of issue 10's cases, made in `folder`; returns its name."""
    kind = rng.choice(["dev_zero", "fifo", "outside_link", "loop", "nul_attachment", "dotdot_attachment", "bad_dur",
                       "bad_id", "huge_field", "long_name", "model_name"])
    trace = folder / "trace.json"
    doc = copy.deepcopy(doc)
    if kind == "dev_zero":
        trace.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(trace)
    elif kind == "outside_link":
        trace.symlink_to("/etc/passwd")
    elif kind == "loop":
        trace.symlink_to("trace.json")
    else:
        if kind in ("nul_attachment", "dotdot_attachment"):
            doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel",
                                   "path": "a\u0000b.csv" if kind == "nul_attachment" else "../../../../etc/passwd"}]
        elif kind == "bad_dur":
            (folder / "p.json").write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
                                                                       "dur": rng.choice(["fast", None, {}, -1])}]}))
            doc["attachments"] = [{"kind": "torch_profiler_trace", "role": "kernel", "path": "p.json"}]
        elif kind in ("bad_id", "huge_field"):
            name = "k" * 140_000 if kind == "huge_field" else "k"
            launch = "abc" if kind == "bad_id" else "0"
            (folder / "k.csv").write_text('"ID","Process ID","Kernel Name","gpu__time_duration.sum"\n'
                                          f'"","","","nsecond"\n"{launch}","1","{name}","1500"\n')
            doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "k.csv"}]
        elif kind == "long_name":
            doc["run"]["problem_file"] = "level2/" * rng.choice([1, 40]) + "8_" + "P" * rng.choice([10, 400]) + ".py"
            doc["run"]["configuration"] = "c" * rng.choice([5, 300])
        elif kind == "model_name":
            doc["run"]["model"] = "GPT 4 " + "m" * rng.choice([10, 300, 3000])
        trace.write_text(json.dumps(doc), encoding="utf-8")
    return kind


def make_case(rng: random.Random, data: Path, index: int, pool: list[tuple[Path, dict[str, Any]]]) -> str:
    src, doc = rng.choice(pool)
    name = f"case-{index:04d}"
    roll = rng.random()
    if roll < 0.05:
        name = os.fsdecode(name.encode() + b"-\xff\xfe")
    elif roll < 0.08:
        name = name + "-" + "n" * 240
    folder = data / name
    shutil.copytree(src, folder, symlinks=True)
    (folder / "trace.json").unlink()
    pick = rng.random()
    if pick < 0.6:
        (folder / "trace.json").write_text(mutate_json(rng, doc), encoding="utf-8", errors="surrogatepass")
        return "json-mutation"
    if pick < 0.8:
        (folder / "trace.json").write_bytes(mutate_bytes(rng, doc))
        return "byte-mutation"
    return "hostile:" + hostile(rng, folder, doc)


def timed(seconds: int, fn: Callable[[], Any]) -> Any:
    def hang(*_: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s (a blocking read?)")
    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_batch(data: Path, site: Path) -> tuple[Any, str | None]:
    try:
        summary = timed(300, lambda: build(data, site, ValidationSettings(), validate=False))
        return summary, None
    except Exception:  # noqa: BLE001 - counting them is the point
        return None, traceback.format_exc(limit=3).strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1100)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seed", type=int, default=10)
    args = ap.parse_args()
    import logging
    logging.getLogger("reporter").setLevel(logging.CRITICAL)  # the problems are counted, not printed
    rng = random.Random(args.seed)
    pool = seeds()
    kinds: Counter[str] = Counter()
    tracebacks: Counter[str] = Counter()
    crashed_cases = internal = page_errors = problems = runs = pages = 0
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="fuzz-collect-"))
    try:
        for b in range(0, args.cases, args.batch):
            data = work / f"batch-{b:04d}"
            data.mkdir()
            names = []
            for i in range(b, min(b + args.batch, args.cases)):
                kinds[make_case(rng, data, i, pool)] += 1
                names.append(i)
            summary, crash = run_batch(data, work / f"site-{b:04d}")
            if crash is not None:
                tracebacks[crash] += 1
                for folder in sorted(p for p in data.iterdir()):  # which cases crash on their own?
                    one = work / "one"
                    shutil.rmtree(one, ignore_errors=True)
                    one.mkdir()
                    folder.rename(one / folder.name)
                    if run_batch(one, work / "site-one")[1] is not None:
                        crashed_cases += 1
                    shutil.rmtree(work / "site-one", ignore_errors=True)
                continue
            internal += sum(1 for p in summary.problems if p.field == "(internal)")
            page_errors += sum(1 for p in summary.problems if p.field == "(page)")
            problems += len(summary.problems)
            runs += summary.runs
            pages += summary.pages
            shutil.rmtree(work / f"site-{b:04d}", ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    batches = -(-args.cases // args.batch)
    print(f"cases: {args.cases} in {batches} batches of {args.batch} (seed {args.seed}), {time.monotonic() - started:.0f} s")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind:28s} {n:5d}")
    print(f"tracebacks (exceptions escaping collect or the build): {sum(tracebacks.values())} batches, "
          f"{crashed_cases} cases crash on their own")
    for line, n in tracebacks.most_common():
        print(f"  {n} x {line}")
    print(f"internal errors caught by the per-run guard: {internal} in collect, {page_errors} pages that failed to render")
    print(f"runs rendered: {runs}, pages written: {pages}, files reported as not used: {problems}")


if __name__ == "__main__":
    main()
