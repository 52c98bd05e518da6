"""Issue 43, "Measure it": full `reporter build` runs (the command line, in a child process) over hostile DATA, measured
four ways. Every count printed must be 0 (secrets: at most 1% of the plants).

    nice -n 10 python benchmarks/fuzz_round4.py [--seed 43] [--rounds 3] [--skip CLASS ...] [--keep DIR]

1. Secrets: each round plants one fresh secret of each of the 50 kinds of planted_secrets_issue43.py in each of the
   18 places of fuzz_round3.py (trace fields and free-form keys, a run folder's name, an Nsight CSV cell, a profiler
   kernel name, an attachment's name, a cached result's log and environment, a reviews.toml note, a KernelBench run
   folder's kernel and prompt imported with `reporter import kernelbench`), builds with `reporter build`, and looks
   for every secret in every file of SITE (the full-text index's gzip chunks decompressed; its word index is
   lower-cased, so every file is searched case-folded) and in the terminal output of the import and the build. A
   plant is published when its secret, or any 12 characters of it, is there as written or as JSON, HTML, a URL or a
   slug spells it. Round 0 is also built with --no-redact: the control that the search sees published secrets.
2. Sites bricked: run folder, model, problem file, benchmark and configuration all named with one hostile name
   (secret-shaped, quotes, control characters, separators, backslashes, </script>, %, bidi and zero-width
   characters, NFD accents, bytes that are not UTF-8, names near 255 bytes, ...), then: build, publish (to a
   local repository, pushed to a bare one), add a run and build again into the same SITE, publish again. Bricked:
   the second build or a publish refuses the site (a site is "built" when the exit status is 0 or 1 and SITE is a
   finished reporter build holding index.html).
3. Programs run: DATA and SITE holding programs (git config and hooks in DATA/.git, a .git file or link leading
   out, a repository above DATA, Python modules and executables named like the ones a build uses with the build
   started in DATA, pagefind configuration files, an .ncu-rep read through ncu_report) and publishing repositories
   whose config names programs (core.sshCommand, core.gitProxy, core.fsmonitor, credential.helper, core.askPass,
   include.path, remote.*.receivepack/uploadpack, ext:: and insteadOf rewrites, remote helpers, signing, hooks
   here and in the remote, filters, a checked-out remote with updateInstead). Each program appends a line to a
   marker file; the count is its lines (a pagefind configuration file read counts as one, through its logfile).
4. XSS executed: payloads (script tags, event handlers, javascript: links as HTML and markdown, </script>, SVG,
   mXSS, entity-encoded) in every string a trace, its attachments, cached results and reviews hold, names
   included; every HTML page of SITE is opened in headless Chromium (SITE served over http), every <details>
   opened, every version view clicked, the search boxes given the payloads' marker word and the payloads
   themselves, run pages opened with ?hl=PAYLOAD, and every javascript: link clicked. A payload that ran sets a
   global `__xss_P_Q` (payload P in place Q); the count is those set. A control page with a raw payload shows the
   check sees one that runs.

Output committed beside this file: fuzz_round4.txt. Deterministic for a given --seed (the DATA, the names and the
payloads; timings differ).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import html
import http.server
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_round3 as r3  # the places (trace fields, files) and how a run folder holds them
import planted_secrets_issue43 as p43  # the 50 kinds

KINDS: dict[str, p43.Plant] = {**p43.ISSUE_43, **p43.ROUND_3}
PLACES = (*r3.TRACE_PLACES, *r3.FILE_PLACES)
ONE_LINE_PLACES = {"ncu-cell", "profiler-name", "metadata-key", "folder-name", "attachment-name"}
NAME_PLACES = {"folder-name", "attachment-name"}
CHROMIUM = "/usr/bin/chromium"
LAUNCHER = "import sys\nfrom reporter.cli import run\nsys.exit(run())\n"  # as the `reporter` console script does
SUBSTRING = 12  # a plant is published when any 12 characters of its secret are


# ---------------------------------------------------------------------------------------------------------------------
# Running reporter as a user does: the console script, in a child process, in a clean git/HOME environment

class Env:
    def __init__(self, work: Path) -> None:
        self.work = work
        home = work / "home"
        home.mkdir(parents=True)
        (home / ".gitconfig").write_text("[user]\n\tname = fuzz\n\temail = fuzz@example.org\n[init]\n\tdefaultBranch = main\n")
        (work / "bin").mkdir()
        self.launcher = work / "bin" / "reporter"
        self.launcher.write_text(LAUNCHER)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PAGEFIND", "NCU_", "SSH_", "PYTHON"))}
        self.env = {**base, "HOME": str(home), "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1700000000",
                    "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C.UTF-8", "REPORTER_JOBS": "2"}

    def reporter(self, *args: str, cwd: Path | None = None, extra: dict[str, str] | None = None,
                 timeout: int = 600) -> tuple[int, str]:
        """`reporter ARGS` in a child process; its exit status and its terminal output (stdout and stderr)."""
        try:
            proc = subprocess.run([sys.executable, str(self.launcher), *args], cwd=cwd or self.work, env={**self.env, **(extra or {})},
                                  capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            return 124, (exc.stdout or b"").decode("utf-8", "replace") + (exc.stderr or b"").decode("utf-8", "replace")
        return proc.returncode, proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")

    def git(self, repo: Path, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=self.env, check=check)
        return proc.stdout.strip()


def built(site: Path) -> bool:
    """SITE is a finished reporter build: its marker names its status file, and it has its index page."""
    from reporter.core.sitefiles import owned_files
    return owned_files(site) is not None and (site / "index.html").is_file()


def site_files(site: Path) -> Iterable[tuple[str, bytes]]:
    """Every file of SITE (cache and state included: `python -m http.server -d SITE` serves them), gzip-compressed
    ones (the Pagefind index's chunks) decompressed."""
    for path in sorted(site.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        blob = path.read_bytes()
        if blob[:2] == b"\x1f\x8b":
            with contextlib.suppress(OSError, EOFError, gzip.BadGzipFile):
                blob = gzip.decompress(blob)  # Pagefind's: b"pagefind_dcd" then the chunk
        yield path.relative_to(site).as_posix(), blob


# ---------------------------------------------------------------------------------------------------------------------
# 1. Secrets

def spellings(secret: str) -> set[str]:
    """The secret as the site may spell it: as written, JSON-escaped (once and twice), HTML-escaped, URL-quoted,
    and as a slug (lower case, punctuation as "-"); all case-folded, as the search is."""
    once = json.dumps(secret)[1:-1]
    out = {secret, once, json.dumps(once)[1:-1], html.escape(secret), html.escape(once), urllib.parse.quote(secret, safe=""),
           urllib.parse.quote(secret, safe="/:"), re.sub(r"[^a-z0-9.]+", "-", secret.lower()).strip("-")}
    return {s.lower() for s in out if s}


class Finder:
    """Which plants show any SUBSTRING characters of one of their spellings in a text, in one pass: the text is
    looked up every 6 characters in a table of every 6-gram of every spelling, and each hit is extended both ways
    (a 12-character match holds a 6-gram starting at a multiple of 6). Only windows of 12 that one plant alone holds
    count: base64 of `robot:falcon…` or of `GITHUB_TOKEN=ghp_` begins the same for many plants, and such a shared
    prefix is the format's, not a secret."""

    def __init__(self, plants: dict[int, str]) -> None:
        self.grams: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
        self.short: dict[int, set[str]] = defaultdict(set)  # spellings under SUBSTRING characters: found whole only
        owners: dict[str, set[int]] = defaultdict(set)
        for pid, secret in plants.items():
            for s in spellings(secret):
                if len(s) < SUBSTRING:
                    self.short[pid].add(s)
                    continue
                for j in range(len(s) - 5):
                    self.grams[s[j:j + 6]].append((pid, s, j))
                for j in range(len(s) - SUBSTRING + 1):
                    owners[s[j:j + SUBSTRING]].add(pid)
        self.shared = {w for w, who in owners.items() if len(who) > 1}

    def search(self, text: str) -> set[int]:
        text = text.lower()
        found = {pid for pid, ss in self.short.items() if any(s in text for s in ss)}
        n, grams = len(text), self.grams
        for q in range(0, n - 5, 6):
            hits = grams.get(text[q:q + 6])
            if not hits:
                continue
            for pid, s, j in hits:
                if pid in found:
                    continue
                a = 0
                while q - a > 0 and j - a > 0 and text[q - a - 1] == s[j - a - 1]:
                    a += 1
                b = 0
                while q + 6 + b < n and j + 6 + b < len(s) and text[q + 6 + b] == s[j + 6 + b]:
                    b += 1
                m = s[j - a:j + 6 + b]
                if any(m[i:i + SUBSTRING] not in self.shared for i in range(len(m) - SUBSTRING + 1)):
                    found.add(pid)
        return found


def hex_decoded(blob: bytes) -> str:
    """The strings a build's state file stores hex-encoded (`hex:…`, by design), decoded."""
    return "\n".join(bytes.fromhex(h).decode("utf-8", "replace") for h in re.findall(rb'"hex:([0-9a-f]*)"', blob) for h in [h.decode()])


def place_plant(rng: random.Random, kind: str, place: str) -> tuple[str, str] | None:
    """A fresh plant of `kind` that `place` can hold (one line for a cell or key, a file name's characters and length
    for a name), drawing again up to 30 times; None when the kind never fits (a URL in a file name)."""
    for _ in range(30):
        text, secret = KINDS[kind](rng)
        if place in ONE_LINE_PLACES and ("\n" in text or "\r" in text):
            continue
        if place in NAME_PLACES and ("/" in text or "\0" in text or len(text.encode()) > 200):
            continue
        return text, secret
    return None


def review_run(data: Path, i: int, note: str) -> None:
    """A run `rev<i>` and a review of its kernel holding `note`. (fuzz_round3 writes the review beside the run holding
    its other plants, whose folder name may hold a secret: its run id is then shown redacted, and a review naming the
    folder as written clears no run, so its note was never shown.)"""
    from reporter.core.records import sha256_text
    doc = r3.minimal_trace(f"m{i % 7}")
    doc["final_kernel"] = {"source": f"# review {i}\nclass ModelNew:\n    pass\n", "turn": 0}
    write_trace(data / f"rev{i}", doc)
    review = {"run": f"rev{i}", "kernel_sha256": sha256_text(doc["final_kernel"]["source"]), "reviewer": "r", "verdict": "clean",
              "quote": "kernel.py:1", "note": note}
    with open(data / "reviews.toml", "a", encoding="utf-8") as fh:
        fh.write("[[review]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in review.items()))


def plant_kb_folder(root: Path, i: int, plants: dict[str, tuple[str, str]]) -> None:
    """A KernelBench run folder (fuzz_round3's fixture) whose kernel and prompt hold plants, for `reporter import`."""
    run = root / f"run_kb{i}"
    shutil.copytree(r3.KB / "run_new", run)
    kernel = run / "level_1_problem_1_sample_0_kernel.py"
    kernel.write_text(f"# {plants.get('kb-kernel', ('', ''))[0]}\n" + kernel.read_text())
    (run / "level_1_problem_1_sample_0_prompt.txt").write_text(f"Use {plants.get('kb-prompt', ('', ''))[0]}\n")


class SecretsResult:
    def __init__(self) -> None:
        self.plants: list[tuple[str, str, str]] = []  # (kind, place, secret)
        self.unplaceable: Counter[tuple[str, str]] = Counter()
        self.published: Counter[tuple[str, str]] = Counter()
        self.where: dict[tuple[str, str], list[str]] = {}
        self.replay: dict[tuple[str, str], str] = {}
        self.texts: dict[tuple[str, str], str] = {}  # the text planted, as written
        self.withheld: list[tuple[int, str, str, str, str, int]] = []  # (round, run/rev, kind, rule, page, line): LeakError
        self.control = (0, 0)  # (found, planted) in the round built with --no-redact
        self.control_terminal = 0
        self.hex_state = 0  # plants whose secret is in the state file hex-encoded (informational)
        self.builds: list[str] = []


def secrets_class(args: argparse.Namespace, env: Env) -> SecretsResult:
    res = SecretsResult()
    rng = random.Random(args.seed)
    for rnd in range(args.rounds):
        base = env.work / f"secrets-{rnd}"
        data, kbroot = base / "data", base / "kb"
        data.mkdir(parents=True)
        kbroot.mkdir()
        runs: list[dict[str, tuple[str, str]]] = [{} for _ in KINDS]
        plants: list[tuple[str, str, str]] = []
        plant_texts: list[str] = []
        for place in PLACES:
            for j, kind in enumerate(KINDS):
                got = place_plant(rng, kind, place)
                if got is None:
                    res.unplaceable[(kind, place)] += 1
                    continue
                runs[j][place] = got
                plants.append((kind, place, got[1]))
                plant_texts.append(got[0])
        for i, run_plants in enumerate(runs):
            r3.plant_run(data, i, {p: v for p, v in run_plants.items() if not p.startswith("kb-") and p != "review-note"})
            plant_kb_folder(kbroot, i, run_plants)
            if "review-note" in run_plants:
                review_run(data, i, run_plants["review-note"][0])
        terminal = []
        rc, out = env.reporter("import", "kernelbench", str(kbroot), "--problems", str(r3.KB / "problems"), "--out", str(data))
        terminal.append(out)
        res.builds.append(f"round {rnd}: import exit {rc}")
        finder = Finder({n: s for n, (_, _, s) in enumerate(plants)})
        for redact in (True, False) if rnd == 0 else (True,):
            site = base / ("site" if redact else "site-unredacted")
            t0 = time.time()
            rc, out = env.reporter("build", "--no-validate", *(() if redact else ("--no-redact",)), str(data), str(site))
            res.builds.append(f"round {rnd}{'' if redact else ' --no-redact'}: build exit {rc} in {time.time() - t0:.0f} s, "
                              f"{out.strip().splitlines()[-1][:150] if out.strip() else ''}")
            where: dict[int, list[str]] = defaultdict(list)
            for pid in finder.search("\n".join([*terminal, out])):
                where[pid].append("the terminal output")
            hexed: set[int] = set()
            for rel, blob in site_files(site):
                for pid in finder.search(blob.decode("latin-1")):
                    where[pid].append(rel)
                if rel == ".reporter-status.json":
                    hexed |= finder.search(hex_decoded(blob))
            for m in re.finditer(r"/((?:run|rev)(\d+))[^/\n]*/trace\.json: \(page\): run page not built: LeakError: (\S+): line (\d+) "
                                 r"column \d+ holds what the redactor reads as a secret \(([^)]+)\)", out):
                res.withheld.append((rnd, m.group(1).rstrip("0123456789"), list(KINDS)[int(m.group(2))], m.group(5), m.group(3), int(m.group(4))))
            if not redact:
                res.control = (len(where), len(plants))
                res.control_terminal = sum("the terminal output" in w for w in where.values())
                continue
            res.hex_state += len(hexed)
            for pid, files in where.items():
                kind, place, _ = plants[pid]
                res.published[(kind, place)] += 1
                res.where.setdefault((kind, place), files[:4])
                j = list(KINDS).index(kind)
                res.replay.setdefault((kind, place), f"python benchmarks/fuzz_round4.py --seed {args.seed} --rounds {rnd + 1} --skip bricked "
                                      f"programs xss --keep DIR, then DIR/{base.name}/site/{files[0] if files[0] != 'the terminal output' else ''} "
                                      f"(DATA: DIR/{base.name}/data/" + (f"kernelbench-run_kb{j}" if place.startswith("kb-") else f"rev{j}/ and reviews.toml"
                                                                         if place == "review-note" else f"run{j}*") + ")")
                res.texts.setdefault((kind, place), plant_texts[pid])
        res.plants += plants
    return res


# ---------------------------------------------------------------------------------------------------------------------
# 2. Sites bricked

def hostile_names(rng: random.Random) -> list[tuple[str, str]]:
    """(label, name): each becomes a run folder's name (a "/" shown as U+2215, which a file name cannot hold), its
    model, problem file, benchmark and configuration."""
    hexkey = "".join(rng.choice(p43.HEX) for _ in range(64))
    return [
        ("plain (the baseline)", "plain-run"),
        ("secret-shaped header", f"run-X-Api-Key: {hexkey}"),
        ("secret-shaped token", f"run-ghp_{p43.rand(rng, p43.ALNUM, 36)}"),
        ("quotes", "q\"'`x`"),
        ("unit separator", "a\x1fb\x1fc"),
        ("colon, semicolon, comma", "a:b;c,d=e"),
        ("tab and carriage return", "a\tb\rc"),
        ("newline", "line1\nline2"),
        ("backslashes", "a\\b\\\\c\\x41\\u0041\\"),
        ("</script>", "</script><script>x=1</script>"),
        ("percent", "100%25%s%n%%"),
        ("bidi override U+202E", "abc\u202etxt.exe"),
        ("zero-width space U+200B", "Kimi-K2.6\u200b"),
        ("NFD accents", unicodedata.normalize("NFD", "Café-Ünïcödé")),
        ("astral characters", "\U0001f680-\U0001d54f-model"),
        ("HTML entities", "&amp;&lt;&#0;&#x202e;"),
        ("leading dash, dots", "--help ..."),
        ("trailing space and dot", "name. "),
        ("long ASCII, 250 bytes", "L" * 250),
        ("long UTF-8, 254 bytes", "é" * 127),
        ("bytes not UTF-8 (folder) / lone surrogate (fields)", "bad-\udcff\udcfe"),
        ("template and format syntax", "{{7*7}}{0}${x}%(x)s"),
    ]


def folder_name(name: str) -> str:
    return name.replace("/", "\u2215").replace("\0", "")


def hostile_trace(name: str, field_name: str) -> dict[str, Any]:
    doc = r3.minimal_trace(field_name)
    doc["run"].update(problem_file=f"1_{field_name}.py", benchmark=field_name, configuration=field_name)
    doc["reference_source"] = "import torch\nclass Model(torch.nn.Module):\n    pass\n"
    doc["final_kernel"] = {"source": "class ModelNew:\n    pass\n", "turn": 0}
    doc["turns"] = [{"index": 0, "reasoning": f"run {field_name}", "calls": []}]
    return doc


def write_trace(folder: Path, doc: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # ensure_ascii: a lone surrogate is written as the JSON escape "\udcff", which JSON allows
    (folder / "trace.json").write_text(json.dumps(doc, ensure_ascii=True), encoding="utf-8")


def publish_setup(env: Env, base: Path) -> tuple[Path, Path]:
    repo, remote = base / "repo", base / "remote.git"
    repo.mkdir(parents=True)
    env.git(repo, "init", "-q", "-b", "main")
    env.git(repo, "commit", "-q", "--allow-empty", "-m", "source")
    env.git(base, "init", "-q", "--bare", str(remote))
    env.git(repo, "remote", "add", "origin", str(remote))
    return repo, remote


GROUP = 3  # hostile names a case holds, each in its own run folder (a case that bricks is run again name by name)


def folder_of(name: str) -> str:
    return os.fsdecode(b"bad-\xff\xfe") if "\udcff" in name else folder_name(name)


def brick_case(env: Env, base: Path, label: str, names: list[str]) -> dict[str, Any]:
    """Build DATA holding a plain run and one run per name, publish, add a run, build again into the same SITE,
    publish again; which steps refused the site."""
    data, site = base / "data", base / "site"
    write_trace(data / "plain", hostile_trace("plain", "plain-model"))
    for name in names:
        write_trace(data / folder_of(name), hostile_trace(name, name))
    repo, _ = publish_setup(env, base)
    row: dict[str, Any] = {"label": label, "names": names, "steps": [], "base": base.name}
    for step in ("build", "publish", "build again", "publish again"):
        if step == "build again":
            write_trace(data / "plain2", hostile_trace("plain2", "plain-model"))
        if step.startswith("build"):
            rc, out = env.reporter("build", "--no-validate", str(data), str(site))
            good = built(site) and rc in (0, 1) and "not a reporter site" not in out and "refusing" not in out
            m = re.search(r"read (\d+) runs \((\d+) unreadable\)", out)
            row.setdefault("runs", []).append(f"{m.group(1)}-{m.group(2)}" if m else "?")
        else:
            rc, out = env.reporter("publish", str(site), "--repo", str(repo), "--push", "origin")
            good = rc == 0
        row["steps"].append((step, rc, good, out))
    row["first build lost"] = not row["steps"][0][2]
    row["bricked"] = [st for st, _, good, _ in row["steps"][1:] if not good]
    row["tracebacks"] = sum("Traceback" in out for _, _, _, out in row["steps"])
    return row


def bricked_class(args: argparse.Namespace, env: Env) -> list[dict[str, Any]]:
    names = hostile_names(random.Random(args.seed + 1))[1:]  # [0] is the plain name every case holds anyway
    rows = []
    for g in range(0, len(names), GROUP):
        group = names[g:g + GROUP]
        row = brick_case(env, env.work / f"brick-{g // GROUP}", ", ".join(label for label, _ in group), [n for _, n in group])
        rows.append(row)
        if row["bricked"] or row["first build lost"]:  # which name: each alone
            for k, (label, name) in enumerate(group):
                alone = brick_case(env, env.work / f"brick-{g // GROUP}-{k}", f"  alone: {label}", [name])
                alone["attribution"] = True
                rows.append(alone)
    nfd = next(n for label, n in names if label == "NFD accents")
    rows.append(brick_case(env, env.work / "brick-all", "all of them in one DATA, with the NFC spelling beside the NFD one",
                           [n for _, n in names] + [unicodedata.normalize("NFC", nfd)]))
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# 3. Programs run

HOOKS = ("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit", "prepare-commit-msg",
         "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive", "update",
         "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
         "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-pre-submit", "post-index-change")
PY_SHADOWS = ("json", "torch", "re2", "re", "pickle", "struct", "copyreg", "typing", "enum", "csv", "gzip", "hashlib",
              "tomllib", "yaml", "jinja2", "markupsafe", "click", "pydantic", "numpy", "dulwich", "ghp_import", "pagefind",
              "ncu_report", "sitecustomize", "usercustomize", "multiprocessing_helper", "reporter_plugin")
EXE_SHADOWS = ("git", "pagefind", "pagefind_extended", "python", "python3", "sh", "ncu", "nvcc", "nvidia-smi", "chromium",
               "ssh", "gpg", "uname", "ldconfig")


class Programs:
    def __init__(self, env: Env) -> None:
        self.env, self.ran = env, env.work / "programs-ran"
        self.dir = env.work / "programs"
        self.dir.mkdir()
        self.counts: Counter[str] = Counter()
        self.lines: dict[str, list[str]] = {}
        self.cases: list[str] = []
        self.made = 0
        self.site = Path()  # the site publishing cases publish
        self.next_args: list[str] = []  # more arguments for the next publish
        self.notes: dict[str, str] = {}  # how far each case got: the last line of its last command
        self.controls: list[tuple[str, int]] = []  # (what, lines): the same programs started directly must write

    def script(self, case: str, what: str) -> str:
        self.made += 1
        path = self.dir / f"p{self.made}"  # a name without spaces: several settings are shell commands
        path.write_text(f'#!/bin/sh\necho "{case}: {what} $*" >> "{self.ran}"\nexit 0\n')
        path.chmod(0o755)
        return str(path)

    def hooks(self, case: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for hook in HOOKS:
            (folder / hook).write_text(f"#!/bin/sh\n{self.script(case, 'hook ' + hook)} \"$@\"\n")
            (folder / hook).chmod(0o755)

    def hostile_config(self, case: str, repo: Path) -> None:
        """Every config key that names a program, in `repo`'s own config, and hooks in .git/hooks and core.hooksPath."""
        s = lambda what: self.script(case, what)  # noqa: E731
        self.made += 1
        hookspath = self.dir / f"hooks{self.made}"
        pairs = [("core.fsmonitor", s("core.fsmonitor")), ("core.hooksPath", str(hookspath)),
                 ("core.sshCommand", s("core.sshCommand")), ("core.gitProxy", s("core.gitProxy")),
                 ("core.askPass", s("core.askPass")), ("credential.helper", s("credential.helper")),
                 ("core.pager", s("core.pager")), ("core.editor", s("core.editor")), ("sequence.editor", s("sequence.editor")),
                 ("core.alternateRefsCommand", s("core.alternateRefsCommand")), ("filter.x.clean", s("filter.clean")),
                 ("filter.x.smudge", s("filter.smudge")), ("filter.x.process", s("filter.process")),
                 ("diff.external", s("diff.external")), ("diff.x.textconv", s("diff.textconv")),
                 ("gpg.program", s("gpg.program")), ("gpg.ssh.program", s("gpg.ssh.program")), ("commit.gpgSign", "true"),
                 ("tag.gpgSign", "true"), ("push.gpgSign", "true"), ("uploadpack.packObjectsHook", s("packObjectsHook")),
                 ("receive.procReceiveRefs", "refs/heads"), ("hook.evil.command", s("hook.evil.command")),
                 ("hook.evil.event", "pre-commit"), ("protocol.ext.allow", "always"), ("pager.log", s("pager.log")),
                 ("merge.x.driver", s("merge.driver")), ("core.untrackedCache", "true")]
        for key, value in pairs:
            self.env.git(repo, "config", "--add", key, value)
        self.env.git(repo, "config", "--add", "hook.evil.event", "post-commit")
        self.env.git(repo, "config", "--add", "hook.evil.event", "pre-push")
        self.env.git(repo, "config", "--add", "hook.evil.event", "reference-transaction")
        gitdir = Path(self.env.git(repo, "rev-parse", "--absolute-git-dir"))
        self.hooks(case, gitdir / "hooks")
        self.hooks(case, hookspath)
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text("* filter=x diff=x merge=x\n")

    def measure(self, case: str, action: Callable[[], Any]) -> Any:
        self.ran.unlink(missing_ok=True)
        self.cases.append(case)
        out = action()
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
            last = [x.strip() for x in out[1].strip().splitlines() if x.strip()]
            self.notes[case] = f"exit {out[0]}: {last[-1][:150] if last else ''}"
        lines = self.ran.read_text().splitlines() if self.ran.exists() else []
        self.counts[case] += len(lines)
        if lines:
            self.lines[case] = lines
        return out


def data_repo(progs: Programs, case: str, repo: Path, files: Path | None = None) -> None:
    """A repository with a commit (made before its config names any program), then its config made hostile."""
    env = progs.env
    repo.mkdir(parents=True, exist_ok=True)
    env.git(repo, "init", "-q")
    if files is not None:
        (repo / ".gitattributes").write_text("* filter=x diff=x\n")
        env.git(repo, "add", "-A")
        env.git(repo, "commit", "-q", "-m", "data")
    progs.hostile_config(case, repo)


def programs_class(args: argparse.Namespace, env: Env, published_site: Path) -> Programs:
    progs = Programs(env)
    progs.site = published_site
    trace = json.dumps(r3.minimal_trace("m"))

    def new_data(case: str, data: Path) -> Path:
        write_trace(data / "r", json.loads(trace))
        return data

    def build(data: Path, site: Path, cwd: Path | None = None, extra: dict[str, str] | None = None, validate: bool = False) -> int:
        return env.reporter("build", *(() if validate else ("--no-validate",)), str(data), str(site), cwd=cwd, extra=extra)[0]

    # DATA's own repository, one in a folder above it, one a .git file or link leads to
    for case in ("DATA/.git config and hooks", "DATA/.git file leading out", "DATA/.git link leading out", "repository above DATA"):
        base = env.work / f"prog-{len(progs.cases)}"
        data = base / ("repo/a/data" if case == "repository above DATA" else "data")
        new_data(case, data)
        if case == "DATA/.git config and hooks":
            data_repo(progs, case, data, files=data)
        elif case == "repository above DATA":
            data_repo(progs, case, base / "repo", files=base / "repo")
        else:
            outside = base / "outside"
            data_repo(progs, case, outside, files=outside)
            if "file" in case:
                (data / ".git").write_text(f"gitdir: {outside / '.git'}\n")
            else:
                (data / ".git").symlink_to(outside / ".git", target_is_directory=True)
        progs.measure(case, lambda data=data, base=base: (build(data, base / "site", cwd=data), build(data, base / "site", cwd=data)))

    # Python modules, executables and configuration files in DATA, the build started in DATA (as `cd data && reporter
    # build . ../site` would), with validation on (this machine has no GPU) and off
    case = "modules and programs in DATA, the build started in DATA"
    base = env.work / "prog-shadow"
    data = new_data(case, base / "data")
    for mod in PY_SHADOWS:
        (data / f"{mod}.py").write_text(f"open({str(progs.ran)!r}, 'a').write({case + ': python module ' + mod!r} + '\\n')\n")
    (data / "reporter_evil.pth").write_text(f"import os; open({str(progs.ran)!r}, 'a').write('{case}: .pth\\n')\n")
    bindir = data / "bin"
    for exe in EXE_SHADOWS:
        for where in (data, bindir):
            where.mkdir(exist_ok=True)
            shutil.copy(progs.script(case, f"executable {exe}"), where / exe)
            (where / exe).chmod(0o755)
    (data / "pyproject.toml").write_text(f'[tool.reporter]\nsite = "{base / "site-config"}"\n[tool.reporter.validation]\njobs = 1\n')
    progs.measure(case, lambda: (build(data, base / "site", cwd=data, validate=True), build(Path("."), base / "site2", cwd=data)))
    # the same DATA with an .ncu-rep attachment, read through a stand-in ncu_report module (outside DATA, as NVIDIA's
    # would be: NCU_PYTHON_DIR) in its child process, started in DATA
    case = "an .ncu-rep read through ncu_report, started in DATA"
    ncu = base / "ncu-python"
    ncu.mkdir()
    loaded = base / "ncu-stand-in-loaded"  # not a marker: the stand-in is the user's own program
    (ncu / "ncu_report.py").write_text(f"import json, csv, re\nopen({str(loaded)!r}, 'a').write('x')\n"
                                       "class IAction:\n    NameBase_DEMANGLED = 1\ndef load_report(path):\n    return []\n")
    doc = r3.minimal_trace("m")
    doc["attachments"] = [{"kind": "ncu_report", "role": "kernel", "path": "k.ncu-rep"}]
    write_trace(data / "ncu-run", doc)
    (data / "ncu-run" / "k.ncu-rep").write_bytes(b"NVIDIA Nsight Compute report (stand-in)")
    (data / "ncu-run" / "ncu_report.py").write_text((data / "json.py").read_text())
    progs.measure(case, lambda: (build(data, base / "site-ncu", cwd=data, extra={"NCU_PYTHON_DIR": str(ncu)}),
                                 f"the stand-in ncu_report was loaded: {loaded.exists()}"))

    # pagefind configuration files in DATA, in a run folder, in the working directory, in SITE and its cache
    case = "pagefind configuration in DATA, the working directory and SITE"
    base = env.work / "prog-pagefind"
    data = new_data(case, base / "data")
    site = base / "site"

    def config_file(folder: Path, label: str, fmt: str) -> None:
        # one format a folder: Pagefind refuses a folder holding two
        log, out = base / f"pagefind-log-{label}.{fmt}", base / f"pagefind-out-{label}.{fmt}"
        text = {"yml": f"logfile: {log}\noutput_path: {out}\nverbose: true\n",
                "toml": f'logfile = "{log}"\noutput_path = "{out}"\nverbose = true\n',
                "json": json.dumps({"logfile": str(log), "output_path": str(out), "verbose": True})}[fmt]
        (folder / f"pagefind.{fmt}").write_text(text)

    def pagefind_case() -> tuple[int, str]:
        config_file(data, "data", "yml")
        config_file(data / "r", "run", "toml")
        build(data, site, cwd=data)
        indexed = (site / "pagefind" / "shards.json").is_file()
        config_file(site, "site", "json")
        with contextlib.suppress(OSError):
            config_file(site / ".reporter-cache", "site-cache", "toml")
        write_trace(data / "r2", json.loads(trace))  # a changed run: the index is made again
        build(data, site, cwd=site)
        indexed = indexed and (site / "pagefind" / "shards.json").is_file()
        for made in sorted(base.glob("pagefind-*")):
            with open(progs.ran, "a") as fh:
                fh.write(f"{case}: pagefind read a configuration file ({made.name} exists)\n")
        return 0, f"full-text index made by both builds: {indexed}"
    progs.measure(case, pagefind_case)

    # SITE holding the user's own repository, whose config names programs: two builds, then a publish of SITE
    case = "SITE/.git config and hooks (builds, then publish of SITE)"
    base = env.work / "prog-sitegit"
    data = new_data(case, base / "data")
    site = base / "site"

    def site_git() -> None:
        build(data, site)
        data_repo(progs, case, site)
        write_trace(data / "r2", json.loads(trace))
        build(data, site)
        repo, _ = publish_setup(env, base)
        env.reporter("publish", str(site), "--repo", str(repo), "--push", "origin")
    progs.measure(case, site_git)

    # Publishing: a repository whose config names programs, pushing to remotes of every kind
    server, http_url = serve_401()
    try:
        for case, how in PUBLISH_CASES.items():
            base = env.work / f"prog-pub-{len(progs.cases)}"
            base.mkdir()
            repo, remote = publish_setup(env, base)
            extra = how(progs, case, base, repo, remote, http_url)
            more, progs.next_args = progs.next_args, []
            progs.measure(case, lambda repo=repo, extra=extra, more=more: env.reporter(
                "publish", str(published_site), "--repo", str(repo), "--push", "origin", *more, extra=extra or None))
        control_checks(progs, http_url)
    finally:
        server.shutdown()
    return progs


def control_checks(progs: Programs, http_url: str) -> None:
    """The same programs, started directly (not through reporter): each must write to the marker file, or the
    check above is blind."""
    env, w = progs.env, progs.env.work

    def count(what: str, action: Callable[[], Any]) -> None:
        progs.ran.unlink(missing_ok=True)
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            action()
        progs.controls.append((what, len(progs.ran.read_text().splitlines()) if progs.ran.exists() else 0))

    def run(cmd: list[str], cwd: Path | None = None, extra: dict[str, str] | None = None) -> None:
        subprocess.run(cmd, cwd=cwd, env={**env.env, **(extra or {})}, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)

    count("git status in DATA of case 1", lambda: run(["git", "-C", str(w / "prog-0" / "data"), "status"]))
    count("git commit in DATA of case 1", lambda: run(["git", "-C", str(w / "prog-0" / "data"), "commit", "-q", "--allow-empty", "-m", "c"]))
    count("python -c 'import json' started in DATA of the modules case", lambda: run([sys.executable, "-c", "import json"], cwd=w / "prog-shadow" / "data"))
    count("python -m reporter.cli --help started in DATA of the modules case", lambda: run([sys.executable, "-m", "reporter.cli", "--help"], cwd=w / "prog-shadow" / "data"))
    exe = __import__("reporter.render.fulltext", fromlist=["binary"]).binary()
    pf = w / "prog-pagefind"

    def pagefind() -> None:
        docs = w / "control-docs"
        docs.mkdir(exist_ok=True)
        (docs / "a.html").write_text("<html><body><main>hello</main></body></html>")
        before = set(pf.glob("pagefind-*"))
        run([str(exe), "--site", str(docs)], cwd=pf / "data")
        with open(progs.ran, "a") as fh:
            fh.writelines(f"control: {p.name}\n" for p in set(pf.glob("pagefind-*")) - before)
    if exe is not None:
        count("pagefind started in DATA of the pagefind case", pagefind)
    for n, case in enumerate(PUBLISH_CASES):
        repo = w / f"prog-pub-{progs.cases.index(case)}" / "repo"
        if n in (0, 1, 3, 4, 5, 8):  # every config, ssh, git://, http with credentials, ext::, include
            count(f"git push from the repository of {case!r}", lambda repo=repo: run(["git", "-C", str(repo), "push", "-q", "origin", "main:refs/heads/ctl"]))


def serve_401() -> tuple[http.server.ThreadingHTTPServer, str]:
    """An http remote that asks for credentials (so git looks for a credential helper and an askpass)."""
    class Ask(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="fuzz"')
            self.send_header("Content-Length", "0")
            self.end_headers()
        do_POST = do_GET

        def log_message(self, format: str, *args: object) -> None:
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ask)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/site.git"


Setup = Callable[[Programs, str, Path, Path, Path, str], "dict[str, str] | None"]


def _all_config(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    progs.hostile_config(case, repo)


def _url(new: str) -> Setup:
    def setup(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
        progs.hostile_config(case, repo)
        progs.env.git(repo, "remote", "set-url", "origin", new.format(script=progs.script(case, "transport"), http=url))
    return setup


def _receivepack(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    progs.env.git(repo, "config", "remote.origin.receivepack", progs.script(case, "remote.origin.receivepack"))
    progs.env.git(repo, "config", "remote.origin.uploadpack", progs.script(case, "remote.origin.uploadpack"))


def _include(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    inc = base / "included"
    inc.mkdir()
    progs.env.git(inc, "init", "-q")
    progs.hostile_config(case, inc)
    progs.env.git(repo, "config", "include.path", str(inc / ".git" / "config"))
    progs.env.git(repo, "config", f"includeIf.gitdir:{repo}/.path", str(inc / ".git" / "config"))
    progs.env.git(repo, "remote", "set-url", "origin", url)


def _remote_hooks(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    progs.hostile_config(case, remote)


def _update_instead(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    """A non-bare remote with gh-pages checked out (a publish wrote it first, with a clean config), then its config
    made hostile (filters, hooks, push-to-checkout) with receive.denyCurrentBranch=updateInstead; the measured publish
    changes the CNAME, so it has a commit to push."""
    env, checkout = progs.env, base / "checkout"
    env.git(base, "init", "-q", "-b", "main", str(checkout))
    env.git(checkout, "commit", "-q", "--allow-empty", "-m", "x")
    env.git(repo, "remote", "set-url", "origin", str(checkout))
    env.reporter("publish", str(progs.site), "--repo", str(repo), "--push", "origin")
    env.git(checkout, "symbolic-ref", "HEAD", "refs/heads/gh-pages")
    env.git(checkout, "reset", "-q", "--hard")
    (checkout / ".gitattributes").write_text("* filter=x diff=x\n")
    progs.hostile_config(case, checkout)
    env.git(checkout, "config", "receive.denyCurrentBranch", "updateInstead")
    progs.next_args = ["--cname", "other.example.org"]


def _helper(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> dict[str, str]:
    bindir = base / "path"
    bindir.mkdir()
    for name in ("git-remote-evil", "git-remote-ext2"):
        shutil.copy(progs.script(case, f"remote helper {name}"), bindir / name)
        (bindir / name).chmod(0o755)
    progs.env.git(repo, "remote", "set-url", "origin", "evil::somewhere")
    progs.env.git(repo, "remote", "add", "other", str(remote))
    progs.env.git(repo, "config", "remote.other.vcs", "ext2")
    return {"PATH": f"{bindir}:{progs.env.env['PATH']}"}


def _insteadof(progs: Programs, case: str, base: Path, repo: Path, remote: Path, url: str) -> None:
    progs.env.git(repo, "config", "protocol.ext.allow", "always")
    progs.env.git(repo, "config", f"url.ext::{progs.script(case, 'insteadOf ext')} %S #.insteadOf", "https://evil.example/")
    progs.env.git(repo, "config", f"url.ext::{progs.script(case, 'pushInsteadOf ext')} %S #.pushInsteadOf", "https://evil.example/")
    progs.env.git(repo, "remote", "set-url", "origin", "https://evil.example/site.git")


PUBLISH_CASES: dict[str, Setup] = {
    "publish: the repository's config names every program (local bare remote)": _all_config,
    "publish: core.sshCommand, ssh:// remote": _url("ssh://git@127.0.0.1:1/site.git"),
    "publish: core.sshCommand, scp-like remote": _url("git@127.0.0.1:site.git"),
    "publish: core.gitProxy, git:// remote": _url("git://127.0.0.1:1/site.git"),
    "publish: credential.helper and core.askPass, http remote asking for credentials": _url("{http}"),
    "publish: ext:: remote, protocol.ext.allow=always": _url("ext::{script} %S"),
    "publish: file:// remote": _url("file:///nonexistent/site.git"),
    "publish: remote.origin.receivepack and uploadpack": _receivepack,
    "publish: include.path and includeIf naming the programs": _include,
    "publish: the remote's own config and hooks (local bare remote)": _remote_hooks,
    "publish: checked-out remote with updateInstead, filters, push-to-checkout": _update_instead,
    "publish: remote helpers (evil::URL, remote.other.vcs) on PATH": _helper,
    "publish: url.ext::.insteadOf and pushInsteadOf": _insteadof,
}


# ---------------------------------------------------------------------------------------------------------------------
# 4. XSS

PAYLOADS = (
    "<script>{c}</script>",
    "<img src=x onerror={c}>",
    "\"><svg onload={c}>",
    "'><svg onload={c}>",
    "</script><script>{c}</script>",
    "[click me](javascript:{c})",
    "<a href=\"javascript:{c}\">link</a>",
    "javascript:{c}",
    "<iframe srcdoc=\"<script>parent.{c}</script>\"></iframe>",
    "<details open ontoggle={c}>x</details>",
    "![x](x\" onerror=\"{c})",
    "<a href=\"&#106;avascript:{c}\">entity</a>",
    "<math><mtext><table><mglyph><style><img src=x onerror={c}>",
    "<!--<script>{c}//-->",
    "[x](<javascript:{c}>)",
    "<javascript:{c}>",
    "<svg><a xlink:href=\"javascript:{c}\"><text y=10>svg</text></a></svg>",
    "\u2028\u2029</script><script>{c}</script>",
    "<input autofocus onfocus={c}>",
    "<form><button formaction=javascript:{c}>b</button></form>",
    "`${{{c}}}`",
    "<style>@import 'javascript:{c}';</style><b onmouseover={c}>",
)
# (place, markdown?) each run holds its payload in every one of these, each with its own marker
XSS_PLACES = ("reasoning", "reasoning-markdown", "prompt", "tool-name", "tool-argument", "tool-argument-key", "tool-result",
              "kernel-source", "reference-source", "metadata-key", "metadata-value", "source-note", "title", "model",
              "problem-file", "benchmark", "configuration", "recorded-gpu", "backend", "unknown-field-key",
              "unknown-field-value", "bottleneck", "warp-stall-key", "folder-name", "attachment-name", "ncu-kernel",
              "profiler-kernel", "review-note", "cache-log", "cache-env", "kb-kernel", "kb-prompt")


NAME_GROUPS = 4  # runs sharing a model, problem, benchmark and configuration name


def xss_text(p: int, q: int) -> str:
    return f"zqxss{p} " + PAYLOADS[p].format(c=f"__xss_{p}_{q}=1")


def xss_data(env: Env, data: Path, kbroot: Path) -> None:
    from reporter.core.records import sha256_text
    for p in range(len(PAYLOADS)):
        t = {place: xss_text(p, q) for q, place in enumerate(XSS_PLACES)}
        # the names that make pages of their own (a model's, a problem's, a leaderboard's) hold the payloads of a group
        # of runs, one after another, so the site has a few such pages, not one per payload
        group = range(p % NAME_GROUPS, len(PAYLOADS), NAME_GROUPS)
        for place in ("model", "problem-file", "benchmark", "configuration"):
            t[place] = " ".join(xss_text(g, XSS_PLACES.index(place)) for g in group)
        doc = r3.minimal_trace(t["model"])
        doc["run"].update(problem_file=t["problem-file"], benchmark=t["benchmark"], configuration=t["configuration"],
                          title=t["title"], recorded_gpu=t["recorded-gpu"], backend=t["backend"], source_note=t["source-note"],
                          problem_id=p % NAME_GROUPS + 1)
        doc["prompt"] = t["prompt"]
        doc["reference_source"] = f"import torch\n# {t['reference-source']}\nclass Model(torch.nn.Module):\n    pass\n"
        doc["final_kernel"] = {"source": f"# {t['kernel-source']}\nclass ModelNew:\n    pass\n", "turn": 1}
        doc["harness_metadata"] = {t["metadata-key"]: t["metadata-value"]}
        doc[t["unknown-field-key"]] = t["unknown-field-value"]
        doc["metrics"] = {"timing": {"source": "kernelbench.timing", "unit": "ms", "runtime": 1.0 + p, "ref_runtime": 2.0, "speedup": 2.0 / (1 + p)},
                          "nsight": {"bottleneck": t["bottleneck"], "dominant_pipe": t["bottleneck"], "warp_stalls_pct": {t["warp-stall-key"]: 12.5}}}
        doc["turns"] = [
            {"index": 0, "reasoning": f"Plan.\n{t['reasoning']}\n", "calls": [
                {"tool": t["tool-name"], "arguments": {"cmd": t["tool-argument"], t["tool-argument-key"]: 1,
                                                       "kernel_code": f"// {t['kernel-source']}\n"},
                 "result": {"ok": True, "text": t["tool-result"]}}]},
            {"index": 1, "reasoning_format": "markdown", "reasoning": f"Markdown.\n\n{t['reasoning-markdown']}\n\n"
                                                                       f"```cuda\n// {t['reasoning-markdown']}\n```\n", "calls": []}]
        folder = data / folder_name(t["folder-name"])
        folder.mkdir(parents=True)
        (folder / "k.csv").write_text(r3.NCU_SAMPLE.read_text().replace("grounded_top2_kernel(", f"kernel_{t['ncu-kernel'].replace(chr(34), chr(39))}("))
        events = [{"ph": "X", "cat": "kernel", "name": t["profiler-kernel"], "dur": 3.0}]
        (folder / "p.json").write_text(json.dumps({"traceEvents": events}))
        doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "k.csv"},
                              {"kind": "torch_profiler_trace", "role": "kernel", "path": "p.json"},
                              {"kind": "ncu_raw_csv", "role": "reference", "path": folder_name(t["attachment-name"]) + ".csv", "note": t["attachment-name"]}]
        (folder / "trace.json").write_text(json.dumps(doc), encoding="utf-8")
        r3.cached_result(data, doc, t["cache-log"], t["cache-env"])
        review = {"run": folder.name, "kernel_sha256": sha256_text(doc["final_kernel"]["source"]), "reviewer": "r", "verdict": "clean",
                  "quote": "kernel.py:1", "note": t["review-note"]}
        with open(data / "reviews.toml", "a", encoding="utf-8") as fh:
            fh.write("[[review]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in review.items()))
    # one KernelBench run folder (a few runs) holds every payload in its kernel and prompt
    q_kernel, q_prompt = XSS_PLACES.index("kb-kernel"), XSS_PLACES.index("kb-prompt")
    plant_kb_folder(kbroot, 0, {"kb-kernel": ("\n# ".join(xss_text(p, q_kernel) for p in range(len(PAYLOADS))), ""),
                                "kb-prompt": ("\n".join(xss_text(p, q_prompt) for p in range(len(PAYLOADS))), "")})


COLLECT = "() => Object.keys(window).filter((k) => k.startsWith('__xss_'))"
INTERACT = """async () => {
  const until = async (ok, ms) => { const end = Date.now() + ms; while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 50)); };
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  await until(() => Array.from(document.querySelectorAll('.lazy-body')).every((b) => b.dataset.filled), 4000);
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const buttons = document.querySelectorAll('button[data-show]');
  buttons.forEach((b) => b.click());
  if (buttons.length) { await new Promise((r) => setTimeout(r, 100)); document.querySelectorAll('button[data-show="source"]').forEach((b) => b.click()); }
  if (document.getElementById('plotly-js')) await until(() => window.Plotly && document.querySelector('.js-plotly-plot'), 6000);
  await new Promise((r) => setTimeout(r, 100));
  const links = Array.from(document.querySelectorAll('a[href], area[href], [formaction], iframe[src], object[data], embed[src]'))
    .filter((a) => /^\\s*javascript:/i.test(a.getAttribute('href') || a.getAttribute('formaction') || a.getAttribute('src') || a.getAttribute('data') || ''));
  return links.length;
}"""
CLICK_JS_LINKS = """() => {
  Array.from(document.querySelectorAll('a[href], [formaction]'))
    .filter((a) => /^\\s*javascript:/i.test(a.getAttribute('href') || a.getAttribute('formaction') || ''))
    .forEach((a) => { try { a.click(); } catch (e) {} });
  document.querySelectorAll('[onmouseover], [onfocus]').forEach((e) => { try { e.dispatchEvent(new MouseEvent('mouseover')); e.focus(); } catch (x) {} });
}"""
TYPE = """async (q) => {
  const inputs = Array.from(document.querySelectorAll('input[type=search]')).filter((i) => !i.disabled);
  if (!inputs.length) return 0;
  for (const input of inputs) { input.value = q; input.dispatchEvent(new Event('input', { bubbles: true })); }
  const status = document.querySelector('#fulltext .ft-status');
  const end = Date.now() + 5000;
  await new Promise((r) => setTimeout(r, 300));
  while (status && !/runs? mention/.test(status.textContent) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  for (const b of document.querySelectorAll('.ft-more')) { let n = 0; while (!b.hidden && n++ < 20) { b.click(); await new Promise((r) => setTimeout(r, 300)); } }
  await new Promise((r) => setTimeout(r, 300));
  return document.querySelectorAll('.ft-results > li').length;
}"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def xss_class(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    from playwright.sync_api import Error as BrowserError
    from playwright.sync_api import sync_playwright
    base = env.work / "xss"
    data, kbroot, site = base / "data", base / "kb", base / "site"
    data.mkdir(parents=True)
    kbroot.mkdir()
    xss_data(env, data, kbroot)
    rc_import, _ = env.reporter("import", "kernelbench", str(kbroot), "--problems", str(r3.KB / "problems"), "--out", str(data))
    rc, out = env.reporter("build", "--no-validate", str(data), str(site))
    res: dict[str, Any] = {"build": f"import exit {rc_import}, build exit {rc}: {out.strip().splitlines()[-1][:160] if out.strip() else ''}",
                           "executed": set(), "pages": 0, "js_links": Counter(), "page_errors": Counter(), "searches": 0,
                           "search_results": 0, "hl": 0, "where": {}}
    control = site / "xss-control.html"  # not the build's: the check's own control, removed after
    control.write_text("<!doctype html><p>control <img src=x onerror=__xss_control=1></p>")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if not p.relative_to(site).as_posix().startswith("."))
    runs = [p for p in pages if p.startswith("runs/")]
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            context = browser.new_context()
            context.set_default_timeout(20_000)

            def visit(rel: str, query: str = "", interact: bool = True, typed: Iterable[str] = ()) -> None:
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("dialog", lambda d: d.dismiss())
                try:
                    page.goto(url + urllib.parse.quote(rel) + query, wait_until="load")
                    page.wait_for_timeout(100)
                    if interact:
                        res["js_links"][rel] += page.evaluate(INTERACT)
                    for q in typed:
                        if rel == "search.html":
                            with contextlib.suppress(Exception):
                                page.wait_for_function("() => { const i = document.querySelector('#fulltext input[type=search]');"
                                                       " return i && (!i.disabled || document.querySelector('#fulltext.unavailable')); }",
                                                       timeout=30_000)
                        got = page.evaluate(TYPE, q)
                        if page.evaluate("() => document.querySelectorAll('input[type=search]').length"):
                            res["searches"] += 1
                            res["search_results"] += got
                    page.evaluate(CLICK_JS_LINKS)
                    page.wait_for_timeout(150)
                    with contextlib.suppress(Exception):
                        for key in page.evaluate(COLLECT):
                            res["executed"].add(key)
                            res["where"].setdefault(key, rel + query)
                except BrowserError as exc:  # a page that cannot be opened is reported, not fatal
                    errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")
                finally:
                    res["page_errors"][rel] += len(errors)
                    if errors:
                        res.setdefault("error_text", {}).setdefault(rel, errors[0][:200])
                    page.close()

            visit("xss-control.html")
            res["control"] = "__xss_control" in res["executed"]
            res["executed"].discard("__xss_control")
            res["where"].pop("__xss_control", None)
            control.unlink()
            for rel in pages:
                if rel == "xss-control.html":
                    continue
                res["pages"] += 1
                visit(rel, typed=["zqxss"])
            # the payloads themselves typed into the search page, and as ?hl= on run pages (the full-text results' links)
            visit("search.html", interact=False, typed=[PAYLOADS[p].format(c=f"__xss_{p}_{len(XSS_PLACES)}=1") for p in range(len(PAYLOADS))])
            for p in range(len(PAYLOADS)):
                for rel in runs[:1]:
                    res["hl"] += 1
                    visit(rel, "?hl=" + urllib.parse.quote("zqxss " + PAYLOADS[p].format(c=f"__xss_{p}_{len(XSS_PLACES) + 1}=1"))
                          + "#turn-0", interact=False)
            browser.close()
    finally:
        server.shutdown()
    return res


def xss_name(key: str) -> str:
    m = re.fullmatch(r"__xss_(\d+)_(\d+)", key)
    if not m:
        return key
    p, q = int(m.group(1)), int(m.group(2))
    place = XSS_PLACES[q] if q < len(XSS_PLACES) else ("typed into search" if q == len(XSS_PLACES) else "?hl= of a run page")
    return f"payload {p} {PAYLOADS[p].format(c='…')!r} in {place}"


# ---------------------------------------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip", nargs="*", default=[], choices=["secrets", "bricked", "programs", "xss"])
    ap.add_argument("--keep", type=Path, default=None, help="Work in this folder and keep it (to look at a failure).")
    args = ap.parse_args()
    started = time.time()
    out: list[str] = [f"nice -n 10 python benchmarks/fuzz_round4.py --seed {args.seed} --rounds {args.rounds}"
                      + (f" --skip {' '.join(args.skip)}" if args.skip else "") + (f" --keep {args.keep}" if args.keep else "")]
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    out.append(f"reporter at {head}; git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}; "
               "every build and publish is the `reporter` command in a child process")
    with contextlib.ExitStack() as stack:
        work = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fuzz43-")))
        work.mkdir(parents=True, exist_ok=True)
        env = Env(work)
        published_site = None
        if "secrets" not in args.skip:
            t0 = time.time()
            s = secrets_class(args, env)
            n = len(s.plants)
            leaked = sum(s.published.values())
            kinds, places = len({k for k, _, _ in s.plants}), len({p for _, p, _ in s.plants})
            out.append(f"secrets: {n} plants of {kinds} kinds in {places} places ({args.rounds} rounds, seed {args.seed}); "
                       f"searched in every file of SITE ({sum(1 for _ in (env.work / 'secrets-0' / 'site').rglob('*') if _.is_file())} in round 0, "
                       f"Pagefind's chunks decompressed) and the terminal output of import and build")
            out.append(f"  published                              {leaked} ({100 * leaked / n:.2f}%)")
            by_kind, by_place = Counter[str](), Counter[str]()
            planted_kind, planted_place = Counter(k for k, _, _ in s.plants), Counter(p for _, p, _ in s.plants)
            for (kind, place), c in s.published.items():
                by_kind[kind] += c
                by_place[place] += c
            for kind, c in sorted(by_kind.items()):
                out.append(f"    kind {kind}: {c} of {planted_kind[kind]} ({100 * c / planted_kind[kind]:.1f}%)")
            for place, c in sorted(by_place.items()):
                out.append(f"    place {place}: {c} of {planted_place[place]} ({100 * c / planted_place[place]:.1f}%)")
            for key, c in sorted(s.published.items()):
                out.append(f"    {key[0]} in {key[1]}: {c}, found in {', '.join(s.where[key])}")
                out.append(f"      planted as {s.texts[key][:200]!r}")
                out.append(f"      replay: {s.replay[key]}")
            out.append(f"  run pages withheld by the build's final check (LeakError: a value the redaction of its field missed; "
                       f"the run is left out of the site): {len(s.withheld)} of {2 * len(KINDS) * args.rounds} trace runs "
                       "(runN: the trace places' plants, revN: a reviews.toml note's)")
            for prefix, kind, rule in sorted({(f, k, r) for _, f, k, r, _, _ in s.withheld}):
                hits = [(rnd, page, line) for rnd, f, k, r, page, line in s.withheld if (f, k, r) == (prefix, kind, rule)]
                unredacted = env.work / "secrets-0" / "site-unredacted"
                shown = ""
                for rnd, page, line in hits:
                    with contextlib.suppress(OSError, IndexError, AttributeError):
                        if rnd == 0:  # the element on that line of the --no-redact build's page, up to its first colon
                            text = (unredacted / page).read_text(encoding="utf-8").splitlines()[line - 1]
                            shown = f"; line {line} there: {re.match(r'[^:]*:', text).group(0)[:60]!r}…" if ":" in text else ""
                out.append(f"    {prefix}{list(KINDS).index(kind)} ({kind}, read as {rule}): {len(hits)} round(s){shown}")
            found, planted = s.control
            out.append(f"  control: round 0 built with --no-redact shows {found} of {planted} ({100 * found / max(planted, 1):.0f}%; "
                       f"{s.control_terminal} in the terminal output): the search sees what is published")
            if s.unplaceable:
                out.append(f"  not planted (the place cannot hold the kind): {sum(s.unplaceable.values())} draws, "
                           + ", ".join(sorted({f'{k} in {p}' for k, p in s.unplaceable})))
            out.append(f"  (informational) plants whose secret the state file .reporter-status.json holds hex-encoded, by design: {s.hex_state}")
            out.extend(f"  {b}" for b in s.builds)
            out.append(f"  ({time.time() - t0:.0f} s)")
            published_site = env.work / "secrets-0" / "site"
        if "bricked" not in args.skip:
            t0 = time.time()
            rows = bricked_class(args, env)
            cases = [r for r in rows if not r.get("attribution")]
            bricked = [r for r in cases if r["bricked"]]
            out.append(f"sites bricked: {len(cases)} cases, {len(hostile_names(random.Random(0))) - 1} hostile names, {GROUP} a case "
                       "and all at once (each name is a run folder's name and that run's model, problem file, benchmark and "
                       "configuration, beside a plain run; build, publish to a local repository and push to a bare one, add a run, "
                       "build again into the same SITE, publish again)")
            out.append(f"  bricked                                {len(bricked)}")
            out.append(f"  first builds lost                      {sum(r['first build lost'] for r in cases)}")
            for r in rows:
                status = " ".join(f"{st}:{rc}{'' if good else '(REFUSED)'}" for st, rc, good, _ in r["steps"])
                out.append(f"    {r['label']}\n      {status}; runs read-unreadable {'/'.join(r['runs'])}"
                           + (f"  [{r['tracebacks']} traceback(s)]" if r["tracebacks"] else ""))
            for r in rows:
                for st, rc, good, text in r["steps"]:
                    if not good or "Traceback" in text:
                        lines = [x for x in text.strip().splitlines() if x.strip()]
                        out.append(f"    {r['label']} / {st} (exit {rc}): {' | '.join(lines[-3:])[:400]!r}")
                        out.append(f"      replay: --seed {args.seed} --skip secrets programs xss --keep DIR (DIR/{r['base']}, "
                                   f"names {r['names']!r})")
            out.append(f"  ({time.time() - t0:.0f} s)")
        if "programs" not in args.skip:
            t0 = time.time()
            if published_site is None or not built(published_site):
                published_site = env.work / "pub-site"
                write_trace(env.work / "pub-data" / "r", r3.minimal_trace("m"))
                env.reporter("build", "--no-validate", str(env.work / "pub-data"), str(published_site))
            progs = programs_class(args, env, published_site)
            out.append(f"programs run: {len(progs.cases)} cases ({len(progs.cases) - len(PUBLISH_CASES)} of DATA and SITE for a build, "
                       f"{len(PUBLISH_CASES)} of publishing), each program appending to a marker file")
            out.append(f"  programs run                           {sum(progs.counts.values())}")
            for case in progs.cases:
                out.append(f"    {case:<86} {progs.counts[case]}" + (f"   ({progs.notes[case]})" if case in progs.notes else ""))
            for case, lines in progs.lines.items():
                out.append(f"    {case}: " + "; ".join(sorted(set(lines)))[:600])
                out.append(f"      replay: --seed {args.seed} --skip secrets bricked xss --keep DIR")
            blind = [what for what, n in progs.controls if n == 0]
            out.append(f"  control: the same programs started directly (not through reporter) ran in {len(progs.controls) - len(blind)} "
                       f"of {len(progs.controls)} checks ({sum(n for _, n in progs.controls)} marker lines)"
                       + (f"; none ran in: {'; '.join(blind)}" if blind else ""))
            out.append(f"  ({time.time() - t0:.0f} s)")
        if "xss" not in args.skip:
            t0 = time.time()
            x = xss_class(args, env)
            out.append(f"XSS executed: {len(PAYLOADS)} payloads x {len(XSS_PLACES)} places ({len(PAYLOADS) * len(XSS_PLACES)} plants); "
                       f"{x['pages']} pages opened in Chromium, every <details> opened and version view clicked; {x['searches']} "
                       f"searches typed ({x['search_results']} full-text results listed); {x['hl']} run pages opened with ?hl=PAYLOAD")
            out.append(f"  XSS executed                           {len(x['executed'])}")
            for key in sorted(x["executed"]):
                out.append(f"    {xss_name(key)}: on {x['where'][key]}; replay: --seed {args.seed} --skip secrets bricked programs --keep DIR")
            out.append(f"  javascript: links in pages             {sum(x['js_links'].values())}"
                       + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(x['js_links'].items()) if v)})" if sum(x["js_links"].values()) else ""))
            errs = {k: v for k, v in x["page_errors"].items() if v}
            out.append(f"  pages with script errors               {len(errs)}")
            for rel in sorted(errs)[:8]:
                out.append(f"    {rel}: {x.get('error_text', {}).get(rel, '')!r}")
            out.append(f"  control: a page with a raw payload {'ran it' if x['control'] else 'DID NOT run it (the check is blind)'}")
            out.append(f"  {x['build']}")
            out.append(f"  ({time.time() - t0:.0f} s)")
    out.append(f"took {time.time() - started:.0f} s")
    print("\n".join(out))


if __name__ == "__main__":
    main()
