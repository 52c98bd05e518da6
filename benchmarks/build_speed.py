"""The build-speed benchmark of record: `reporter build` on corpora of seed-sized runs with unique text.

    python benchmarks/build_speed.py [--runs 100 1000 10000] [--corpus DIR] [--mkdocs-venv /tmp/mkdocs-venv]
                                     [--mkdocs-max 1000] [--profile-runs 100]

For each corpus size it measures, in one run on this machine: the I/O floor (read every input file and
write the same bytes), a cold build, a rebuild with nothing changed, a rebuild with one trace changed,
the peak RSS of the whole build (the parent plus every worker process, sampled from /proc), the mean
run-page bytes (the page plus its lazily loaded chunks) against the visible text of its expanded form,
and `mkdocs build` on the same content (one markdown page per run: reasoning as text, code as fenced
blocks; MkDocs lives in its own venv). It prints each figure with its target and, for a missed target,
by how much, then a profile of a serial build (where the time goes).

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

# The targets of issue 15, on 2 cores.
COLD_OVER_FLOOR = 10.0
NO_CHANGE_OF_COLD = 0.03
ONE_CHANGED_OF_COLD = 0.05
PEAK_RSS_MB = 400.0
PAGE_OVER_TEXT = 1.5
OVER_MKDOCS = 10.0


@dataclass
class Figures:
    runs: int
    floor_s: float = 0.0
    floor_cpu_s: float = 0.0
    cold_s: float = 0.0
    no_change_s: float = 0.0
    one_changed_s: float = 0.0
    cpu_s: tuple[float, float, float] = (0.0, 0.0, 0.0)  # cold, no change, one changed
    load: float = 0.0  # 1-minute load average when the cold build ended (other work on this machine)
    peak_rss_mb: float = 0.0  # sum over the build's processes
    peak_pss_mb: float = 0.0
    page_bytes: float = 0.0
    page_over_text: float = 0.0
    mkdocs_s: float | None = None
    mkdocs_cpu_s: float = 0.0
    notes: list[str] = field(default_factory=list)


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except OSError:
        return 0


def _tree_rss_kb(root: int) -> tuple[int, int]:
    """Resident memory of `root` and all its descendants, from /proc: the sum of RSS (which counts a page
    shared by forked workers once per worker) and the sum of PSS (which splits it between them)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
            fields = stat[stat.rfind(")") + 2:].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError, IndexError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parents.items() if pp == p and c not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return sum(rss.get(p, 0) for p in tree), sum(_pss_kb(p) for p in tree)


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
    data = base / f"u{runs}"
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


