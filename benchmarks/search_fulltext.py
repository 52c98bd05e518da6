"""The full-text search benchmark of record (issue 37): the Pagefind index `reporter build` makes of every transcript.

    python benchmarks/search_fulltext.py [--runs 1000 10000] [--corpus /tmp/sft/corpus] [--repeats 3]
                                         [--cold-cpu-limit 2400] [--fallback-runs 3000]

For each corpus size (`make_corpus.py --unique` through build_speed.py's `corpus`: seed-sized runs with their own
reworded reasoning, fenced code and renamed identifiers) it measures, on this machine:

- a cold `reporter build`: CPU seconds summed over every process of it (the build, its workers and Pagefind's
  binary), and of that the index step: the binary's CPU (`RUSAGE_CHILDREN` of the build process around
  `fulltext.run_binary`, recorded by a wrapper this script installs in the build process, `--driver`; no other
  child of the build is alive then, which is checked and printed) and the Python around it (hashing the
  documents, linking them into a folder, moving the output in);
- the index: bytes and files under SITE/pagefind/ by kind (Pagefind's WASM and JS, the entry, the meta, the
  word-index chunks, the fragments, one per run, the filter chunks), and the search documents it was made from;
- the search page in headless Chromium (Debian's /usr/bin/chromium through Playwright), the site served by a
  local http server in a thread: for each query (`QUERIES`), in a fresh browser context (empty cache) the page is
  opened and, once the index is ready (the input enabled), the query is typed; the bytes of every response under
  /pagefind/ from that keystroke to the first result rendered (or the '0 runs' line), and the time to it (in the
  page, from the input event; the page's own 150 ms debounce is part of it); the page load's own /pagefind/
  bytes (the API, WASM, entry, meta and the filter chunks the page loads for its filter menus) are shown apart;
- a rebuild with nothing changed (the index must be kept: no Pagefind run, the same files) and one with one
  trace's reasoning edited (build_speed.py's `change_one`): every document is indexed again, and what that
  costs in CPU seconds, against the rebuild's total and the cold build's.

A cold build of more than 1,000 runs is given `--cold-cpu-limit` CPU seconds (2,400 = 40 CPU minutes); past it,
it is stopped, the report says how far it got, and `--fallback-runs` runs (0: none) are measured instead.
Corpora are kept under --corpus for the next run (10,000 runs are about 4 GB): delete them when done.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.build_speed import BUILD_ENV, change_one, corpus, descendants, proc_stats  # the build benchmark's corpora and edit

CHROMIUM = "/usr/bin/chromium"
# Five queries whose words are in the corpus, from every run to one run, and one that matches nothing. make_corpus
# draws the reasoning's words uniformly from the seeds' vocabulary, so any seed word is in nearly every run; a
# model's name is in its runs' titles only (1 of 6 models; a problem's name is in no document, whose title says
# "problem N"); a renamed identifier is in one run's code (`_r<run>v<k>`).
# `{ident}` and `{dotted}` are filled in with identifiers of one run of the corpus (`one_run_identifiers`); Pagefind
# splits words at whitespace only, so the dotted one is a part of the word "torch.utils.cpp_extension_r<run>v<k>".
QUERIES = ("warp", "coalesced occupancy", "shared memory bank conflicts", "Gemini", "{ident}", "{dotted}", "qzxwvjk")
NO_MATCH = "qzxwvjk"


# ---------------------------------------------------------------------------------------------------------------------
# The build process, run by this script with --driver: the reporter CLI with `fulltext.run_binary` timed.

def _rusage_cpu(who: int) -> float:
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def _live_children() -> int:
    """How many processes are below this one (from /proc): a worker still alive would count."""
    return len(descendants(os.getpid(), proc_stats())) - 1


def driver(log: Path, argv: list[str]) -> None:
    import atexit

    from reporter.cli import run
    from reporter.render import fulltext, write

    run_binary, whole = fulltext.run_binary, write._fulltext
    # summed over the shards indexed (main since b8d1bc4 indexes each shard of ~128 runs apart)
    record: dict[str, Any] = {"pagefind_runs": 0, "pagefind_cpu_s": 0.0, "pagefind_wall_s": 0.0, "docs": 0, "docs_bytes": 0,
                              "other_children_alive": 0, "fulltext_self_cpu_s": 0.0}
    atexit.register(lambda: log.write_text(json.dumps(record), encoding="utf-8"))

    def timed_run_binary(exe: Path, docs: Path, out: Path, scratch: Path) -> None:
        record["other_children_alive"] = max(record["other_children_alive"], _live_children())
        c0, t0 = _rusage_cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
        try:
            run_binary(exe, docs, out, scratch)
        finally:
            record["pagefind_runs"] += 1
            record["pagefind_cpu_s"] += _rusage_cpu(resource.RUSAGE_CHILDREN) - c0
            record["pagefind_wall_s"] += time.perf_counter() - t0
            record["children_maxrss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            record["docs"] += sum(1 for _ in docs.rglob("*.html"))
            record["docs_bytes"] += sum(p.stat().st_size for p in docs.rglob("*.html"))

    def timed_fulltext(*args: Any, **kwargs: Any) -> None:
        c0 = _rusage_cpu(resource.RUSAGE_SELF)
        try:
            whole(*args, **kwargs)
        finally:
            record["fulltext_self_cpu_s"] += _rusage_cpu(resource.RUSAGE_SELF) - c0

    fulltext.run_binary = timed_run_binary
    write._fulltext = timed_fulltext
    sys.argv = ["reporter", *argv]
    run()


# ---------------------------------------------------------------------------------------------------------------------
# Builds

@dataclass
class Build:
    cpu_s: float
    wall_s: float
    index: dict[str, Any]  # the driver's record: no "pagefind_cpu_s" when the index was kept (no Pagefind run)


def _children_cpu() -> float:
    return _rusage_cpu(resource.RUSAGE_CHILDREN)


def build(data: Path, site: Path, cpu_limit: float | None = None) -> Build | None:
    """`reporter build DATA SITE --no-validate` through the driver; None when it passed `cpu_limit` CPU seconds (its
    process tree's, read from /proc while it runs) and was stopped."""
    log = Path(tempfile.mkstemp(prefix="sft-index-", suffix=".json")[1])
    log.unlink()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--driver", str(log), "--", "build", str(data), str(site), "--no-validate"]
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=BUILD_ENV, cwd=ROOT, start_new_session=True)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else b""), daemon=True)
    reader.start()
    stopped = False
    while proc.poll() is None:
        time.sleep(2)
        if cpu_limit is not None and _tree_cpu(proc.pid) > cpu_limit:
            docs = sum(1 for _ in site.parent.glob(".*.tmp-*/.reporter-cache/fulltext/*.html"))
            print(f"  (at the limit: {docs:,} runs' pages and documents written; Pagefind running: {_pagefind_running(proc.pid)})",
                  flush=True)
            os.killpg(proc.pid, 9)  # the build's own process group (start_new_session): only what this script started
            stopped = True
    proc.wait()
    reader.join()
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if stopped:
        print(f"  (stopped after {wall:.0f} s wall, {cpu:.0f} CPU s: over the {cpu_limit:g} CPU s limit)", flush=True)
        return None
    if proc.returncode:
        sys.stderr.write(b"".join(out).decode(errors="replace"))
        raise SystemExit(f"{' '.join(cmd)} failed with {proc.returncode}")
    index = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else {}
    log.unlink(missing_ok=True)
    return Build(cpu, wall, index)


