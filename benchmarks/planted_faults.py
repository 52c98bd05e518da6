"""Hand-planted faults (issue 22, item 5): is each realistic one-line mistake caught by its module's own tests?

Each fault below was written by hand after reading the module: the file, the exact text it replaces, the
replacement, what the mistake does, and which test files a developer of that module runs. For each fault
in turn the script copies the tree once into a scratch folder (never touching this checkout), applies
the fault there, runs the named test files with `python -m pytest -q -x -p no:cacheprovider`, records
killed (a test failed) or survived, and restores the file. It prints a table and the score by area.

    nice -n 5 python benchmarks/planted_faults.py > /tmp/planted.txt      # every fault (1-2 h on 2 busy cores)
    python benchmarks/planted_faults.py --only rd-cache-depth,agg-fast-ge  # some of them
    python benchmarks/planted_faults.py --check                           # each fault still applies (seconds)

`kind` says whether a fault repeats a kind the issue lists ("issue: ...") or is a new kind ("new").
`equivalent`, where set, says why no test can tell the fault from the code (it still counts as survived).
The faults are data, written by hand: never generate them from the code.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.90

# The tests a developer of each area runs (its own tests; files added for issue 22 item 5 included).
AREA_TESTS: dict[str, tuple[str, ...]] = {
    "checks": ("tests/test_checks.py", "tests/test_check_rules.py"),
    "publish": ("tests/test_publish.py",),
    "aggregates": ("tests/test_aggregates.py", "tests/test_boards.py", "tests/test_gold_pages.py"),
    "ncu+figures": ("tests/test_gpu_metrics.py",),
    "redact": ("tests/test_redact_boundary.py", "tests/test_redact.py", "tests/test_redact_kinds.py"),
    "numbers": ("tests/test_numbers.py", "tests/test_text.py", "tests/test_timing_view.py", "tests/test_boards.py",
                "tests/test_gold_pages.py"),
    "templates": ("tests/test_gold_pages.py", "tests/test_render.py", "tests/test_trust_pages.py"),
    "cheats": ("tests/test_cheats.py",),
    "traces+read": ("tests/test_collect.py", "tests/test_collisions.py"),
    "safeio+limits": ("tests/test_safeio.py", "tests/test_hostile_input.py", "tests/test_fuzz.py"),
    "text": ("tests/test_text.py",),
    "incremental": ("tests/test_plan.py", "tests/test_incremental.py", "tests/test_digests.py"),
    "validate": ("tests/test_recorder.py", "tests/test_worker_verdicts.py", "tests/test_slots.py", "tests/test_pipeline.py"),
}


@dataclass(frozen=True)
class Fault:
    id: str
    area: str
    file: str
    old: str  # exact text, found once in the file
    new: str
    what: str
    kind: str = "new"
    equivalent: str = ""

    @property
    def tests(self) -> tuple[str, ...]:
        return AREA_TESTS[self.area]


CHK, PUB, AGS, NCF, RED, NUM, TPL, CHT, TRC, SIO, TXT, INC, VAL = AREA_TESTS
CHECKS, FIGURES, NCU = "reporter/core/checks.py", "reporter/collect/figures.py", "reporter/collect/ncu.py"
AGG, REDACT, NUMBERS = "reporter/aggregates/scope.py", "reporter/collect/redact.py", "reporter/render/numbers.py"
AGG_BOARD, AGG_GRID, AGG_DEN = "reporter/aggregates/board.py", "reporter/aggregates/grid.py", "reporter/aggregates/denominators.py"
ASSIGN, RULES = "reporter/collect/assign.py", "reporter/collect/secretrules.py"
SAFEIO, TEXT, PLAN = "reporter/core/safeio.py", "reporter/render/text.py", "reporter/render/plan.py"
WORKER, RECORDER = "reporter/validate/worker.py", "reporter/validate/recorder.py"

FAULTS: list[Fault] = [
    # core/checks.py: the flag rules and tolerances
    Fault("chk-sol-80", CHK, CHECKS, "    if hi >= 80:", "    if hi > 80:",
          "SOLBottleneck: exactly 80% throughput is no longer 'high throughput'"),
    Fault("chk-pct-100", CHK, CHECKS, "if value is None or 0.0 <= value <= 100.0:", "if value is None or 0.0 <= value < 100.0:",
          "a recorded 100% (a full L2 hit rate) is flagged impossible"),
    Fault("chk-tol-edge", CHK, CHECKS, "abs(recorded / measured - 1) <= AGREEMENT_TOLERANCE",
          "abs(recorded / measured - 1) < AGREEMENT_TOLERANCE", "a figure exactly 25% off no longer agrees"),
    Fault("chk-othergpu-unknown", CHK, CHECKS, "same_gpu(t.ref_gpu, run.recorded_gpu) is False:",
          "same_gpu(t.ref_gpu, run.recorded_gpu) is not True:",
          "'baseline from another GPU' raised when either GPU is merely unknown"),
    Fault("chk-count-swap", CHK, CHECKS, 'f"recorded {recorded}, counted {counted} ({how})"',
          'f"recorded {counted}, counted {recorded} ({how})"', "a launch-count disagreement names the two counts the wrong way round"),
    Fault("chk-speedup-unknown", CHK, CHECKS, "return correct is True and not suspect", "return correct is not False and not suspect",
          "a run whose correctness is unknown gets a speedup"),
    Fault("chk-dup-flags", CHK, CHECKS, "return impossible + [f for f in rest if f.field not in bad]", "return impossible + rest",
          "an impossible value also gets every other flag on its field (a NaN runtime 'does not match' its speedup)"),
    # publish/
    Fault("pub-index-and", PUB, "reporter/publish/pages.py",
          'if owned_files(site) is None or not (site / "index.html").is_file():',
          'if owned_files(site) is None and not (site / "index.html").is_file():',
          "a site with a status but no index.html (or the reverse) is published"),
    Fault("pub-link-way", PUB, "reporter/publish/pages.py",
          "plain = stat.S_ISREG(os.lstat(src).st_mode) and os.path.realpath(src) == os.path.join(real, rel)",
          "plain = stat.S_ISREG(os.lstat(src).st_mode)",
          "a file reached through a linked folder inside SITE is published (a link on the way is followed)"),
    Fault("pub-cname", PUB, "reporter/publish/pages.py", "if cname is None and parent is not None:",
          "if cname is None and parent is None:", "the branch's custom domain (CNAME) is dropped by the next publish"),
    Fault("pub-remote-head", PUB, "reporter/publish/pages.py", 'return remote_head.split("/", 1)[-1]',
          'return remote_head.split("/", 1)[0]', "origin's HEAD 'origin/main' read as the branch 'origin'"),
    Fault("pub-force-checked-out", PUB, "reporter/publish/pages.py", "    if branch in checked_out:",
          "    if branch in checked_out and not force:", "--force publishes over a branch checked out in a worktree"),
    # aggregates/: the leaderboard maths
    Fault("agg-partial", AGS, AGG, 'ok = frame["complete"].fillna(False) & frame["level"].notna()',
          'ok = frame["level"].notna()', "partial runs enter the leaderboards", kind="issue: partial runs in leaderboards"),
    Fault("agg-rank-slow", AGS, AGG, 'ascending=[False, False, False, True],', 'ascending=[False, False, True, True],',
          "a problem attempted twice is represented by its slower correct run"),
    Fault("agg-fast-ge", AGS, AGG, '**{f"_{fast_column(p)}": counts & best["speedup"].gt(p).fillna(False)',
          '**{f"_{fast_column(p)}": counts & best["speedup"].ge(p).fillna(False)',
          "fast_p counts a speedup equal to p (KernelBench: strictly greater)"),
    Fault("agg-tokens-zero", AGS, AGG_BOARD, 'lambda s: s[s > 0].median()))', 'lambda s: s.median()))',
          "runs that recorded 0 tokens (not counted) pull the median tokens down"),
    Fault("agg-unknown-slower", AGS, AGG_GRID, "(correct & speed.le(1.0), GridState.SLOWER),",
          "(correct & ~speed.gt(1.0), GridState.SLOWER),", "a correct run with an unknown speedup is 'slower' in the grid"),
    Fault("agg-denominator", AGS, AGG_DEN, "n = len(every) if known else len(tried)", "n = len(tried)",
          "fast_p divides by the problems a model attempted, not by the recorded problem set"),
    Fault("agg-reval-speedup", AGS, AGG,
          'out["speedup"] = out["speedup"].where(out["speedup_source"] == Source.RE_VALIDATED)',
          'out["speedup"] = out["speedup"]', "re-validated-only boards count the harness's recorded speedups"),
    # collect/ncu.py and collect/figures.py
    Fault("ncu-fma-count", NCF, FIGURES, "flops_s = (counts[0] + counts[1] + 2 * counts[2]) / dur_s",
          "flops_s = (counts[0] + counts[1] + counts[2]) / dur_s",
          "FMA counted as one FLOP where the export has totals, not per-cycle rates", kind="issue: FMA as one FLOP"),
    Fault("ncu-thousands", NCF, NCU, 'return float(text.replace(",", ""))', "return float(text)",
          "a value with thousands separators ('1,234.5', as ncu writes them) is read as text"),
    Fault("ncu-raw-skip", NCF, NCU, "for row in rows[1 if units else 0:]:", "for row in rows[1:]:",
          "the first launch of a raw export without a units row is dropped"),
    Fault("ncu-sol-min", NCF, FIGURES, 'f["sol_score"] = Figure(max(sm, mem) / 100', 'f["sol_score"] = Figure(min(sm, mem) / 100',
          "the SOL score takes the lower of SM and memory throughput"),
    Fault("ncu-unweighted", NCF, FIGURES,
          "mean = statistics.fmean([float(v) for v, _ in vals if isinstance(v, float)], ws if sum(ws) else None)",
          "mean = statistics.fmean([float(v) for v, _ in vals if isinstance(v, float)])",
          "a multi-kernel call's figures are a plain mean, not weighted by each kernel's duration"),
    Fault("ncu-stalls-asc", NCF, FIGURES, "raw_stalls.items()), key=lambda x: (-x[1], x[0]))",
          "raw_stalls.items()), key=lambda x: (x[1], x[0]))", "the 'top 5 stalls' of a launch are its five smallest"),
    # collect/redact.py
    Fault("red-caps", RED, ASSIGN, "if key.upper() != key and not quoted", "if key.lower() != key and not quoted",
          "an ALL-CAPS .env secret that reads like a word (DB_PASSWORD=hunter) is kept"),
    Fault("red-newlines", RED, REDACT, 'f"[redacted: {kind}]" + "\\n" * text.count("\\n", start, end))',
          'f"[redacted: {kind}]")', "a redacted private-key block swallows its lines: later line numbers shift"),
    Fault("red-skip-shape", RED, RULES, "for kind, p, check, words in _SHAPES]", "for kind, p, check, words in _SHAPES[:2] + _SHAPES[3:]]",
          "the Anthropic key shape is never scanned (its keys are counted as OpenAI keys)"),
    Fault("red-allow-strip", RED, REDACT, "        entry = line.strip()\n", "        entry = line\n",
          "an allow-list entry with a trailing space or indentation allows nothing"),
    Fault("red-keyword-drop", RED, ASSIGN, "(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|", "(?:PASSWORD|PASSWD|SECRET|",
          "assignments to *_PASSPHRASE are no longer redacted (a rule-table entry dropped)"),
    # render/numbers.py
    Fault("num-common-max", NUM, NUMBERS, "return time_unit(min(known))", "return time_unit(max(known))",
          "times shown together take the largest one's unit ('0.0492 ms' beside '3.10 ms')"),
    Fault("num-percent", NUM, NUMBERS, 'f"{value * 100:.1f}%"', 'f"{value:.1f}%"', "a share (0-1) printed as a percent without x100"),
    Fault("num-share-zero", NUM, NUMBERS, 'return DASH if not d else f"{n / d:.2f}"', 'return "0.00" if not d else f"{n / d:.2f}"',
          "a share of nothing attempted prints 0.00 instead of a dash"),
    Fault("num-sec-edge", NUM, NUMBERS, 'return "s" if abs(shown) >= SECONDS_FROM_MS else "ms"',
          'return "s" if abs(shown) > SECONDS_FROM_MS else "ms"', "exactly 1,000 ms prints as '1,000 ms', not '1.00 s'"),
    Fault("num-unit-carry", NUM, NUMBERS, "    shown = _round_sig(value)", "    shown = value",
          "0.09996 ms picks its unit before rounding: '100 µs' instead of '0.100 ms'", kind="issue: rounding carry"),
    # templates/
    Fault("tpl-prompt-safe", TPL, "templates/run.html", "<pre>{{ r.trace.prompt }}</pre>", "<pre>{{ r.trace.prompt|safe }}</pre>",
          "the prompt (trace text) is rendered as HTML", kind="issue: |safe on untrusted text"),
    Fault("tpl-prevnext", TPL, "templates/run.html",
          "data-prev=\"{{ rel ~ prev if prev else '' }}\" data-next=\"{{ rel ~ next if next else '' }}\"",
          "data-prev=\"{{ rel ~ next if next else '' }}\" data-next=\"{{ rel ~ prev if prev else '' }}\"",
          "j/k go to the previous/next run the wrong way round"),
    Fault("tpl-hidden-basis", TPL, "templates/leaderboard.html",
          '<div data-basis="{{ view.key }}"{% if view.hidden %} hidden{% endif %}>', '<div data-basis="{{ view.key }}">',
          "every timing basis's leaderboard is shown at once (the other bases lose `hidden`)"),
    Fault("tpl-csp", TPL, "templates/base.html", "script-src 'self';", "script-src 'self' 'unsafe-inline';",
          "the Content-Security-Policy lets inline scripts run"),
    Fault("tpl-logtext", TPL, "templates/run.html", '<pre class="log">{{ res.log|logtext }}</pre>',
          '<pre class="log">{{ res.log }}</pre>', "the validator log shows the builder's home folder"),
    Fault("tpl-index-suspect", TPL, "templates/index.html", "<td>{{ row.stats.suspect }}</td>", "<td>{{ row.stats.correct }}</td>",
          "the index's suspect column repeats the correct count"),
    Fault("tpl-verdict-source", TPL, "templates/_macros.html",
          '{% if source %} <span class="src">{{ source }}</span>{% endif %}', "",
          "verdict pills no longer say whether the verdict is recorded or re-validated"),
    # core/cheats.py
    Fault("cht-memo-warn", CHT, "reporter/core/cheats.py", '("output_memoisation", "error",', '("output_memoisation", "warn",',
          "a cache keyed on tensor identity is only a warning", kind="issue: cheat severity lowered"),
    Fault("cht-triton-M", CHT, "reporter/core/cheats.py", r'r"^\s*(import|from)\s+triton\b", re.M)', r'r"^\s*(import|from)\s+triton\b")',
          "a Triton kernel whose import is not on the first line is scanned as CUDA (and errors: no __global__)"),
    Fault("cht-thread-drop", CHT, "reporter/core/cheats.py", r"multiprocessing|concurrent\.futures|os\.fork", r"multiprocessing|os\.fork",
          "a ThreadPoolExecutor escapes the thread-injection rule (a rule-table entry dropped)"),
    Fault("cht-cpp-comment", CHT, "reporter/core/cheats.py", 'stripped.startswith(("#", "//"))', 'stripped.startswith("#")',
          "C++ comment lines are scanned"),
    # collect/traces.py and collect/read.py
    Fault("rd-cache-depth", TRC, "reporter/collect/read.py", "if folder == data and entry.name == CACHE_DIR:",
          "if entry.name == CACHE_DIR:", "a run folder named 'validation' deeper in DATA is skipped"),
    Fault("rd-mytrace", TRC, "reporter/collect/read.py", 'name.endswith(".trace.json")', 'name.endswith("trace.json")',
          "mytrace.json is read as a trace", kind="issue: mytrace.json read as a trace"),
    Fault("rd-collide", TRC, "reporter/collect/read.py",
          'if taken[run_id] > 1 and not (path.name == "trace.json" and path.parent != data):', "if taken[run_id] > 1:",
          "on an id collision the folder run loses its short id too (its URL moves)"),
    Fault("tr-original", TRC, "reporter/collect/traces.py", "original=original if counts else None,", "original=None,",
          "the validator gets the redacted trace: its kernel and cache key are not the real ones"),
    Fault("tr-first-ncu", TRC, "reporter/collect/traces.py", 'elif "ncu_kernels" not in parts[att.role]:', "else:",
          "the last ncu export listed for a role wins, not the first"),
    Fault("tr-error-redact", TRC, "reporter/collect/traces.py",
          "errors = [redactor.error(e, Counter()) for e in errors] if redactor is not None else errors",
          "errors = list(errors)", "an unreadable trace's message is published unredacted"),
    # core/safeio.py and core/limits.py
    Fault("io-prefix", SIO, SAFEIO, "if not real.is_relative_to(root_real):", "if not str(real).startswith(str(root_real)):",
          "DATA-old/x counts as inside DATA (a string prefix, not a path)"),
    Fault("io-lstat", SIO, SAFEIO, "if not stat.S_ISDIR(os.lstat(folder).st_mode):", "if not stat.S_ISDIR(os.stat(folder).st_mode):",
          "write_inside writes through a linked folder"),
    Fault("io-surrogate-key", SIO, SAFEIO,
          "return {replace_surrogates(k) if isinstance(k, str) else k: clean_strings(v) for k, v in node.items()}",
          "return {k: clean_strings(v) for k, v in node.items()}", "a lone surrogate in a JSON key survives (it cannot be encoded)"),
    Fault("io-depth", SIO, SAFEIO, "if depth >= limits.MAX_JSON_DEPTH:", "if depth > limits.MAX_JSON_DEPTH:",
          "JSON one level deeper than MAX_JSON_DEPTH is accepted", kind="issue: off-by-one at a limit"),
    Fault("io-size", SIO, SAFEIO, "if info.st_size > limit:", "if info.st_size >= limit:",
          "a file of exactly the size limit is refused", kind="issue: off-by-one at a limit"),
    # render/text.py
    Fault("txt-html-on", TXT, TEXT, '{"html": False, "highlight": _fence}', '{"html": True, "highlight": _fence}',
          "raw HTML in declared-markdown fields is kept (sanitised, but no longer shown as text)"),
    Fault("txt-emph", TXT, TEXT, "can_open = not after.isspace() and (before.isspace() or before in _OPEN_AFTER)",
          "can_open = not after.isspace()", "emphasis opens inside words: 4*24*96 loses its asterisks"),
    Fault("txt-scratch", TXT, TEXT, "(?:home|scratch|Users)", "(?:home|Users)", "/scratch/<name> in a log is no longer hidden"),
    Fault("txt-schemes", TXT, TEXT, 'url_schemes={"http", "https", "mailto"}', 'url_schemes={"http", "https", "mailto", "data"}',
          "markdown links to data: URLs are kept"),
    # render/incremental.py, plan.py, write.py, listings.py
    Fault("inc-nav-hash", INC, PLAN, "key = status.context_hash([rs.inputs, g, nav[d.run_id]])",
          "key = status.context_hash([rs.inputs, g])", "a run page keeps stale prev/next links when a neighbour is added",
          kind="issue: stale prev/next links"),
    Fault("inc-wrap", INC, PLAN, "return 0 <= j < len(digests) and", "return j < len(digests) and",
          "the first run's 'previous' link wraps round to the last run of its model"),
    Fault("inc-buildtime", INC, "reporter/render/write.py",
          'fp = fingerprint(page, [*extra[:-1], extra[-1] if page.path == "index.html" else None])', "fp = fingerprint(page, extra)",
          "every listing page is written again at each build (the build time enters every fingerprint)"),
    Fault("inc-board-key", INC, "reporter/render/listings.py", "blob = json.dumps([g, rows, repr(dataclasses.astuple(urls))]",
          "blob = json.dumps([rows, repr(dataclasses.astuple(urls))]",
          "a changed problem set (or template) keeps the previous build's leaderboards"),
    Fault("inc-path-order", INC, "reporter/render/listings.py", "key=lambda d: PurePosixPath(d.path).parts)", "key=lambda d: d.path)",
          "the runs table is ordered by path text ('a-b/' before 'a/'), not as reporter.load reads traces"),
    Fault("inc-allow-global", INC, "reporter/render/incremental.py", '"reviews": reviews, "allow": allow, "redact": redact})',
          '"reviews": reviews, "redact": redact})', "editing redact-allow.txt re-renders no page"),
    Fault("inc-retry", INC, "reporter/render/write.py", "            del runs[item[1]]", "            pass",
          "a run page that failed to render stays listed (a dead link) and in the status"),
    # validate/: recorder, worker verdicts, steps
    Fault("val-ref-sha", VAL, RECORDER, '"reference_sha256": sha256_text(run.source.reference_source)',
          '"reference_sha256": sha256_text(run.trace.reference_source)',
          "reference_sha256 hashes the published (redacted) reference, not the one executed", kind="issue: hash of the wrong input"),
    Fault("val-precision-assumed", VAL, RECORDER, '"precision_assumed": run.source.run.precision is None,',
          '"precision_assumed": run.source.run.precision is not None,', "precision_assumed is set when the trace did record one"),
    Fault("val-order", VAL, RECORDER, "buildcache.built(root, it.build_key) is None)", "buildcache.built(root, it.build_key) is not None)",
          "kernels not yet built are queued first (the GPU waits for compiles)"),
    Fault("val-skip-fail", VAL, WORKER, "    bad = next((t for t in out.trials if t.passed is False), None)\n    if bad is not None:\n        out.verdict = Verdict.INCORRECT\n",
          "    bad = next((t for t in out.trials if not t.passed), None)\n    if bad is not None:\n        out.verdict = Verdict.INCORRECT\n",
          "a skipped jittered trial (the reference cannot run those shapes) makes the kernel incorrect"),
    Fault("val-mutated", VAL, WORKER, "if mutated and ok:", "if mutated and not ok:", "a kernel that writes into its inputs passes"),
    Fault("val-recheck-first", VAL, WORKER, "out.recheck = _recheck(ref, new, sets[-1], device, atol, rtol)",
          "out.recheck = _recheck(ref, new, sets[0], device, atol, rtol)",
          "the re-check after timing runs on the first trial's inputs, which a stale cached output still matches"),
    Fault("val-build-arch", VAL, "reporter/validate/steps.py", 'for k in (*BUILD_VARS, "TORCH_CUDA_ARCH_LIST")}', "for k in BUILD_VARS}",
          "the check does not repeat the build's TORCH_CUDA_ARCH_LIST (torch rebuilds the kernel at check time)"),
]


def check_faults(tree: Path) -> list[str]:
    """Problems with the list: a fault whose text is not found exactly once, or that does not compile."""
    problems = []
    ids = Counter(f.id for f in FAULTS)
    problems += [f"{i}: id used {n} times" for i, n in ids.items() if n > 1]
    for f in FAULTS:
        text = (tree / f.file).read_text(encoding="utf-8")
        if text.count(f.old) != 1:
            problems.append(f"{f.id}: {f.file} holds its text {text.count(f.old)} times")
            continue
        if f.file.endswith(".py"):
            try:
                compile(text.replace(f.old, f.new), f.file, "exec")
            except SyntaxError as exc:
                problems.append(f"{f.id}: the fault does not compile: {exc}")
    return problems


def scratch_copy() -> Path:
    """The tracked and untracked (not ignored) files of this checkout, copied to a scratch folder."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True,
                           check=True).stdout.decode().split("\0")
    dest = Path(tempfile.mkdtemp(prefix="planted-faults-")) / "tree"
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _first_failure(output: str) -> str:
    m = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    if m:
        return m.group(1)
    m = re.search(r"^E\s+(.{0,100})", output, re.M)
    return f"(error: {m.group(1)})" if m else "(failed)"


