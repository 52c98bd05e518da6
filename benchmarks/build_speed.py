"""The build-speed benchmark of record: `reporter build` on corpora of seed-sized runs with unique text.

    python benchmarks/build_speed.py [--runs 1000 10000] [--corpus DIR] [--mkdocs-venv /tmp/mkdocs-venv]
                                     [--mkdocs-max 1000] [--profile-runs 0]

For each corpus size it measures, in one run on this machine: the I/O floor (read every input file and
write the same bytes), a cold build, and rebuilds with nothing changed, one trace's reasoning edited, the
edit undone, one run added and that run deleted: CPU seconds summed over every build process (the
load-independent figure; wall time is printed too), peak PSS summed over the build's process tree
(sampled from /proc), and the load average. After the undone edit and after the deletion the data are the
cold build's again, so the site must equal the cold build byte for byte (the build's own state files
aside); it says so. Then the run-page bytes against its expanded visible text, the whole site's bytes
per run, and `mkdocs build` on the same content (one markdown page per run, the nav grouped by model;
MkDocs lives in its own venv). Each figure is printed with issue 36's target and, for a missed target,
by how much; `--profile-runs N` adds a profile of a serial build of N runs.

Corpora are made by `make_corpus.py --unique` under --corpus (outside any git worktree) and kept for
the next run; delete them when done (10,000 runs are about 4 GB).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.page_text import expanded_text_bytes, to_markdown
from reporter.core.hosts import SiteSize, over_limits
from reporter.core.sitefiles import published_size


def published(site: Path) -> SiteSize:
    """What `reporter publish` would commit from the built `site` (its caches and state left out)."""
    size = published_size(site)
    if size is None:
        raise SystemExit(f"{site} is not a finished reporter build")
    return size


# The targets of issue 36 (issue 22's before it), on 2 cores; rebuild shares are of the cold build's CPU seconds (wall time
# depends on what else runs on the machine).
COLD_CPU_S_AT_1000 = 15.0
COLD_CPU_S_AT_10000 = 150.0
COLD_OVER_FLOOR = 10.0
NO_CHANGE_OF_COLD = 0.02
ONE_CHANGED_OF_COLD = 0.03  # one run changed, added or deleted
PEAK_PSS_MB = 400.0  # at 10,000 runs
SITE_OVER_TEXT = 1.2  # the whole site's bytes per run over a run's visible text
OVER_MKDOCS = 10.0
REBUILDS = ("no change", "one changed", "changed back", "one added", "one deleted")


@dataclass
class Figures:
    runs: int
    floor_s: float = 0.0
    floor_cpu_s: float = 0.0
    cold_s: float = 0.0
    cold_cpu_s: float = 0.0
    rebuilds: dict[str, tuple[float, float]] = field(default_factory=dict)  # name -> (wall s, CPU s)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)  # load averages when the cold build ended (other work here)
    peak_rss_mb: float = 0.0  # sum over the build's processes
    peak_pss_mb: float = 0.0
    page_bytes: float = 0.0
    page_over_text: float = 0.0
    site_bytes: int = 0  # what `reporter publish` commits (the build's own state and caches left out)
    site_files: int = 0
    hosts: tuple[str, ...] = ()  # the static hosts whose limits the site passes
    fenced: float = 0.0  # share of the corpus's reasoning characters in fenced blocks, by the site's own fence rule
    site_over_text: float = 0.0
    same_as_cold: list[str] = field(default_factory=list)  # what each byte-for-byte check found
    mkdocs_s: float | None = None
    mkdocs_cpu_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def proc_stats() -> dict[int, list[str]]:
    """Every process's /proc/PID/stat fields after its command name (field 1 is its parent, 11-14 its CPU ticks
    with its reaped children's, 21 its RSS in pages)."""
    out: dict[int, list[str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
            out[int(entry.name)] = stat[stat.rfind(")") + 2:].split()
        except OSError:
            continue
    return out


def descendants(root: int, stats: dict[int, list[str]]) -> set[int]:
    """`root` and every process below it in `stats`."""
    parents = {pid: int(fields[1]) for pid, fields in stats.items() if len(fields) > 1}
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return tree


def _tree_rss_kb(root: int) -> tuple[int, int]:
    """Resident memory of `root` and all its descendants, from /proc: the sum of RSS (which counts a page
    shared by forked workers once per worker) and the sum of PSS (which splits it between them)."""
    stats = proc_stats()
    tree = descendants(root, stats)
    rss = {p: int(stats[p][21]) * os.sysconf("SC_PAGE_SIZE") // 1024 for p in tree if p in stats and len(stats[p]) > 21}
    return sum(rss.values()), sum(_pss_kb(p) for p in tree)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, tuple[float, float]]:
    """Wall seconds, CPU seconds (all processes) and peak tree (RSS, PSS) in MB of a command; output shown on failure."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    peak = [0, 0]

    def sample() -> None:
        while proc.poll() is None:
            rss, pss = _tree_rss_kb(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.join()
    if proc.returncode:
        sys.stderr.write(out.decode(errors="replace"))
        raise SystemExit(f"{' '.join(cmd)} failed with {proc.returncode}")
    return wall, _children_cpu() - cpu0, (peak[0] / 1024, peak[1] / 1024)


def _self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def io_floor(data: Path, scratch: Path) -> tuple[float, float]:
    """Read every input file and write the same bytes elsewhere, what any build must at least do: (wall, CPU) s."""
    t0, c0 = time.perf_counter(), _self_cpu()
    for path in sorted(data.rglob("*")):
        if path.is_file():
            out = scratch / path.relative_to(data)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(path.read_bytes())
    return time.perf_counter() - t0, _self_cpu() - c0


def corpus(base: Path, runs: int) -> Path:
    from benchmarks.make_corpus import FENCED_SHARE
    data = base / f"u{runs}-fenced{FENCED_SHARE:g}"  # a corpus made before the reasoning carried fences is not this one
    if not (data / ".complete").is_file():
        shutil.rmtree(data, ignore_errors=True)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "make_corpus.py"), str(data), "--runs", str(runs), "--unique"],
                       check=True, capture_output=True)
        (data / ".complete").write_text("", encoding="utf-8")
    return data


def build_cmd(data: Path, site: Path) -> list[str]:
    return [sys.executable, "-m", "reporter.cli", "build", str(data), str(site), "--no-validate"]


def change_one(data: Path) -> tuple[Path, bytes]:
    """Edit one turn of one trace (as a re-run of that sample would); returns what to restore."""
    path = sorted(data.rglob("trace.json"))[len(list(data.rglob("trace.json"))) // 2]
    before = path.read_bytes()
    doc = json.loads(before)
    doc["turns"][0]["reasoning"] = (doc["turns"][0].get("reasoning") or "") + "\n\nOne more thought, edited."
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, before


def page_figures(site: Path, runs: int, sample: int = 20) -> tuple[float, float, float]:
    """Mean bytes of a run page with its lazy chunks, that over its expanded visible text, and the whole
    site's bytes per run over the sampled runs' mean visible text."""
    pages = sorted((site / "runs").glob("*.html"))
    step = max(1, len(pages) // sample)
    sizes, ratios, texts = [], [], []
    for page in pages[::step][:sample]:
        chunks = sorted(page.parent.glob(page.stem + ".*.js")) + sorted((page.parent / page.stem).glob("*.js"))
        files = [page, *chunks]
        size = sum(p.stat().st_size for p in files)
        sizes.append(size)
        texts.append(max(1, expanded_text_bytes(page, chunks)))
        ratios.append(size / texts[-1])
    total = published(site).bytes
    return sum(sizes) / len(sizes), sum(ratios) / len(ratios), total / runs / (sum(texts) / len(texts))


def fenced_share(data: Path, sample: int = 50) -> float:
    """The share of reasoning characters in fenced blocks over a sample of the corpus's traces, by the rule
    the site itself uses to find fences (`reporter.render.text`)."""
    from reporter.render.text import _TICKS, _fence_at
    paths = sorted(data.rglob("trace.json"))
    total = fenced = 0
    for path in paths[:: max(1, len(paths) // sample)]:
        for turn in json.loads(path.read_text(encoding="utf-8")).get("turns") or []:
            text, pos = turn.get("reasoning") or "", 0
            total += len(text)
            while (m := _TICKS.search(text, pos)) is not None:
                fence = _fence_at(text, m.start(), m.group())
                if fence is None:
                    pos = m.end()
                    continue
                fenced += fence[0] - m.start()
                pos = fence[0]
    return fenced / max(1, total)


def site_files(site: Path) -> dict[str, bytes]:
    """Every page and file of a site but the build's own state (its hashes, and how many pages it wrote)."""
    skip = (".reporter-site", ".reporter-status.json", "build-info.json")
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and p.name not in skip and ".reporter-cache" not in p.parts}


def differs(site: Path, cold: dict[str, bytes]) -> str:
    # Pagefind writes its filter chunks in hash-map order, and the files naming them by hash follow: a re-indexed
    # shard is compared by its files' names up to those hashes (`fulltext.unstable`), everything else byte for byte
    from reporter.render import fulltext
    got = site_files(site)
    stable = [k for k in sorted(set(got) | set(cold)) if not fulltext.unstable(k)]
    changed = [k for k in stable if got.get(k) != cold.get(k)]
    shape = [sorted(re.sub(r"_[0-9a-f]{7,}\.", "_#.", k) for k in files if fulltext.unstable(k)) for files in (got, cold)]
    if shape[0] != shape[1]:
        changed.append("pagefind/ (its files, up to their hash names)")
    return ("byte-identical to the cold build (Pagefind's index: the same files up to their hash names)" if not changed
            else f"DIFFERS from the cold build in {len(changed)} files: {changed[:5]}")


def mkdocs_time(data: Path, venv: Path, scratch: Path) -> tuple[float, float]:
    project = scratch / "mkdocs"
    docs = project / "docs"
    (docs / "runs").mkdir(parents=True)
    by_model: dict[str, list[str]] = {}
    for path in sorted(data.rglob("trace.json")):
        name = path.parent.relative_to(data).as_posix().replace("/", "--")
        doc = json.loads(path.read_text(encoding="utf-8"))
        (docs / "runs" / f"{name}.md").write_text(to_markdown(doc, name), encoding="utf-8")
        by_model.setdefault(str(doc.get("run", {}).get("model") or "unknown"), []).append(name)
    (docs / "index.md").write_text("# Runs\n\n" + "".join(f"- [{m}](models/{i}.md)\n" for i, m in enumerate(sorted(by_model))),
                                   encoding="utf-8")
    (docs / "models").mkdir()
    nav = ["nav:", "  - Home: index.md"]
    for i, model in enumerate(sorted(by_model)):
        # A nav grouped by model: each page's sidebar lists its model's runs only, so pages stay small.
        (docs / "models" / f"{i}.md").write_text(f"# {model}\n\n" + "".join(f"- [{n}](../runs/{n}.md)\n" for n in by_model[model]),
                                                 encoding="utf-8")
        nav += [f"  - {json.dumps(model)}:", f"    - Overview: models/{i}.md", *(f"    - runs/{n}.md" for n in by_model[model])]
    (project / "mkdocs.yml").write_text("site_name: runs\n" + "\n".join(nav) + "\n", encoding="utf-8")
    wall, cpu, _ = timed([str(venv / "bin" / "mkdocs"), "build", "-q", "-f", str(project / "mkdocs.yml"), "-d", str(project / "site")])
    return wall, cpu


# A fixed build time, so a rebuild can be compared with the cold build byte for byte (the index shows it).
BUILD_ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}


