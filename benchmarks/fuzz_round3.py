"""Issue 32's classes, measured: secrets of every common kind, programs from DATA, user files and branches,
and the cost of the hostile runs. Every count printed must be 0 (secrets: at most 1% of the plants).

    nice -n 19 python benchmarks/fuzz_round3.py [--seed 32] [--rounds 2]

1. Secrets: each round plants one fresh secret of every kind (32, the issue's 15 missed ones included) in
   every place DATA holds text (trace fields and free-form keys, a run folder's name, an Nsight CSV cell, a
   profiler kernel name, an attachment's name, a cached result's log and environment, a reviews.toml
   note, and a KernelBench run folder's kernel and prompt, imported), builds the site in one process and
   looks for every secret in every file of the site and in the build's messages.
2. Programs from DATA: DATA holds a `.git` whose config names a program (core.fsmonitor, hooks), and a
   `.git` file pointing to such a repository outside; a build must run none of them.
3. User files and branches: publish to a user's branch, a branch only on the remote, a branch from a
   detached HEAD; import two run folders of one name and over a hand-edited trace; init-workflow --force
   through a linked workflow file. Nothing of the user's may change.
4. Hostile runs, each built alone in a child process (CPU-s and peak memory of the build): 20,000 links on
   one line, a 20 MB reasoning, 20 MB of key-like text, an allow-list pattern that backtracks in Python's
   engine, profiler durations that overflow their sum. Each must build (exit 0 or 1, the site written).

Output committed beside this file: fuzz_round3.txt.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import resource
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KB = ROOT / "tests" / "fixtures" / "kernelbench"
NCU_SAMPLE = ROOT / "data" / "seed-003-l2-p8" / "p8_new_raw.csv"
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    digits, letters = [c for c in alphabet if c.isdigit()], [c for c in alphabet if c.isalpha()]
    return "".join(rng.choice(alphabet) for _ in range(n - 2)) + rng.choice(digits) + rng.choice(letters or digits)


# kind -> rng -> (text as written, the secret that must not be published). One line each, no "/" unless a URL.
KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "openai": lambda r: (f"sk-proj-{(s := rand(r, ALNUM + '_-', 48))}", s),
    "anthropic": lambda r: (f"sk-ant-api03-{(s := rand(r, ALNUM, 40))}", s),
    "github-pat": lambda r: (f"ghp_{(s := rand(r, ALNUM, 36))}", s),
    "github-fine-grained": lambda r: (f"github_pat_{(s := rand(r, ALNUM + '_', 82))}", s),
    "github-legacy-url": lambda r: (f"https://{(s := rand(r, HEX, 40))}@github.com/o/r.git", s),
    "github-legacy-header": lambda r: (f"Authorization: token {(s := rand(r, HEX, 40))}", s),
    "aws": lambda r: (f"AKIA{(s := rand(r, string.ascii_uppercase + '234567', 16))}", s),
    "huggingface": lambda r: (f"hf_{(s := rand(r, ALNUM, 34))}", s),
    "slack": lambda r: (f"xoxb-{(s := rand(r, string.digits, 12))}-{rand(r, string.digits, 13)}-{rand(r, ALNUM, 24)}", s),
    "google": lambda r: (f"AIza{(s := rand(r, ALNUM + '_-', 35))}", s),
    "npm": lambda r: (f"npm_{(s := rand(r, ALNUM, 36))}", s),
    "stripe": lambda r: (f"sk_live_{(s := rand(r, ALNUM, 24))}", s),
    "digitalocean": lambda r: (f"dop_v1_{(s := rand(r, HEX, 64))}", s),
    "databricks": lambda r: (f"dapi{(s := rand(r, HEX, 32))}", s),
    "gitlab": lambda r: (f"glpat-{(s := rand(r, ALNUM, 20))}", s),
    "sendgrid": lambda r: (f"SG.{(s := rand(r, ALNUM, 22))}.{rand(r, ALNUM, 43)}", s),
    "shopify": lambda r: (f"shpat_{(s := rand(r, HEX, 32))}", s),
    "sentry-user": lambda r: (f"sntryu_{(s := rand(r, HEX, 64))}", s),
    "sentry-dsn": lambda r: (f"https://{(s := rand(r, HEX, 32))}@o4504.ingest.sentry.io/42", s),
    "vault": lambda r: (f"hvs.{(s := rand(r, ALNUM, 95))}", s),
    "jwt": lambda r: (f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{rand(r, ALNUM, 20)}.{(s := rand(r, ALNUM + '_-', 43))}", s),
    "mysql-pwd": lambda r: (f"env MYSQL_PWD={(s := rand(r, ALNUM, 14))} mysql", s),
    "signing-key": lambda r: (f"SIGNING_KEY={(s := rand(r, ALNUM, 14))}", s),
    "password-flag": lambda r: (f"pg_dump --password={(s := rand(r, ALNUM, 14))} db", s),
    "basic-header": lambda r: (f"Authorization: Basic {(s := __import__('base64').b64encode(f'u:{rand(r, ALNUM, 12)}'.encode()).decode().rstrip('='))}", s),
    "api-key-mid-line": lambda r: (f'c = Client(api_key="{(s := rand(r, ALNUM, 16))}", timeout=3)', s),
    "compact-json": lambda r: (f'{{"user":"bob","password":"{(s := rand(r, ALNUM, 14))}"}}', s),
    "assignment-mid-line": lambda r: (f"cd /app && PGPASSWORD={(s := rand(r, ALNUM, 14))} psql", s),
    "assignment-in-comment": lambda r: (f"# DB_PASSWORD={(s := rand(r, ALNUM, 14))}", s),
    "key-glued-to-word": lambda r: (f"run_sk-proj-{(s := rand(r, ALNUM, 40))}", s),
    "rsa-private-key": lambda r: (f"-----BEGIN RSA PRIVATE KEY-----\n{(s := rand(r, ALNUM, 64))}\n-----END RSA PRIVATE KEY-----", s),
    "pgp-private-key": lambda r: (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{(s := rand(r, ALNUM, 64))}\n-----END PGP PRIVATE KEY BLOCK-----", s),
    "putty-private-key": lambda r: (f"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{(s := rand(r, ALNUM, 44))}\nPrivate-MAC: 5f3a9c0b", s),
}
ONE_LINE = {k for k, f in KINDS.items() if "\n" not in f(random.Random(0))[0]}
NAME_SAFE = {k for k in ONE_LINE if "/" not in KINDS[k](random.Random(0))[0]}
# Where a secret is planted: a trace field, a free-form key, ...; `needs` says which kinds the place can hold.
TRACE_PLACES = ("prompt", "reasoning", "tool-argument", "tool-result", "kernel-source", "reference-source", "metadata-value",
                "metadata-key", "source-note")
FILE_PLACES = ("folder-name", "ncu-cell", "profiler-name", "attachment-name", "cache-log", "cache-env", "review-note",
               "kb-kernel", "kb-prompt")


def minimal_trace(model: str) -> dict[str, Any]:
    return {"schema_version": 2, "run": {"configuration": "cfg", "benchmark": "fuzz", "model": model, "level": 1, "problem_id": 1,
                                         "problem_file": "1_Test.py", "recorded_verdict": "correct"}, "turns": []}


def plant_run(data: Path, i: int, plants: dict[str, tuple[str, str]]) -> None:
    """One run folder holding the trace-field plants of `plants` (place -> (text, secret))."""
    doc = minimal_trace(f"m{i % 7}")
    get = lambda place: plants.get(place, ("", ""))[0]  # noqa: E731
    doc["prompt"] = f"Write a kernel.\n{get('prompt')}\n"
    doc["run"]["source_note"] = f"note {get('source-note')}"
    doc["harness_metadata"] = {"env": get("metadata-value"), **({get("metadata-key"): 1} if "metadata-key" in plants else {})}
    doc["reference_source"] = f"import torch\n# {get('reference-source')}\nclass Model(torch.nn.Module):\n    pass\n"
    doc["final_kernel"] = {"source": f"# {get('kernel-source')}\nclass ModelNew:\n    pass\n", "turn": 0}
    doc["turns"] = [{"index": 0, "reasoning": f"Plan.\n{get('reasoning')}\nDone.", "calls": [
        {"tool": "run", "arguments": {"cmd": get("tool-argument")}, "result": {"ok": True, "text": f"out: {get('tool-result')}"}}]}]
    atts = []
    folder = data / (f"run{i}-{plants['folder-name'][0]}" if "folder-name" in plants else f"run{i}")
    folder.mkdir(parents=True)
    if "ncu-cell" in plants:
        (folder / "k.csv").write_text(NCU_SAMPLE.read_text().replace("grounded_top2_kernel(", f"kernel_{plants['ncu-cell'][0]}("))
        atts.append({"kind": "ncu_raw_csv", "role": "kernel", "path": "k.csv"})
    if "profiler-name" in plants:
        events = [{"ph": "X", "cat": "kernel", "name": f"k_{plants['profiler-name'][0]}", "dur": 3.0}]
        (folder / "p.json").write_text(json.dumps({"traceEvents": events}))
        atts.append({"kind": "torch_profiler_trace", "role": "kernel", "path": "p.json"})
    if "attachment-name" in plants:
        atts.append({"kind": "ncu_raw_csv", "role": "reference", "path": f"missing-{plants['attachment-name'][0]}.csv"})
    doc["attachments"] = atts
    (folder / "trace.json").write_text(json.dumps(doc), encoding="utf-8")
    if "cache-log" in plants or "cache-env" in plants:
        cached_result(data, doc, plants.get("cache-log", ("", ""))[0], plants.get("cache-env", ("", ""))[0])
    if "review-note" in plants:
        rid = folder.relative_to(data).as_posix()
        from reporter.core.records import sha256_text
        review = {"run": rid, "kernel_sha256": sha256_text(doc["final_kernel"]["source"]), "reviewer": "r", "verdict": "clean",
                  "quote": "kernel.py:1", "note": plants["review-note"][0]}
        with open(data / "reviews.toml", "a", encoding="utf-8") as fh:
            fh.write("[[review]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in review.items()))


def cached_result(data: Path, doc: dict[str, Any], log: str, env: str) -> None:
    from reporter.core import cache
    from reporter.core.records import ValidationResult, ValidationSettings, sha256_text
    kernel, ref = doc["final_kernel"]["source"], doc["reference_source"]
    res = ValidationResult(kernel_sha256=sha256_text(kernel), reference_sha256=sha256_text(ref), settings=ValidationSettings(),
                           environment={"gpu": "NVIDIA H200", "host": env}, verdict="incorrect", reason=f"mismatch {log}",
                           log=f"nvcc ... {log}", measured_at="2030-01-01T00:00:00Z")
    folder = cache.entry_dir(data, cache.content_key(kernel, ref))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "x.json").write_text(res.model_dump_json(), encoding="utf-8")


def plant_kb(work: Path, data: Path, i: int, plants: dict[str, tuple[str, str]]) -> list[str]:
    """A KernelBench run folder with its kernel and prompt holding secrets, imported into DATA."""
    from reporter.collect.kernelbench import import_kernelbench
    run = work / f"kb{i}" / f"run_kb{i}"
    shutil.copytree(KB / "run_new", run)
    kernel = run / "level_1_problem_1_sample_0_kernel.py"
    kernel.write_text(f"# {plants.get('kb-kernel', ('', ''))[0]}\n" + kernel.read_text())
    (run / "level_1_problem_1_sample_0_prompt.txt").write_text(f"Use {plants.get('kb-prompt', ('', ''))[0]}\n")
    return import_kernelbench(run, KB / "problems", data).messages


def secrets_class(args: argparse.Namespace, work: Path) -> tuple[Counter[str], Counter[tuple[str, str]], dict[tuple[str, str], str]]:
    """Plant every kind in every place, `args.rounds` times; returns the totals and the plants published."""
    from reporter.build import build
    from reporter.core.records import ValidationSettings
    leaked: Counter[tuple[str, str]] = Counter()
    control: Counter[tuple[str, str]] = Counter()  # the first round built with --no-redact: the check finds them
    seen: dict[tuple[str, str], str] = {}  # where a published secret was found
    rng = random.Random(args.seed)
    plants: list[tuple[str, str, str]] = []  # (kind, place, secret)
    for rnd in range(args.rounds):
        data, site = work / f"secrets-{rnd}" / "data", work / f"secrets-{rnd}" / "site"
        data.mkdir(parents=True)
        runs: list[dict[str, tuple[str, str]]] = []
        for place in (*TRACE_PLACES, *FILE_PLACES):
            for j, kind in enumerate(sorted(KINDS)):
                if (place in ("folder-name", "attachment-name") and kind not in NAME_SAFE) or \
                        (place in ("ncu-cell", "profiler-name", "metadata-key") and kind not in ONE_LINE):
                    continue
                while len(runs) <= j:
                    runs.append({})
                text, secret = KINDS[kind](rng)
                runs[j][place] = (text, secret)
                plants.append((kind, place, secret))
        for i, run_plants in enumerate(runs):
            plant_run(data, i, {p: v for p, v in run_plants.items() if not p.startswith("kb-")})
            if any(p.startswith("kb-") for p in run_plants):
                plant_kb(work / f"secrets-{rnd}", data, i, run_plants)
        round_secrets = plants[-sum(len(r) for r in runs):]
        for redact, counter in ((True, leaked), (False, control) if rnd == 0 else (None, None)):
            if counter is None:
                continue
            out = site if redact else site.with_name("site-unredacted")
            summary = build(data, out, ValidationSettings(), validate=False, redact=bool(redact))
            messages = "\n".join(str(p) for p in summary.problems) + "\n" + summary.redaction_line()
            blobs = [(p, p.read_bytes()) for p in out.rglob("*") if p.is_file()]
            for kind, place, secret in round_secrets:
                where = ["the build's messages"] if secret in messages else []
                where += [p.relative_to(out).as_posix() for p, b in blobs if secret.encode() in b]
                if where:
                    counter[(kind, place)] += 1
                    if redact:
                        seen[(kind, place)] = ", ".join(where[:3])
    totals = Counter({"plants": len(plants), "kinds": len({k for k, _, _ in plants}), "places": len({p for _, p, _ in plants}),
                      "control plants": len(plants) // args.rounds, "control found": sum(control.values())})
    return totals, leaked, seen


def programs_class(work: Path) -> Counter[str]:
    """DATA's own git config and hooks, and a .git file leading out: the build must run none of them."""
    from reporter.build import build
    from reporter.core.records import ValidationSettings
    bad: Counter[str] = Counter()
    ran = work / "programs-ran"
    script = work / "payload.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {ran}\n")
    script.chmod(0o755)
    for case in ("fsmonitor", "hooks", "gitfile-outside", "parent-repo"):
        root = work / f"programs-{case}"
        data = root / "data" if case != "parent-repo" else root / "repo" / "a" / "data"
        data.mkdir(parents=True)
        (data / "r").mkdir()
        (data / "r" / "trace.json").write_text(json.dumps(minimal_trace("m")))
        repo = {"fsmonitor": data, "hooks": data, "gitfile-outside": root / "outside", "parent-repo": root / "repo"}[case]
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", str(script)], check=True)
        hooks = repo / ".git" / "hooks"
        for hook in ("post-checkout", "reference-transaction", "post-index-change"):
            (hooks / hook).write_text(f"#!/bin/sh\n{script} hook\n")
            (hooks / hook).chmod(0o755)
        if case == "gitfile-outside":
            (data / ".git").write_text(f"gitdir: {repo / '.git'}\n")
        bad["cases"] += 1
        build(data, root / "site", ValidationSettings(), validate=False)
    bad["programs run from DATA"] += len(ran.read_text().splitlines()) if ran.exists() else 0
    return bad


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def user_files_class(work: Path, site: Path) -> Counter[str]:
    from click.testing import CliRunner

    from reporter.cli import main
    from reporter.collect.kernelbench import import_kernelbench
    from reporter.core.errors import PublishError
    from reporter.publish import publish_site
    bad: Counter[str] = Counter()
    repo, remote = work / "user-repo", work / "user-remote.git"
    repo.mkdir()
    for a in (("init", "-q", "-b", "main"), ("config", "user.email", "f@e.org"), ("config", "user.name", "f"),
              ("commit", "-q", "--allow-empty", "-m", "source"), ("branch", "feature"), ("branch", "trunk")):
        git(repo, *a)
    git(work, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main:shared")
    git(repo, "fetch", "-q", "origin")
    tips = {b: git(repo, "rev-parse", b) for b in ("main", "feature", "trunk", "origin/shared")}
    for branch, detach in (("feature", False), ("trunk", True), ("shared", False), ("main", False)):
        if detach:
            git(repo, "checkout", "-q", "--detach")
        bad["cases"] += 1
        with contextlib.suppress(PublishError):
            publish_site(site, repo, branch=branch, remote="origin" if branch == "shared" else None)
    bad["branches replaced"] += sum(git(repo, "rev-parse", b) != t for b, t in tips.items())
    # import: two folders of one name, then a hand-edited trace
    a, b, out = work / "imp-a" / "run_x", work / "imp-b" / "run_x", work / "imp-out"
    shutil.copytree(KB / "run_new", a)
    shutil.copytree(KB / "run_new", b)
    (b / "level_1_problem_1_sample_0_kernel.py").write_text("# b\n")
    CliRunner().invoke(main, ["import", "kernelbench", str(a), "--problems", str(KB / "problems"), "--out", str(out)])
    first = (out / "kernelbench-run_x" / "l1-p1-s0" / "trace.json").read_text()
    CliRunner().invoke(main, ["import", "kernelbench", str(a), str(b), "--problems", str(KB / "problems"), "--out", str(out)])
    bad["cases"] += 1
    bad["user files replaced"] += (out / "kernelbench-run_x" / "l1-p1-s0" / "trace.json").read_text() != first
    edited = out / "kernelbench-run_x" / "l1-p2-s0" / "trace.json"
    edited.write_text(edited.read_text().replace('"model"', '"notes": "by hand", "model"', 1))
    hand = edited.read_text()
    import_kernelbench(a, KB / "problems", out)
    bad["cases"] += 1
    bad["user files replaced"] += edited.read_text() != hand
    # init-workflow --force through a linked workflow file and a linked folder
    for linked in ("file", "folder"):
        proj, outside = work / f"wf-{linked}", work / f"wf-{linked}-outside"
        (proj / ".github").mkdir(parents=True)
        outside.mkdir()
        (outside / "pages.yml").write_text("the user's file\n")
        if linked == "file":
            (proj / ".github" / "workflows").mkdir()
            (proj / ".github" / "workflows" / "pages.yml").symlink_to(outside / "pages.yml")
        else:
            (proj / ".github" / "workflows").symlink_to(outside, target_is_directory=True)
        cwd = Path.cwd()
        try:
            os.chdir(proj)
            CliRunner().invoke(main, ["init-workflow", "--force", "--branch", "main", "--install", "reporter==0.1.0"])
        finally:
            os.chdir(cwd)
        bad["cases"] += 1
        bad["user files replaced"] += (outside / "pages.yml").read_text() != "the user's file\n"
    return bad


HOSTILE_RUNS: dict[str, Callable[[Path], None]] = {}


def hostile(name: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    def add(fn: Callable[[Path], None]) -> Callable[[Path], None]:
        HOSTILE_RUNS[name] = fn
        return fn
    return add


def _trace_with(folder: Path, reasoning: str) -> None:
    doc = minimal_trace("m")
    doc["turns"] = [{"index": 0, "reasoning": reasoning, "calls": []}]
    folder.mkdir(parents=True)
    (folder / "trace.json").write_text(json.dumps(doc))


@hostile("20,000 links on one line")
def _links(data: Path) -> None:
    _trace_with(data / "links", " ".join(f"https://example.com//a//b{i}" for i in range(20000)))


@hostile("a 20 MB reasoning")
def _big(data: Path) -> None:
    _trace_with(data / "big", "The kernel tiles shared memory; token 42 of the batch.\n" * (20_000_000 // 56))


@hostile("20 MB of key-like text")
def _keylike(data: Path) -> None:
    _trace_with(data / "keylike", ("x_A1b2C3d4E5f6G7h8I9 " * (20_000_000 // 21)))


@hostile("allow-list re:(.*a){12}x and a line of a's")
def _allow(data: Path) -> None:
    (data).mkdir(parents=True, exist_ok=True)
    (data / "redact-allow.txt").write_text("re:(.*a){12}x\n")
    _trace_with(data / "allow", "sk-proj-" + "a" * 4000 + "1")


@hostile("profiler durations of 1e308")
def _overflow(data: Path) -> None:
    _trace_with(data / "overflow", "x")
    events = [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1e308}] * 2
    (data / "overflow" / "p.json").write_text(json.dumps({"traceEvents": events}))
    doc = json.loads((data / "overflow" / "trace.json").read_text())
    doc["attachments"] = [{"kind": "torch_profiler_trace", "role": "kernel", "path": "p.json"}]
    (data / "overflow" / "trace.json").write_text(json.dumps(doc))


CHILD = """
import resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from reporter.build import build
t = time.process_time()
from reporter.core.records import ValidationSettings
build(Path({data!r}), Path({site!r}), ValidationSettings(), validate=False, jobs=1)
u = resource.getrusage(resource.RUSAGE_SELF)
print(f"RESULT {{time.process_time() - t:.2f}} {{u.ru_maxrss / 1024:.0f}}")
"""


def hostile_runs(work: Path) -> list[tuple[str, str, float, float]]:
    """(case, outcome, build CPU-s, peak RSS MB of the build's process) for each hostile run built alone."""
    rows = []
    for name, make in HOSTILE_RUNS.items():
        data, site = work / f"hostile-{len(rows)}" / "data", work / f"hostile-{len(rows)}" / "site"
        data.mkdir(parents=True)
        make(data)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), data=str(data), site=str(site))],
                                  capture_output=True, text=True, timeout=900)
            outcome = "built" if proc.returncode == 0 and (site / "index.html").is_file() else f"LOST (exit {proc.returncode})"
            line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT")), "RESULT nan nan").split()
        except subprocess.TimeoutExpired:
            outcome, line = "LOST (over 900 s)", ["RESULT", "nan", "nan"]
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rows.append((name, outcome, float(line[1]) if line[1] != "nan" else total_cpu, float(line[2])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # each planted file name is one message; the counts are the output
    started = time.time()
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fuzz32-") as tmp:
        work = Path(tmp)
        totals, plants_leaked, seen = secrets_class(args, work)
        leaked = sum(plants_leaked.values())
        out.append(f"secrets: {totals['plants']} plants of {totals['kinds']} kinds in {totals['places']} places "
                   f"({args.rounds} rounds, seed {args.seed})")
        out.append(f"  published                              {leaked} ({100 * leaked / totals['plants']:.2f}%)")
        for (kind, place), n in sorted(plants_leaked.items()):
            out.append(f"    {kind} in {place}: {n} (found in {seen.get((kind, place), '?')})")
        out.append(f"  control: the first round built with --no-redact shows {totals['control found']} of "
                   f"{totals['control plants']} (the check sees what is published)")
        progs = programs_class(work)
        out.append(f"programs from DATA: {progs['cases']} DATA folders (core.fsmonitor and hooks in DATA/.git, a .git file "
                   "leading outside, a repository above DATA)")
        out.append(f"  programs run                           {progs['programs run from DATA']}")
        site = work / "secrets-0" / "site"
        users = user_files_class(work, site)
        out.append(f"user files and branches: {users['cases']} cases (publish to a user's branch, a remote-only branch, "
                   "from a detached HEAD, the default branch; import of two same-named folders and over a hand-edited "
                   "trace; init-workflow --force through a linked file and a linked folder)")
        out.append(f"  branches replaced                      {users['branches replaced']}")
        out.append(f"  user files replaced                    {users['user files replaced']}")
        rows = hostile_runs(work)
        out.append("hostile runs, each built alone (build CPU-s, peak RSS of the build's process):")
        for name, outcome, cpu, rss in rows:
            out.append(f"  {name:<44} {outcome:<10} {cpu:7.2f} CPU-s {rss:7.0f} MB")
        out.append(f"  builds lost                            {sum(o != 'built' for _, o, _, _ in rows)}")
        slow = max(rows, key=lambda r: r[2])
        from reporter.core import limits
        cpu, mem = limits.RUN_CPU_S, limits.RUN_MEMORY_BYTES / 2**20
        within = slow[2] <= cpu and max(r[3] for r in rows) <= mem
        out.append(f"  slowest: {slow[0]} ({slow[2]:.2f} CPU-s); largest: {max(r[3] for r in rows):.0f} MB: "
                   f"{'within' if within else 'OVER'} the per-run budget (limits.RUN_CPU_S {cpu:g} s, RUN_MEMORY_BYTES {mem:.0f} MiB; "
                   "the whole build's process is measured, so this bounds one run's share from above)")
    out.append(f"took {time.time() - started:.0f} s")
    print("\n".join(out))


if __name__ == "__main__":
    main()