def run_tests(tree: Path, tests: tuple[str, ...], workers: int, timeout: float) -> tuple[bool, str, float]:
    """(killed, the test that failed first, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    basetemp = tree.parent / "pytest-tmp"
    shutil.rmtree(basetemp, ignore_errors=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", f"--basetemp={basetemp}", *tests]
    if workers:
        cmd += ["-n", str(workers)]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return True, f"(timed out after {timeout:.0f} s)", time.monotonic() - t0
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    seconds = time.monotonic() - t0
    if proc.returncode == 0:
        return False, "", seconds
    if proc.returncode in (4, 5):  # usage error, nothing collected: the list is wrong, not the fault caught
        raise SystemExit(f"pytest could not run {tests}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return True, _first_failure(proc.stdout + proc.stderr), seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated fault ids")
    ap.add_argument("--area", help="only the faults of this area")
    ap.add_argument("--check", action="store_true", help="only check that every fault applies and compiles")
    ap.add_argument("--list", action="store_true", help="print the faults and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run of every named test file without a fault")
    ap.add_argument("--workers", type=int, default=0, help="pytest-xdist workers per run (default: none)")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per fault")
    args = ap.parse_args()
    problems = check_faults(ROOT)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    faults = [f for f in FAULTS if (not args.only or f.id in args.only.split(",")) and (not args.area or f.area == args.area)]
    if args.list:
        for f in faults:
            print(f"{f.id:24} {f.area:14} {f.file:34} {f.what}")
        return 0
    if args.check:
        print(f"{len(FAULTS)} faults, each found once and compiling; {sum(f.kind == 'new' for f in FAULTS)} of new kinds")
        return 0
    tree = scratch_copy()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True).stdout.strip()
    print(f"# planted faults · commit {head}{' (+ uncommitted changes)' if dirty else ''} · {len(faults)} faults · "
          f"pytest -x per fault{f' -n {args.workers}' if args.workers else ''} · load average {os.getloadavg()[0]:.1f}")
    try:
        if not args.no_baseline:
            every = tuple(sorted({t for f in faults for t in f.tests}))
            broken, first, secs = run_tests(tree, every, args.workers, args.timeout * 2)
            print(f"# baseline (no fault): {len(every)} test files {'FAIL at ' + first if broken else 'pass'} in {secs:.0f} s")
            if broken:
                return 2
        rows = []
        print(f"\n{'fault':24} {'area':14} {'result':9} {'s':>5}  {'killed by / what it does'}")
        for f in faults:
            path = tree / f.file
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(f.old, f.new), encoding="utf-8")
            try:
                killed, by, secs = run_tests(tree, f.tests, args.workers, args.timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            rows.append((f, killed))
            shown = by if killed else f"{f.what}" + (f" [equivalent: {f.equivalent}]" if f.equivalent else "")
            print(f"{f.id:24} {f.area:14} {'killed' if killed else 'SURVIVED':9} {secs:5.0f}  {shown}", flush=True)
    finally:
        shutil.rmtree(tree.parent, ignore_errors=True)
    print(f"\n{'area':14} {'killed':>7} {'total':>6}")
    for area in AREA_TESTS:
        got = [k for f, k in rows if f.area == area]
        if got:
            print(f"{area:14} {sum(got):7} {len(got):6}")
    killed = sum(k for _, k in rows)
    new = [k for f, k in rows if f.kind == "new"]
    score = killed / len(rows) if rows else 0.0
    print(f"{'all':14} {killed:7} {len(rows):6}   {score:.1%} killed (target {TARGET:.0%}); new kinds: {sum(new)}/{len(new)} killed")
    survivors = [f for f, k in rows if not k]
    if survivors:
        print("\nsurvivors:")
        for f in survivors:
            print(f"  {f.id}: {f.what}" + (f" (equivalent: {f.equivalent})" if f.equivalent else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