def _rebuild(fig: Figures, name: str, data: Path, site: Path) -> None:
    wall, cpu, (rss, pss) = timed(build_cmd(data, site), BUILD_ENV)
    print(f"  ({name} rebuild: {wall:.1f} s wall, {cpu:.2f} CPU s, peak PSS {pss:.0f} MB)", flush=True)
    fig.rebuilds[name] = (wall, cpu)
    fig.peak_rss_mb, fig.peak_pss_mb = max(fig.peak_rss_mb, rss), max(fig.peak_pss_mb, pss)


def _rebuilds(fig: Figures, data: Path, site: Path, cold: dict[str, bytes]) -> None:
    """No change; one trace edited, then changed back; one run added, then deleted. After each return to
    the cold build's data the site must equal the cold build byte for byte."""
    _rebuild(fig, "no change", data, site)
    path, before = change_one(data)
    try:
        _rebuild(fig, "one changed", data, site)
        state = json.loads((site / ".reporter-status.json").read_text(encoding="utf-8"))
        rel = path.relative_to(data).as_posix()
        slug = next(r["digest"]["slug"] for r in state["runs"].values() if r["digest"]["path"] == rel)
        edited = site / "runs" / f"{slug}.turns.js"
        fig.notes.append(f"the edited run's chunk shows the edit: {'One more thought, edited.' in edited.read_text(encoding='utf-8')}")
    finally:
        path.write_bytes(before)
    _rebuild(fig, "changed back", data, site)
    fig.same_as_cold.append(f"after the edit was undone: {differs(site, cold)}")
    added = data / "zz-added-run"
    shutil.copytree(path.parent, added)
    try:
        _rebuild(fig, "one added", data, site)
        fig.notes.append(f"the added run has its page: {(site / 'runs' / 'zz-added-run.html').is_file()}")
    finally:
        shutil.rmtree(added)
    _rebuild(fig, "one deleted", data, site)
    gone = not any(b"zz-added-run" in blob for blob in site_files(site).values())
    fig.same_as_cold.append(f"after the added run was deleted: {differs(site, cold)}; gone from every page and the "
                            f"search index: {gone}")