def _pagefind_running(root: int) -> bool:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if b"pagefind" in f.read().split(b"\0")[0] and os.getpgid(int(entry.name)) == root:
                        return True
            except OSError:
                continue
    return False


def _tree_cpu(root: int) -> float:
    """CPU seconds of `root` and its live descendants, with their reaped children's (from /proc)."""
    stats = proc_stats()
    return sum(sum(int(x) for x in stats[p][11:15]) for p in descendants(root, stats) if p in stats) / os.sysconf("SC_CLK_TCK")


KINDS = (("wasm and js", (".pagefind", ".js")), ("entry", (".json",)), ("meta", (".pf_meta",)), ("word-index chunks", (".pf_index",)),
         ("fragments", (".pf_fragment",)), ("filter chunks", (".pf_filter",)))


def index_files(site: Path) -> dict[str, tuple[int, int]]:
    """Files and bytes under SITE/pagefind/ by kind, and in all."""
    out: dict[str, tuple[int, int]] = {}
    files = [p for p in (site / "pagefind").rglob("*") if p.is_file()]
    for kind, suffixes in KINDS:
        mine = [p for p in files if p.name.endswith(suffixes)]
        out[kind] = (len(mine), sum(p.stat().st_size for p in mine))
    known = {p for p in files if any(p.name.endswith(s) for _, ss in KINDS for s in ss)}
    rest = [p for p in files if p not in known]
    if rest:
        out["other"] = (len(rest), sum(p.stat().st_size for p in rest))
    out["total"] = (len(files), sum(p.stat().st_size for p in files))
    return out


