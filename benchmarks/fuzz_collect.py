"""Fuzz collect, the site build, the importer and publish with hostile input; every count printed must be 0.

    nice -n 19 python benchmarks/fuzz_collect.py [--cases 1100] [--batch 50] [--seed 10]

Every case is a run folder: a sample trace from data/ (with its attachments) mutated once, or one of
the hostile cases of issue 10 (links to /dev/zero, FIFOs, loops, NUL bytes, huge integers, deep
nesting, lone surrogates, non-UTF-8 and over-long names, bad profiler `dur`, bad ncu IDs and fields).
Issue 21 adds, per case, a planted secret (in a field, the folder name, an ncu CSV cell, an attachment's
name, a `.env` line, a bad schema_version, a cached result's environment, a JSON value under a secret
key); per batch, hostile config and cache files (FIFOs, links out, /dev/zero as reviews.toml,
redact-allow.txt, a cached result) and pairs of inputs that used to collide; and around the one site
every batch is built into, a user's files and folders named like our temporaries, plus a home folder
holding a stray marker. Cases are built 50 to a DATA folder through `reporter.build.build` (in one
process, with every `open` recorded); a batch that raises is rebuilt case by case to count the cases that
crash. Then hostile KernelBench run folders are imported and a site holding links is published.

Counted: whole-build losses (an exception escaping the build, a hang, a site not committed), opens
outside DATA (or the import source), hangs, user files touched, planted secrets found in any file of the
site or in the build's messages, and colliding inputs missing from the site. An "internal" error is one a
per-run guard caught (a bug that cost only that run). Output committed beside this file: fuzz_collect.txt.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import string
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzz_hostile import Hang, Opens, import_cases, plant_user_files, publish_cases, stray_marker_home, timed, touched

from reporter.build import build
from reporter.core import cache
from reporter.core.errors import SiteError
from reporter.core.records import ValidationResult, ValidationSettings, sha256_text

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


NCU_SAMPLE = ROOT / "data" / "seed-003-l2-p8" / "p8_new_raw.csv"
PLANTS = ("field", "folder", "ncu-cell", "attachment-name", "env-line", "bad-version", "cache-env", "json-secret-key")


def token(rng: random.Random) -> str:
    """A secret no other text holds: an OpenAI-shaped key with a random body."""
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    return f"sk-proj-{body[:20]}7Q{body[20:]}"


def password(rng: random.Random) -> str:
    return f"pw-{rng.getrandbits(40):x}-{rng.getrandbits(40):x}"


def plant(rng: random.Random, data: Path, folder: Path, doc: dict[str, Any], i: int) -> tuple[str, Path, list[str]]:
    """Put a secret somewhere DATA can hold one; returns (where, the run folder, the secrets to look for)."""
    where = rng.choice(PLANTS)
    key, pw = token(rng), password(rng)
    if where == "field":
        strings = [p for p in paths_of(doc) if p and isinstance(_get(doc, p), str)]
        set_at(doc, rng.choice(strings), f"see {key} here")
    elif where == "folder":
        folder = folder.with_name(f"{folder.name[:120]}-{key}")  # within the 255-byte limit of a name
    elif where in ("ncu-cell", "attachment-name"):
        name = "k.csv" if where == "ncu-cell" else f"missing-{key}.csv"
        doc.setdefault("attachments", []).append({"kind": "ncu_raw_csv", "role": "kernel", "path": name})
    elif where == "env-line":
        doc["prompt"] = f"{doc.get('prompt') or ''}\nSet up:\nDB_PASSWORD={pw}\n"
    elif where == "bad-version":
        doc["schema_version"] = f"{key} v3"
    elif where == "json-secret-key":
        doc["harness_metadata"] = {"env": {"DB_PASSWORD": pw, "note": "x"}}
    else:
        _cached_result(data, doc, i, key, pw)
    return where, folder, [key, key[:24], pw]


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _cached_result(data: Path, doc: dict[str, Any], i: int, key: str, pw: str) -> None:
    """A cached re-validation of the case's own kernel, its environment naming secrets."""
    doc["final_kernel"] = {"source": f"// case {i}\n" + str((doc.get("final_kernel") or {}).get("source", ""))}
    doc["reference_source"] = doc.get("reference_source") or "class Model: pass\n"
    kernel, ref = doc["final_kernel"]["source"], doc["reference_source"]
    result = ValidationResult(kernel_sha256=sha256_text(kernel), reference_sha256=sha256_text(ref), settings=ValidationSettings(),
                              environment={"gpu": f"NVIDIA H200 {key}", "host": f"DB_PASSWORD={pw}"},
                              verdict="correct", measured_at="2030-01-01T00:00:00Z")
    folder = cache.entry_dir(data, cache.content_key(kernel, ref))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.json").write_text(result.model_dump_json(), encoding="utf-8")