def measure(runs: int, base: Path, venv: Path | None, mkdocs_max: int) -> Figures:
    data = corpus(base, runs)
    fig = Figures(runs)
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        scratch = Path(tmp)
        fig.floor_s, fig.floor_cpu_s = io_floor(data, scratch / "floor")
        shutil.rmtree(scratch / "floor")
        site = scratch / "site"
        fig.cold_s, fig.cold_cpu_s, (fig.peak_rss_mb, fig.peak_pss_mb) = timed(build_cmd(data, site), BUILD_ENV)
        fig.load = os.getloadavg()
        print(f"  (cold build: {fig.cold_s:.1f} s wall, {fig.cold_cpu_s:.2f} CPU s, peak PSS {fig.peak_pss_mb:.0f} MB, "
              f"load {fig.load[0]:.1f})", flush=True)
        fig.page_bytes, fig.page_over_text, fig.site_over_text = page_figures(site, runs)
        size = published(site)
        fig.site_bytes, fig.site_files = size.bytes, size.files
        fig.hosts = over_limits(size)
        fig.fenced = fenced_share(data)
        _rebuilds(fig, data, site, site_files(site))
        if venv is not None and runs <= mkdocs_max:
            fig.mkdocs_s, fig.mkdocs_cpu_s = mkdocs_time(data, venv, scratch)
        elif venv is not None:
            fig.notes.append(f"MkDocs not run above {mkdocs_max} runs")
    return fig