def snapshot(site: Path) -> dict[str, tuple[int, int]]:
    """Each index file's inode and mtime: a kept index keeps them (hard links from the live site)."""
    return {p.relative_to(site).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted((site / "pagefind").rglob("*"))
            if p.is_file()}


def one_run_identifiers(data: Path) -> tuple[str, str]:
    """Two renamed identifiers of one run's final kernel (make_corpus gives every run's identifiers their own suffix):
    one that stands as a word of its own (`load_inline_r633v6` in "import load_inline_r633v6"), and one that is the
    end of a dotted name (`cpp_extension_r633v6` in "torch.utils.cpp_extension_r633v6")."""
    import re
    paths = sorted(data.rglob("trace.json"))
    doc = json.loads(paths[len(paths) // 3].read_text(encoding="utf-8"))
    source = (doc.get("final_kernel") or {}).get("source") or ""
    ident = r"[a-z][a-z0-9]*_[a-z0-9_]*_r\d+v\d+"
    alone = re.findall(rf"(?<=\s)({ident})(?=[\s(])", source)
    dotted = re.findall(rf"(?<=\.)({ident})\b", source)
    if not alone or not dotted:
        raise SystemExit("no renamed identifier in the run's final kernel")
    return str(alone[0]), str(dotted[0])


def corpus_hits(site: Path, queries: list[str]) -> list[int]:
    """For each query, how many runs' search documents hold every word of it (case-insensitive substring): what the
    search should find, counted without Pagefind."""
    words = [q.lower().split() for q in queries]
    hits = [0] * len(queries)
    for path in (site / ".reporter-cache" / "fulltext").glob("*.doc"):
        text = path.read_text(encoding="utf-8").lower()
        for i, ws in enumerate(words):
            hits[i] += all(w in text for w in ws)
    return hits


# ---------------------------------------------------------------------------------------------------------------------
# The browser

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Query:
    text: str
    hits_expected: int = 0
    status: str = ""
    load_bytes: list[int] = field(default_factory=list)  # the page load's /pagefind/ bytes, before the keystroke
    load_files: list[int] = field(default_factory=list)
    first_ms: list[float] = field(default_factory=list)
    first_bytes: list[int] = field(default_factory=list)
    first_files: list[int] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    page_bytes: list[int] = field(default_factory=list)
    page_files: list[int] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)  # the runs of the first page of results (their links)


# In the page: type the query (as one input event), then resolve with the epoch milliseconds of the keystroke, of the
# first result (or the status line's count when there is none) and of the first page of results with every excerpt.
TYPE_AND_WAIT = """async (q) => {
  const box = document.getElementById('fulltext'), input = box.querySelector('input[type=search]');
  const list = box.querySelector('.ft-results'), status = box.querySelector('.ft-status');
  const now = () => performance.timeOrigin + performance.now();
  let first = null, full = null, count = null;
  const done = new Promise((resolve) => {
    const check = () => {
      const m = /^(\\d+) runs? mention/.exec(status.textContent);
      if (m) count = +m[1];
      const items = list.querySelectorAll(':scope > li').length;
      if (first === null && (items > 0 || count === 0)) first = now();
      if (first !== null && count !== null && items >= Math.min(count, 10)) { full = now(); obs.disconnect(); resolve(); }
    };
    const obs = new MutationObserver(check);
    obs.observe(box, { childList: true, subtree: true, characterData: true });
  });
  const t0 = now();
  input.value = q;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  await done;
  const runs = Array.from(list.querySelectorAll('a.ft-run')).map((a) => a.getAttribute('href'));
  return { t0: t0, first: first, full: full, status: status.textContent, runs: runs };
}"""


def browse(url: str, queries: list[Query], repeats: int) -> None:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                                                    "--disable-component-update", "--no-first-run"])
        try:
            for _ in range(repeats):
                for q in queries:
                    _one(browser, url, q)
        finally:
            browser.close()


