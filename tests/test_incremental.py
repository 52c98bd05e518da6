"""Streaming, parallel, incremental builds: what a rebuild re-renders, what it keeps, and what it never touches."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import DATA, small_copy, validation_entry, write_trace
from reporter.collect import find_traces
from reporter.core import sitefiles
from reporter.render import fulltext, highlight, lazy
from reporter.render.incremental import build_incremental
from test_render import hostile_trace, parse

RUN = "seed-000-l2-p10"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return small_copy(tmp_path / "data")  # three runs of data/: the rules, not the volume


def page(site: Path, run: str = RUN) -> Path:
    return site / "runs" / f"{run}.html"


def test_rebuild_with_nothing_changed_renders_nothing(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = build_incremental(data, site, jobs=1)
    assert first.rendered == len(find_traces(data)) == 3 and not first.up_to_date  # every run
    before = page(site).stat().st_ino
    again = build_incremental(data, site, jobs=1)
    assert again.up_to_date and again.rendered == 0
    assert page(site).stat().st_ino == before
    assert json.loads((site / sitefiles.STATUS_FILE).read_text())["runs"][RUN]["digest"]["run_id"] == RUN


def test_one_changed_trace_re_renders_only_its_page_and_never_writes_through(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    kept, changed = page(site, "seed-003-l2-p8"), page(site)
    kept_text, changed_text = kept.read_text(), changed.read_text()
    live_copy = tmp_path / "held-open.html"
    os.link(changed, live_copy)  # what a reader of the old site holds: it must never change under them
    trace = data / RUN / "trace.json"
    doc = json.loads(trace.read_text())
    doc["run"]["source_note"] = "edited after the first build"
    trace.write_text(json.dumps(doc))
    report = build_incremental(data, site, jobs=1)
    assert report.rendered == 1
    assert "edited after the first build" in changed.read_text()
    assert kept.read_text() == kept_text
    assert live_copy.read_text() == changed_text


def test_new_validation_result_and_changed_template_rebuild(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    src = validation_entry(data, RUN)
    shutil.copy(src, src.parent / "000000000000.json")  # another machine's result for the same kernel
    assert build_incremental(data, site, jobs=1).rendered == 1
    templates = tmp_path / "templates"
    shutil.copytree(Path(__file__).resolve().parent.parent / "templates", templates)
    part = templates / "run" / "_evolution.html"  # a partial of run.html: a change there is a change of every run page
    part.write_text(part.read_text().replace("Kernel evolution", "Kernel history"))
    from reporter.render import incremental, writer
    real = incremental.asset_dir
    for module in (incremental, writer):
        monkeypatch.setattr(module, "asset_dir", lambda name: templates if name == "templates" else real(name))
    # the templates are compiled once per process and folder (writer.template_env): another folder, other templates
    assert build_incremental(data, site, jobs=1).rendered == len(find_traces(data))
    assert "Kernel history" in page(site).read_text()


def test_parallel_and_serial_builds_write_the_same_files(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a, b = tmp_path / "a", tmp_path / "b"
    build_incremental(data, a, jobs=1)
    build_incremental(data, b, jobs=2)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name not in sitefiles.STATE
                   and not fulltext.unstable(p.relative_to(a).as_posix()))  # Pagefind's filter chunks are in hash-map order
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name not in sitefiles.STATE
                           and not fulltext.unstable(p.relative_to(b).as_posix()))
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_removed_run_disappears(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    shutil.rmtree(data / "seed-001-partial")
    build_incremental(data, site, jobs=1)
    assert not list((site / "runs").glob("seed-001-partial*"))


def test_run_page_is_light_and_turns_are_in_the_chunk(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    trace = json.loads((data / RUN / "trace.json").read_text())
    longest = max((t["reasoning"] for t in trace["turns"]), key=len)
    html = page(site).read_text()
    assert longest[:200] not in html
    chunk = (site / "runs" / f"{RUN}.turns.js").read_text()
    payload = json.loads(chunk[chunk.index("(") + 1: chunk.rindex(")")])
    assert len(payload["turns"]) == len(trace["turns"])
    sent = [c["arguments"]["kernel_code"] for t in trace["turns"] for c in t["calls"] if "kernel_code" in c["arguments"]]
    assert payload["versions"] == list(dict.fromkeys(sent))
    assert f'data-chunk="{RUN}.turns.js"' in html
    # the chunk is the text's only copy on the site (issue 22: no duplicate text chunk)
    assert not list((site / "runs").glob("*.turns.txt"))


def test_hostile_text_in_chunks_is_escaped(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "xss", hostile_trace())
    build_incremental(data, tmp_path / "site", jobs=1)
    chunk = (tmp_path / "site" / "runs" / "xss.turns.js").read_text()
    payload = json.loads(chunk[chunk.index("(") + 1: chunk.rindex(")")])
    for fragment in payload["turns"]:
        tmp = tmp_path / "fragment.html"
        tmp.write_text(fragment)
        parsed = parse(tmp)
        assert not parsed.handlers and not parsed.scripts
        assert not parsed.tags & {"img", "svg", "iframe", "object", "script"}, parsed.tags


def test_highlighter_escapes_and_marks_tokens() -> None:
    html = highlight.highlight_python('def f(x):\n    return "</pre><script>alert(1)</script>"  # <b>\n')
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert '<span class="k">def</span> <span class="nf">f</span>' in html
    assert '<span class="c1"># &lt;b&gt;</span>' in html


def test_kernel_names_found_for_search() -> None:
    src = 'cuda = r"""\n__global__ void scale_kernel(float* x) {}\ntemplate <int N>\n__global__ void __launch_bounds__(256) tile_kernel(float* y) {}\n"""'
    assert lazy.kernel_names(src) == ["scale_kernel", "tile_kernel"]


def test_problem_page_links_each_final_kernel(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    problem = next((site / "problems").glob("l2-p10*.html")).read_text()
    assert f"runs/{RUN}.kernel.py" in problem and "no kernel submitted" not in problem


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_an_up_to_date_build_imports_no_table_library(tmp_path: Path) -> None:
    # What an up-to-date rebuild costs is mostly what it imports: pandas alone was a fifth of it at 1,000 runs.
    # (jinja2 and pygments still come in through the run-page modules the digests share; not yet split.)
    import subprocess
    import sys
    data, site = tmp_path / "data", tmp_path / "site"
    for name in ("seed-003-l2-p8", "validation"):
        shutil.copytree(DATA / name, data / name)
    code = ("import sys\nfrom reporter.cli import main\n"
            f"try:\n    main(['build', {str(data)!r}, {str(site)!r}, '--no-validate'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'plotly') if m in sys.modules))")
    # a fixed build time (the index shows it): two builds either side of a minute's turn are otherwise not up to date
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    first, again = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
                    for _ in "12")
    assert first.stdout.strip().splitlines()[-1] == "['numpy', 'pandas']"  # a build that renders
    assert "up to date" in again.stdout + again.stderr
    assert again.stdout.strip().splitlines()[-1] == "[]"


# Issue 32's survivors: rebuilds that kept what changed ------------------------------------------------

def _cli_build(data: Path, site: Path) -> None:
    from click.testing import CliRunner

    from reporter.cli import main
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert res.exit_code in (0, 1), res.output


def _rows(site: Path) -> dict[str, dict[str, str]]:
    import csv
    with open(site / "runs.csv", encoding="utf-8", newline="") as fh:
        return {r["run_id"]: r for r in csv.DictReader(fh)}


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_rebuilds_notice_a_same_size_edit_a_new_clearance_and_a_moved_slug(tmp_path: Path) -> None:
    """Three rebuilds of one site (four builds, not six: each costs ~3 s of fixed work):
    1. a same-size edit of a trace (a new time) is read: size and time short-cut the hash, never replace it;
    2. a clearance added to reviews.toml clears the suspect run (kept digests held the old mark);
    3. a second run named like the first ("a b", then "a-b") moves the first one's slug, and its digest, which
       names its page, moves with it (kept, the two runs would share one page file)."""
    from conftest import minimal_trace
    from reporter.core.records import sha256_text
    data, site = tmp_path / "data", tmp_path / "site"
    kernel = "import threading\nthreading.Thread(target=print)\n"
    doc = minimal_trace(model="model-a")
    doc["final_kernel"], doc["reference_source"] = {"source": kernel}, "class Model: pass\n"
    trace = write_trace(data, "a b", doc)
    _cli_build(data, site)
    assert _rows(site)["a b"]["suspect"] == "True"
    before = trace.stat()
    trace.write_text(trace.read_text().replace("model-a", "model-b"))
    os.utime(trace, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert trace.stat().st_size == before.st_size
    _cli_build(data, site)
    assert _rows(site)["a b"]["model"] == "model-b"
    (data / "reviews.toml").write_text(f'[[cleared]]\nrun = "a b"\nkernel_sha256 = "{sha256_text(kernel)}"\nreviewer = "ada"\n'
                                       'note = "a thread on purpose"\n', encoding="utf-8")
    _cli_build(data, site)
    assert _rows(site)["a b"]["suspect"] == "False"
    write_trace(data, "a-b", minimal_trace(model="second"))
    _cli_build(data, site)
    runs = json.loads((site / ".reporter-status.json").read_text())["runs"]
    slugs = {rid: r["digest"]["slug"] for rid, r in runs.items()}
    assert len(set(slugs.values())) == 2, slugs
    for rid, slug in slugs.items():
        assert ("model-b" if rid == "a b" else "second") in (site / "runs" / f"{slug}.html").read_text()