def make_case(rng: random.Random, data: Path, index: int, pool: list[tuple[Path, dict[str, Any]]]) -> tuple[str, str, list[str]]:
    """One mutated or hostile run folder; returns its kind, where a secret was planted and the secrets."""
    src, doc = rng.choice(pool)
    doc = copy.deepcopy(doc)
    name = f"case-{index:04d}"
    roll = rng.random()
    if roll < 0.05:
        name = os.fsdecode(name.encode() + b"-\xff\xfe")
    elif roll < 0.08:
        name = name + "-" + "n" * 200
    where, folder, secrets = plant(rng, data, data / name, doc, index) if rng.random() < 0.7 else ("", data / name, [])
    shutil.copytree(src, folder, symlinks=True)
    (folder / "trace.json").unlink()
    if where == "ncu-cell":
        (folder / "k.csv").write_text(NCU_SAMPLE.read_text().replace("grounded_top2_kernel(", f"kernel_{secrets[0]}("))
    pick = rng.random()
    if pick < 0.6 or where in ("bad-version", "cache-env"):
        (folder / "trace.json").write_text(mutate_json(rng, doc) if pick < 0.6 else json.dumps(doc),
                                           encoding="utf-8", errors="surrogatepass")
        return "json-mutation", where, secrets
    if pick < 0.8:
        (folder / "trace.json").write_bytes(mutate_bytes(rng, doc))
        return "byte-mutation", where, secrets
    return "hostile:" + hostile(rng, folder, doc), where, secrets


def batch_extras(rng: random.Random, data: Path, outside: Path, b: int) -> list[str]:
    """Hostile config and cache files, and pairs of inputs that used to collide; returns the pairs' markers."""
    target = rng.choice(["fifo", "link-out", "dev-zero"])
    for name in ("reviews.toml", "redact-allow.txt", f"validation/{'0' * 20}/r.json"):
        path = data / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if target == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(outside / "victim.txt" if target == "link-out" else "/dev/zero")
    base: dict[str, Any] = {"schema_version": 2, "run": {"benchmark": "kb", "configuration": "c", "model": "m", "level": 2, "problem_id": 1,
                                         "recorded_verdict": "correct"}, "turns": []}
    pairs: dict[str, dict[str, Any]] = {"trace.json": {}, "trace/trace.json": {}, os.fsdecode(b"caf\xe9") + "/trace.json": {},
             "caf\\xe9/trace.json": {}, "sep-a/trace.json": {"configuration": "c\x1fl2"},
             "sep-b/trace.json": {"model": "m\x1fx"}, "unknown/trace.json": {"model": "unknown"}, "none/trace.json": {"model": None}}
    markers: list[str] = []
    for rel, run in pairs.items():
        marker = f"collide-{b}-{len(markers)}"
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text(json.dumps({**base, "run": {**base["run"], **run, "source_note": marker}}),
                                encoding="utf-8", errors="surrogatepass")
        markers.append(marker)
    return markers


def leaked(site: Path, text: str, secrets: list[str]) -> list[str]:
    """The planted secrets found in any file of the site (its state too) or in the build's messages."""
    blobs = [p.read_bytes() for p in site.rglob("*") if p.is_file() and not p.is_symlink() and "static" not in p.parts]
    return [s for s in secrets if s in text or any(s.encode() in b for b in blobs)]


def run_batch(data: Path, site: Path, opens: Opens) -> tuple[Any, str | None, list[str]]:
    with opens.recording() as paths:
        try:
            summary = timed(600, lambda: build(data, site, ValidationSettings(), validate=False, jobs=1))
            return summary, None, Opens.outside(paths, data, site.parent)
        except Hang as exc:
            return None, f"hang: {exc}", Opens.outside(paths, data, site.parent)
        except Exception:  # noqa: BLE001 - counting them is the point
            return None, traceback.format_exc(limit=3).strip().splitlines()[-1], Opens.outside(paths, data, site.parent)