def _one(browser: Any, url: str, q: Query) -> None:
    context = browser.new_context()  # an empty cache: every chunk is fetched
    page = context.new_page()
    seen: list[tuple[float, float, int, str]] = []  # (start, end) epoch ms, body bytes, url

    def finished(request: Any) -> None:
        if "/pagefind/" not in request.url:
            return
        timing = request.timing
        start = timing["startTime"]
        seen.append((start, start + timing["responseEnd"], request.sizes()["responseBodySize"], request.url))

    page.on("requestfinished", finished)
    page.goto(url + "search.html", wait_until="load")
    page.wait_for_function("() => { const i = document.querySelector('#fulltext input[type=search]'); return i && !i.disabled; }",
                           timeout=120_000)
    page.wait_for_load_state("networkidle")
    got = page.evaluate(TYPE_AND_WAIT, q.text)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)  # the last requestfinished events
    context.close()
    t0, first, full = got["t0"], got["first"], got["full"]
    before = [s for s in seen if s[0] < t0]
    to_first = [s for s in seen if s[0] >= t0 and s[1] <= first]
    to_full = [s for s in seen if s[0] >= t0 and s[1] <= full]
    q.status = got["status"]
    q.shown = got["runs"]
    q.load_bytes.append(sum(s[2] for s in before))
    q.load_files.append(len(before))
    q.first_ms.append(first - t0)
    q.first_bytes.append(sum(s[2] for s in to_first))
    q.first_files.append(len(to_first))
    q.page_ms.append(full - t0)
    q.page_bytes.append(sum(s[2] for s in to_full))
    q.page_files.append(len(to_full))


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


# ---------------------------------------------------------------------------------------------------------------------

def kb(n: float) -> str:
    return f"{n / 1e3:,.1f} KB" if n < 1e6 else f"{n / 1e6:,.2f} MB"