def verdict(value: float, target: float, higher_is_better: bool = False) -> str:
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return "meets target"
    miss = target / value if higher_is_better else value / target
    return f"MISSES target by {miss:.1f}x"


def report(f: Figures) -> list[str]:
    cold = f.cold_cpu_s
    lines = [f"== {f.runs} runs ==  (load average {f.load[0]:.1f} / {f.load[1]:.1f} / {f.load[2]:.1f} on {os.cpu_count()} cores "
             "when the cold build ended; CPU s are summed over every build process)",
             f"I/O floor            {f.floor_s:8.2f} s wall  {f.floor_cpu_s:7.2f} CPU s",
             f"cold build           {f.cold_s:8.2f} s wall  {cold:7.2f} CPU s" + (
                 f"  (target <= {COLD_CPU_S_AT_1000:g} CPU s at 1,000 runs): {verdict(cold, COLD_CPU_S_AT_1000)}" if f.runs == 1000 else
                 f"  (target <= {COLD_CPU_S_AT_10000:g} CPU s at 10,000 runs): {verdict(cold, COLD_CPU_S_AT_10000)}"
                 if f.runs == 10_000 else ""),
             f"fenced reasoning     {100 * f.fenced:8.1f}% of the corpus's reasoning characters in fenced code (the seeds': 17.2%)"]
    for name in REBUILDS:
        wall, cpu = f.rebuilds[name]
        target = NO_CHANGE_OF_COLD if name == "no change" else ONE_CHANGED_OF_COLD
        lines.append(f"{name + ' rebuild':20} {wall:8.2f} s wall  {cpu:7.2f} CPU s = {100 * cpu / cold:5.1f}% of cold "
                     f"(target <= {100 * target:g}%): {verdict(cpu / cold, target)}")
    lines += [f"check                {x}" for x in f.same_as_cold]
    lines += [f"peak memory          {f.peak_pss_mb:8.0f} MB PSS summed over the build's processes ({f.peak_rss_mb:.0f} MB summed RSS, "
              "which counts pages forked workers share once per worker)" + (
                  f"  (target <= {PEAK_PSS_MB:g} MB at 10,000 runs): {verdict(f.peak_pss_mb, PEAK_PSS_MB)}" if f.runs >= 10_000 else ""),
              f"run page + chunks    {f.page_bytes / 1e3:8.0f} KB   {f.page_over_text:6.2f}x its expanded visible text",
              f"site bytes per run   {f.site_bytes / f.runs / 1e3:8.0f} KB, {f.site_files / f.runs:.2f} files a run (what "
              f"reporter publish commits: {f.site_bytes / 1e6:,.1f} MB, {f.site_files:,} files)",
              *(f"host limits          {h}" for h in f.hosts or ("the site fits GitHub Pages, GitLab.com Pages and Cloudflare Pages (Free)",)),
              f"site bytes per run   {f.site_over_text:8.2f}x a run's visible text (target <= {SITE_OVER_TEXT:g}x): "
              f"{verdict(f.site_over_text, SITE_OVER_TEXT)}"]
    if f.mkdocs_s is not None:
        lines.append(f"mkdocs build         {f.mkdocs_s:8.2f} s wall  {f.mkdocs_cpu_s:7.2f} CPU s: reporter is "
                     f"{f.mkdocs_cpu_s / max(cold, 1e-9):.1f}x faster in CPU s (target >= {OVER_MKDOCS:g}x): "
                     f"{verdict(f.mkdocs_cpu_s / max(cold, 1e-9), OVER_MKDOCS, True)}")
    return lines + [f"note: {n}" for n in f.notes]