def check_batch(summary: Any, site: Path, secrets: list[str], markers: list[str], bad: Counter[str]) -> None:
    # every planted run's own note is on a run page of the site (colliding inputs must not merge)
    notes = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (site / "runs").glob("*.html"))
    bad["colliding inputs missing"] += sum(1 for m in markers if m not in notes)
    messages = "\n".join([summary.line(), *(str(p) for p in summary.problems)])
    bad["planted secrets published"] += len(leaked(site, messages, secrets))
    bad["internal"] += sum(1 for p in summary.problems if p.field == "(internal)")
    bad["pages failed"] += sum(1 for p in summary.problems if p.field == "(page)")
    bad["runs"] += summary.runs
    bad["pages"] += summary.pages


def crash_cases(data: Path, work: Path, opens: Opens) -> int:
    """How many of a crashed batch's cases crash a build on their own."""
    crashed = 0
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        one = work / "one"
        shutil.rmtree(one, ignore_errors=True)
        one.mkdir()
        folder.rename(one / folder.name)
        crashed += run_batch(one, work / "one-site" / "site", opens)[1] is not None
        shutil.rmtree(work / "one-site", ignore_errors=True)
    return crashed


def build_batches(args: argparse.Namespace, work: Path, opens: Opens, kinds: Counter[str]) -> Counter[str]:
    rng = random.Random(args.seed)
    pool = seeds()
    bad: Counter[str] = Counter()
    outside, site = work / "outside", work / "sites" / "site"
    outside.mkdir()
    site.parent.mkdir()
    home = stray_marker_home(work)  # the files that must stay as they are
    for b in range(0, args.cases, args.batch):
        data = work / f"batch-{b:04d}"
        data.mkdir()
        secrets: list[str] = []
        for i in range(b, min(b + args.batch, args.cases)):
            kind, where, planted = make_case(rng, data, i, pool)
            kinds[kind] += 1
            if where:
                kinds[f"secret planted: {where}"] += 1
            secrets += planted
        markers = batch_extras(rng, data, outside, b)
        user = plant_user_files(site, outside)
        summary, crash, out = run_batch(data, site, opens)
        bad["batches"] += 1
        bad["outside opens"] += len(out)
        bad["hangs"] += bool(crash and crash.startswith("hang"))
        bad["user files touched"] += len(touched(user))
        try:
            build(data, work / "home", ValidationSettings(), validate=False, jobs=1)
            bad["stray marker taken as a site"] += 1
        except SiteError:
            pass
        bad["user files touched"] += len(touched(home))
        if crash is not None or not summary.committed:
            bad["whole-build losses"] += 1
            print(f"  batch {b}: {crash or 'not committed'}")
            if crash is not None and not crash.startswith("hang"):
                bad["cases that crash alone"] += crash_cases(data, work, opens)
            continue
        check_batch(summary, site, secrets, markers, bad)
        kinds["collision pairs"] += len(markers) // 2
        shutil.rmtree(data, ignore_errors=True)
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1100)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--imports", type=int, default=4, help="times each hostile KernelBench folder is imported")
    args = ap.parse_args()
    import logging
    logging.getLogger("reporter").setLevel(logging.CRITICAL)  # the problems are counted, not printed
    opens = Opens()
    kinds: Counter[str] = Counter()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="fuzz-collect-"))
    try:
        bad = build_batches(args, work, opens, kinds)
        imported = import_cases(work, opens, args.imports)
        published = publish_cases(work / "sites" / "site", work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    batches = -(-args.cases // args.batch)
    print(f"cases: {args.cases} in {batches} batches of {args.batch} (seed {args.seed}), {time.monotonic() - started:.0f} s")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind:36s} {n:5d}")
    print(f"builds: {bad['batches']} into one site holding a user's files, beside decoy folders, and {bad['batches']} "
          "refused builds into a home folder holding a stray marker")
    for what in ("whole-build losses", "cases that crash alone", "hangs", "outside opens", "user files touched",
                 "stray marker taken as a site", "planted secrets published", "colliding inputs missing"):
        print(f"  {what:40s} {bad[what]:5d}")
    print(f"internal errors caught by the per-run guard: {bad['internal']} in collect, {bad['pages failed']} pages that failed "
          f"to render; runs rendered: {bad['runs']}, pages written: {bad['pages']}")
    print(f"import: {imported['cases']} hostile KernelBench run folders ({args.imports} x {len(imported) and 11} kinds)")
    for what in ("tracebacks", "hangs", "outside opens", "user files touched", "environ imported", "duplicates lost"):
        print(f"  {what:40s} {imported[what]:5d}")
    print(f"publish: {published['cases']} cases (a site holding a link out and a user's file; main, main --force while "
          "checked out, gh-pages checked out in a worktree)")
    for what in ("outside or user files published", "branches taken over"):
        print(f"  {what:40s} {published[what]:5d}")


if __name__ == "__main__":
    main()