def measure(runs: int, base: Path, repeats: int, cpu_limit: float | None) -> list[str] | None:
    t = time.perf_counter()
    data = corpus(base, runs)
    lines = [f"== {runs:,} runs ==  (corpus {data.name}, made or found in {time.perf_counter() - t:.0f} s)"]
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        site = Path(tmp) / "site"
        cold = build(data, site, cpu_limit)
        if cold is None:
            return None
        load = os.getloadavg()
        ix = cold.index
        py = ix["fulltext_self_cpu_s"]  # the index step's Python: hashing the documents, linking them, moving the output
        pf = ix["pagefind_cpu_s"]
        print(f"  (cold build: {cold.wall_s:.0f} s wall, {cold.cpu_s:.1f} CPU s; Pagefind {pf:.1f} CPU s)", flush=True)
        lines += [
            f"cold build           {cold.cpu_s:9.1f} CPU s  ({cold.wall_s:.0f} s wall; load average {load[0]:.1f} / {load[1]:.1f} / "
            f"{load[2]:.1f} on {os.cpu_count()} cores when it ended)",
            f"  index step         {pf + py:9.1f} CPU s = {100 * (pf + py) / cold.cpu_s:.1f}% of the cold build: Pagefind's binary "
            f"{pf:.1f} CPU s ({100 * pf / cold.cpu_s:.1f}%; {ix['pagefind_wall_s']:.0f} s wall; {ix['pagefind_runs']} runs of it, one a shard), "
            f"Python around it {py:.1f} CPU s (hashing the documents twice, linking them into a folder, moving the output in)",
            f"  its input          {ix['docs']:,} search documents, {kb(ix['docs_bytes'])} ({kb(ix['docs_bytes'] / max(1, ix['docs']))} a run)",
            f"  other children     {ix['other_children_alive']} alive while Pagefind ran (0: its CPU is Pagefind's alone); "
            f"largest child RSS {ix['children_maxrss_mb']:.0f} MB (Pagefind's or a worker's)"]
        files = index_files(site)
        n, size = files.pop("total")
        lines.append(f"index                {kb(size):>12} in {n:,} files under SITE/pagefind/ ({kb(size / runs)} a run; "
                     f"{100 * size / max(1, ix['docs_bytes']):.1f}% of its input):")
        lines += [f"  {kind:18} {c:7,} files {kb(b):>12}" for kind, (c, b) in files.items()]
        ident, dotted = one_run_identifiers(data)
        queries = [Query(q.format(ident=ident, dotted=dotted)) for q in QUERIES]
        for q, hits in zip(queries, corpus_hits(site, [q.text for q in queries])):
            q.hits_expected = hits
        server, url = serve(site)
        try:
            load0 = os.getloadavg()
            browse(url, queries, repeats)
            load1 = os.getloadavg()
        finally:
            server.shutdown()
        lines.append(f"search page          Chromium {CHROMIUM}, fresh context (empty cache) per query, {repeats} rounds, median "
                     f"time; load average {load0[0]:.1f} -> {load1[0]:.1f} on {os.cpu_count()} cores (a loaded machine):")
        lines.append(f"  page load          {kb(statistics.median(queries[0].load_bytes + [x for q in queries[1:] for x in q.load_bytes]))} "
                     f"in {queries[0].load_files[0]} files under /pagefind/ before the first keystroke (API, worker, WASM, entry, "
                     "meta, filter chunks)")
        for q in queries:
            later = "" if q.page_bytes[0] == q.first_bytes[0] else (
                f"; first 10 shown {statistics.median(q.page_ms):.0f} ms, {kb(q.page_bytes[0])} in {q.page_files[0]} files")
            lines.append(f"  {json.dumps(q.text):32} to first result {statistics.median(q.first_ms):6.0f} ms, {kb(q.first_bytes[0]):>10} "
                         f"in {q.first_files[0]:3} files{later}; page says {json.dumps(q.status, ensure_ascii=False)} "
                         f"(documents holding every word: {q.hits_expected:,})")
            if q.text in (ident, dotted):
                owner = f"-{int(ident.rsplit('_r', 1)[1].split('v')[0]):04d}.html"
                lines.append(f"    the one run holding it (runs/...{owner}) among the first {len(q.shown)} shown: "
                             f"{any(h.endswith(owner) for h in q.shown)}")
            spread = {len(set(q.first_bytes)), len(set(q.page_bytes))}
            if spread != {1}:
                lines.append(f"    bytes differ between rounds: to first {q.first_bytes}, to 10 {q.page_bytes}")
        lines.append(f"  (times: ms from the input event, in the page, to the first result rendered; the page renders its first 10 "
                     f"results together and waits 150 ms after a keystroke before it searches; "
                     f"each round's times: {', '.join(json.dumps(q.text) + ' ' + '/'.join(f'{x:.0f}' for x in q.first_ms) for q in queries)})")
        before = snapshot(site)
        same = build(data, site)
        assert same is not None
        kept = same.index["pagefind_runs"] == 0 and snapshot(site) == before
        lines.append(f"no-change rebuild    {same.cpu_s:9.1f} CPU s: index kept (no Pagefind run, every file the same inode): {kept}; "
                     f"the index step's Python (hashing the documents to know it): {same.index['fulltext_self_cpu_s']:.1f} CPU s")
        path, text = change_one(data)
        try:
            one = build(data, site)
        finally:
            path.write_bytes(text)
        assert one is not None
        if one.index["pagefind_runs"]:
            pf1, py1 = one.index["pagefind_cpu_s"], one.index["fulltext_self_cpu_s"]
            changed = sum(1 for k, v in snapshot(site).items() if before.get(k) != v)
            lines.append(f"one-changed rebuild  {one.cpu_s:9.1f} CPU s; it indexed {one.index['docs']:,} of {runs:,} documents again "
                         f"({one.index['pagefind_runs']} Pagefind run(s)): "
                         f"{pf1 + py1:.1f} CPU s ({pf1:.1f} Pagefind, {py1:.1f} Python) = {100 * (pf1 + py1) / one.cpu_s:.0f}% of "
                         f"this rebuild, {100 * (pf1 + py1) / cold.cpu_s:.1f}% of the cold build; {changed:,} of "
                         f"{len(snapshot(site)):,} index files written anew")
        else:
            lines.append(f"one-changed rebuild  {one.cpu_s:9.1f} CPU s; NO re-index: the index was kept though a document changed")
    return lines


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--driver":
        driver(Path(sys.argv[2]), sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/sft/corpus"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cold-cpu-limit", type=float, default=2400.0, help="CPU s for a cold build above 1,000 runs")
    ap.add_argument("--fallback-runs", type=int, default=3000, help="0: none")
    args = ap.parse_args()
    args.corpus.mkdir(parents=True, exist_ok=True)
    from reporter.render.fulltext import binary
    exe = binary()
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout.strip() if exe else "none"
    print(f"reporter build with Pagefind ({version}) on {os.cpu_count()} cores; corpora: make_corpus.py --unique "
          "(seed-sized runs, unique text, fenced reasoning)", flush=True)
    for runs in args.runs:
        lines = measure(runs, args.corpus, args.repeats, args.cold_cpu_limit if runs > 1000 else None)
        if lines is None:
            print(f"{runs:,} runs: the cold build passed {args.cold_cpu_limit:g} CPU s and was stopped", flush=True)
            if args.fallback_runs:
                print(f"measuring {args.fallback_runs:,} runs instead", flush=True)
                lines = measure(args.fallback_runs, args.corpus, args.repeats, None)
        print("\n".join(lines or []), flush=True)


if __name__ == "__main__":
    main()