def page_figures(site: Path, sample: int = 20) -> tuple[float, float]:
    """Mean bytes of a run page with its lazy chunks, and that over its expanded visible text."""
    pages = sorted((site / "runs").glob("*.html"))
    step = max(1, len(pages) // sample)
    sizes, ratios = [], []
    for page in pages[::step][:sample]:
        chunks = sorted(page.parent.glob(page.stem + ".*.js")) + sorted((page.parent / page.stem).glob("*.js"))
        files = [page, *chunks]
        size = sum(p.stat().st_size for p in files)
        sizes.append(size)
        ratios.append(size / max(1, expanded_text_bytes(page, chunks)))
    return sum(sizes) / len(sizes), sum(ratios) / len(ratios)


def mkdocs_time(data: Path, venv: Path, scratch: Path) -> tuple[float, float]:
    project = scratch / "mkdocs"
    docs = project / "docs"
    (docs / "runs").mkdir(parents=True)
    names = []
    for path in sorted(data.rglob("trace.json")):
        name = path.parent.relative_to(data).as_posix().replace("/", "--")
        (docs / "runs" / f"{name}.md").write_text(to_markdown(json.loads(path.read_text(encoding="utf-8")), name), encoding="utf-8")
        names.append(name)
    (docs / "index.md").write_text("# Runs\n\n" + "".join(f"- [{n}](runs/{n}.md)\n" for n in names), encoding="utf-8")
    (project / "mkdocs.yml").write_text("site_name: runs\n", encoding="utf-8")
    wall, cpu, _ = timed([str(venv / "bin" / "mkdocs"), "build", "-q", "-f", str(project / "mkdocs.yml"), "-d", str(project / "site")])
    return wall, cpu


def measure(runs: int, base: Path, venv: Path | None, mkdocs_max: int) -> Figures:
    data = corpus(base, runs)
    fig = Figures(runs)
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        scratch = Path(tmp)
        fig.floor_s, fig.floor_cpu_s = io_floor(data, scratch / "floor")
        shutil.rmtree(scratch / "floor")
        site = scratch / "site"
        fig.cold_s, c1, rss1 = timed(build_cmd(data, site))
        fig.load = os.getloadavg()[0]
        fig.page_bytes, fig.page_over_text = page_figures(site)
        fig.no_change_s, c2, rss2 = timed(build_cmd(data, site))
        path, before = change_one(data)
        try:
            fig.one_changed_s, c3, rss3 = timed(build_cmd(data, site))
        finally:
            path.write_bytes(before)
        fig.cpu_s = (c1, c2, c3)
        fig.peak_rss_mb = max(rss1[0], rss2[0], rss3[0])
        fig.peak_pss_mb = max(rss1[1], rss2[1], rss3[1])
        if venv is not None and runs <= mkdocs_max:
            fig.mkdocs_s, fig.mkdocs_cpu_s = mkdocs_time(data, venv, scratch)
        elif venv is not None:
            fig.notes.append(f"MkDocs not run above {mkdocs_max} runs (its default nav puts every page on every page)")
    return fig


def verdict(value: float, target: float, higher_is_better: bool = False) -> str:
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return "meets target"
    miss = target / value if higher_is_better else value / target
    return f"MISSES target by {miss:.1f}x"


def report(f: Figures) -> list[str]:
    lines = [f"== {f.runs} runs ==  (load average {f.load:.1f} on {os.cpu_count()} cores; CPU s of all build processes: "
             f"cold {f.cpu_s[0]:.1f}, no change {f.cpu_s[1]:.1f}, one changed {f.cpu_s[2]:.1f})",
             f"I/O floor            {f.floor_s:8.2f} s   ({f.floor_cpu_s:.2f} s CPU)",
             f"cold build           {f.cold_s:8.2f} s   {f.cold_s / f.floor_s:6.1f}x the floor (target <= {COLD_OVER_FLOOR:g}x): "
             f"{verdict(f.cold_s / f.floor_s, COLD_OVER_FLOOR)}",
             f"no-change rebuild    {f.no_change_s:8.2f} s   {100 * f.no_change_s / f.cold_s:6.1f}% of cold (target <= "
             f"{100 * NO_CHANGE_OF_COLD:g}%): {verdict(f.no_change_s / f.cold_s, NO_CHANGE_OF_COLD)}",
             f"one run changed      {f.one_changed_s:8.2f} s   {100 * f.one_changed_s / f.cold_s:6.1f}% of cold (target <= "
             f"{100 * ONE_CHANGED_OF_COLD:g}%): {verdict(f.one_changed_s / f.cold_s, ONE_CHANGED_OF_COLD)}",
             f"peak memory          {f.peak_pss_mb:8.0f} MB PSS summed over the build's processes ({f.peak_rss_mb:.0f} MB summed RSS, "
             f"which counts pages forked workers share once per worker)" + (
                 f"  (target <= {PEAK_RSS_MB:g} MB at 10,000 runs): {verdict(f.peak_pss_mb, PEAK_RSS_MB)}" if f.runs >= 10_000 else ""),
             f"run page + chunks    {f.page_bytes / 1e3:8.0f} KB   {f.page_over_text:6.2f}x its expanded visible text "
             f"(target <= {PAGE_OVER_TEXT:g}x): {verdict(f.page_over_text, PAGE_OVER_TEXT)}"]
    if f.mkdocs_s is not None:
        lines.append(f"mkdocs build         {f.mkdocs_s:8.2f} s   reporter is {f.mkdocs_s / f.cold_s:6.1f}x faster "
                     f"(target >= {OVER_MKDOCS:g}x): {verdict(f.mkdocs_s / f.cold_s, OVER_MKDOCS, True)}; in CPU seconds "
                     f"{f.mkdocs_cpu_s:.1f} against {f.cpu_s[0]:.1f}: {f.mkdocs_cpu_s / max(f.cpu_s[0], 1e-9):.1f}x")
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
    ap.add_argument("--runs", type=int, nargs="+", default=[100, 1000, 10_000])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "speed-corpus")
    ap.add_argument("--mkdocs-venv", type=Path, default=Path("/tmp/mkdocs-venv"))
    ap.add_argument("--mkdocs-max", type=int, default=1000)
    ap.add_argument("--profile-runs", type=int, default=100, help="0: no profile")
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