def profile(base: Path, runs: int, top: int = 25) -> list[str]:
    """Where a cold build's CPU time goes: a serial in-process build under cProfile."""
    from reporter.cli import main as cli
    data = corpus(base, runs)
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        prof = cProfile.Profile()
        os.environ["REPORTER_JOBS"] = "1"  # one process, so the profile sees the rendering too
        prof.enable()
        try:
            cli.main(["build", str(data), str(Path(tmp) / "site"), "--no-validate"], standalone_mode=False)
        finally:
            prof.disable()
            os.environ.pop("REPORTER_JOBS")
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    body = buf.getvalue().splitlines()
    start = next((i for i, line in enumerate(body) if "ncalls" in line), 0)
    return [f"== profile: serial cold build of {runs} runs, top {top} by own time ==", *body[start:]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "speed-corpus")
    ap.add_argument("--mkdocs-venv", type=Path, default=Path("/tmp/mkdocs-venv"))
    ap.add_argument("--mkdocs-max", type=int, default=1000)
    ap.add_argument("--profile-runs", type=int, default=0, help="0: no profile")
    args = ap.parse_args()
    args.corpus.mkdir(parents=True, exist_ok=True)
    venv = args.mkdocs_venv if (args.mkdocs_venv / "bin" / "mkdocs").is_file() else None
    print(f"reporter build on {os.cpu_count()} cores; corpora: make_corpus.py --unique (seed-sized runs, unique text)")
    if venv is None:
        print(f"note: no MkDocs at {args.mkdocs_venv}; make one with python -m venv {args.mkdocs_venv} && "
              f"{args.mkdocs_venv}/bin/pip install mkdocs")
    for runs in args.runs:
        for line in report(measure(runs, args.corpus, venv, args.mkdocs_max)):
            print(line, flush=True)
    if args.profile_runs:
        print("\n".join(profile(args.corpus, args.profile_runs)))


if __name__ == "__main__":
    main()
