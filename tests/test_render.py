"""The site: seed fields on run pages, hostile text rendered inert, links, golden page, safe swaps."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import pytest

import goldtest
from conftest import DATA, minimal_trace, write_trace
from reporter.collect import collect
from reporter.collect.validation import load_validations
from reporter.render import build_site
from reporter.render.site import BuildReport
from reporter.render.writer import SiteWriter


def build(data: Path, site: Path) -> BuildReport:
    col = collect(data)
    return build_site(col, load_validations(data, col.runs)[0], data, site)


@pytest.fixture
def site(rendered_site: Path) -> Path:
    return rendered_site  # build(DATA, ...), once per run (conftest); read only


class Page(HTMLParser):
    """Collects what the safety and link tests look at."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        for k, _ in attrs:
            if k.startswith("on"):
                self.handlers.append((tag, k))
        if tag == "script":
            self.scripts.append(a)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for k in ("href", "src"):
            if a.get(k):
                self.links.append(a[k] or "")


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def text_of(path: Path) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))


SEED_FIELDS = {
    "seed-000-l2-p10": ["L2 · problem 10", "Kimi-K2.6 · popcorn · l12_default_gpt", "10_GFVLA_FusedPairwiseNodeAggregate.py",
                        "10 / 10", "2026-05-02T19:26:01Z", "cuda fp32", "0.120 μs", "0.25x",
                        "0.460 μs / — / 0.0100 μs", "0.87x", "fusion ratio (ref / kernel)",
                        "2.78x", "820 μs", "66.63 GB/s", "25.7%", "279.3%", "67.99", "6,144 B",
                        "3,350.00 GB/s", "1,979.00", "3446.1%", "504.1%", "kernelbench.timing", "eval_kernel_against_ref",
                        "extended_metrics.measure_memory", "torch.profiler", "nsight_hardware_counters",
                        "reference PyTorch source", "turn 9", "FINAL", "compile_kernel FAILED: TypeError",
                        "final submitted kernel", "239 lines", "6,676 chars", "126,278 chars"],
    "seed-003-l2-p8": ["L2 · problem 8", "8_DeepSeekMoEGroundedTop2Routing.py", "3 / 10", "2.99x",
                       "0.000251 μs", "20.00x", "21.0 μs", "188.03 GB/s", "46.7%", "37.9%", "2.91",
                       "9,216 B", "1589.8%", "451.0%", "mio_throttle", "13.3%", "132,049 chars"],
}


class Echo(HTMLParser):
    """Splits a page's text into what we wrote and what is the trace's own text shown back (echoed)."""

    VOID: ClassVar[frozenset[str]] = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []  # per open element: inside an echo region?
        self.ours: list[str] = []
        self.echoed: list[str] = []
        self.pairs: list[tuple[str, str]] = []  # (<dt> text, <dd> text): a labelled value
        self.term: list[str] | None = None
        self.label = ""

    @staticmethod
    def echoes(tag: str, classes: str) -> bool:
        # Reasoning, tool arguments and results, sources, logs: the trace's text, shown verbatim.
        return tag in ("pre", "code") or bool({"reasoning", "arg", "highlight", "result-text", "plain"} & set(classes.split()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            inside = bool(self.stack and self.stack[-1])
            self.stack.append(inside or self.echoes(tag, dict(attrs).get("class") or ""))
        if tag in ("dt", "dd"):
            self.term = []

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.stack:
            self.stack.pop()
        if tag in ("dt", "dd") and self.term is not None:
            words = " ".join("".join(self.term).split())
            if tag == "dt":
                self.label = words
            else:
                self.pairs.append((self.label, words))
            self.term = None

    def handle_data(self, data: str) -> None:
        (self.echoed if self.stack and self.stack[-1] else self.ours).append(data)
        if self.term is not None:
            self.term.append(data)


def split_text(path: Path) -> Echo:
    e = Echo()
    e.feed(path.read_text(encoding="utf-8"))
    return e


def words(parts: list[str]) -> str:
    return re.sub(r"\s+", " ", " ".join(parts))


SEED_VALUES = {
    "seed-000-l2-p10": {"kernel runtime": "0.460 μs", "max abs error": "3.58e-06", "mean abs error": "3.85e-07",
                        "kernel peak": "33.89 MB", "ref peak": "38.84 MB", "SOL score (0–1)": "0.053",
                        "dominant pipe": "FP32", "regs / thread": "76", "block size": "512"},
    "seed-003-l2-p8": {"kernel runtime": "0.0200 μs", "kernel peak": "35.32 MB", "SOL score (0–1)": "0.122"},
}
# Fields that exist on the page only as the trace's own text shown back (a tool's output).
ECHOED = {"compile_kernel FAILED: TypeError"}


@pytest.mark.parametrize("run_id", sorted(SEED_FIELDS))
def test_run_page_carries_every_seed_field(site: Path, run_id: str) -> None:
    # Many of these strings also occur in the raw trace (in reasoning, in tool output), so finding them
    # anywhere on the page proves nothing: each must be in the text the page itself wrote.
    page = split_text(site / "runs" / f"{run_id}.html")
    # Tool output is echoed in the turns, which the page loads from its chunk when a turn is expanded.
    chunk = (site / "runs" / f"{run_id}.turns.js").read_text(encoding="utf-8")
    turns = Echo()
    turns.feed("".join(json.loads(chunk[chunk.index("(") + 1: chunk.rindex(")")])["turns"]))
    ours, echoed = words(page.ours), words(page.echoed + turns.echoed)
    missing = [f for f in SEED_FIELDS[run_id] if f not in (echoed if f in ECHOED else ours)]
    assert not missing
    # Recorded values that the model's own text also mentions: each must be the value of its own label.
    shown = dict(page.pairs)
    wrong = {label: shown.get(label) for label, value in SEED_VALUES[run_id].items()
             if not (shown.get(label) or "").startswith(value)}
    assert not wrong


def test_impossible_recorded_values_are_flagged_on_the_page(site: Path) -> None:
    text = text_of(site / "runs" / "seed-000-l2-p10.html")
    assert "279.3% is outside 0–100" in text
    assert "3446.1% is impossible" in text
    assert "likely in ms" in text


def test_revalidation_section(site: Path) -> None:
    text = text_of(site / "runs" / "seed-003-l2-p8.html")
    # The committed H200 result: correct at nominal shapes, faults at jittered ones.
    assert "Re-validation" in text and "NVIDIA H200" in text
    assert "verdict flip" in text and "jittered shapes" in text
    assert "reporter validate DATA --run seed-003-l2-p8" in text
    assert (site / "runs" / "seed-003-l2-p8.kernel.py").read_text() == next(
        r for r in collect(DATA).runs if r.run_id == "seed-003-l2-p8").trace.final_kernel.source  # type: ignore[union-attr]


def test_without_cache_the_page_says_not_revalidated(tmp_path: Path, small_data: Path) -> None:
    import shutil
    shutil.rmtree(small_data / "validation")
    build(small_data, tmp_path / "site")
    text = text_of(tmp_path / "site" / "runs" / "seed-000-l2-p10.html")
    assert "Not re-validated." in text and "re-validated" not in text.replace("Not re-validated", "")


def test_partial_run_page(site: Path) -> None:
    text = text_of(site / "runs" / "seed-002-partial.html")
    assert "Partial trace." in text and "nothing to re-validate" in text


def test_unknown_values_render_as_dash_not_zero(site: Path) -> None:
    html = (site / "runs" / "seed-000-l2-p10.html").read_text()
    assert re.search(r"<dt>wall clock</dt><dd>—</dd>", html)


def test_every_internal_link_resolves(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    # Every page is reachable from the index by links (404.html is GitHub Pages' own entry point).
    seen, todo = {site / "index.html", site / "404.html"}, [site / "index.html"]
    while todo:
        page = todo.pop()
        for link in parse(page).links:
            target = (page.parent / link.partition("#")[0]).resolve()
            if target.suffix == ".html" and target.is_file() and target not in seen:
                seen.add(target)
                todo.append(target)
    assert sorted(seen) == pages
    for page in pages:
        if page.name == "404.html":
            continue
        parsed = parse(page)
        for link in parsed.links:
            if link.startswith(("http:", "https:", "mailto:", "data:")):
                continue
            assert not link.startswith("/"), f"{page}: root-relative link {link} breaks under a sub-path"
            target, _, frag = link.partition("#")
            dest = (page.parent / target).resolve() if target else page
            assert dest.is_file(), f"{page.relative_to(site)} links to missing {link}"
            if frag and dest == page:
                assert frag in parsed.ids, f"{page}: no anchor #{frag}"


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def hostile_trace() -> dict:
    doc = minimal_trace(model=HOSTILE, problem_file=f'"><svg onload=alert(2)>{HOSTILE}.py', variant="v<script>",
                        config="javascript:alert(3)", source_note=HOSTILE)
    doc["prompt"] = f"Write a kernel. {HOSTILE}"
    doc["harness_metadata"] = {"note": HOSTILE, HOSTILE: [HOSTILE]}
    doc["turns"] = [{"index": 0, "reasoning": f"{HOSTILE}\n\n[click](javascript:alert(4)) <a href='javascript:alert(5)'>x</a>\n\n"
                                               "```html\n</code></pre><script>alert(6)</script>\n```",
                     "calls": [{"tool": f"compile{HOSTILE}", "arguments": {"kernel_code": f"x = '{HOSTILE}'", "note": "</script><script>alert(7)</script>"},
                                "result": {"ok": False, "text": HOSTILE}}], "turn_s": 1.0, "llm_s": 1.0, "tool_s": 0.0}]
    doc["final_kernel"] = {"source": f"# {HOSTILE}\n"}
    doc["reference_source"] = f"# {HOSTILE}\n"
    return doc


def test_hostile_trace_renders_inert(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "xss", hostile_trace())
    build(data, tmp_path / "site")
    for page in (tmp_path / "site").rglob("*.html"):
        parsed = parse(page)
        html = page.read_text()
        assert not parsed.handlers, f"{page.name}: event handler attributes {parsed.handlers}"
        for s in parsed.scripts:
            assert (s.get("src") or "").startswith(("static/", "../static/")) or s.get("type") == "application/json" \
                or page.name == "404.html", f"{page.name}: unexpected script {s}"
        assert not any(link.lower().startswith("javascript:") for link in parsed.links), page.name
        assert not parsed.tags & {"img", "svg", "iframe", "object"}, f"{page.name}: injected tags {parsed.tags}"
        assert "<script>alert" not in html


def test_figure_json_cannot_break_out_of_its_script_tag(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "xss", hostile_trace())
    build(data, tmp_path / "site")
    html = next((tmp_path / "site" / "runs").glob("*.html")).read_text()
    for blob in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S):
        assert "<" not in blob
        json.loads(blob)


def test_timeline_figure_dict() -> None:
    from reporter.render.charts import timeline_figure
    run = next(r for r in collect(DATA).runs if r.run_id == "seed-000-l2-p10")
    fig = timeline_figure(run.trace.turns)
    assert fig is not None
    llm, _tools, marks = fig["data"]
    assert list(llm["y"]) == [t.llm_s for t in run.trace.turns]
    assert marks["marker"]["color"][0] == "#c62828"  # turn 0's compile failed
    assert "FINAL" in marks["text"][9]


def test_interrupted_build_keeps_the_previous_site(tmp_path: Path, small_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build(small_data, site)
    before = (site / "index.html").read_text()
    run_page = (site / "runs" / "seed-000-l2-p10.html").read_text()

    def boom(self: SiteWriter, *args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(SiteWriter, "render", boom)
    trace = small_data / "seed-000-l2-p10" / "trace.json"
    trace.write_text(trace.read_text().replace('"source_note": "', '"source_note": "edited. '))  # a rebuild has work to do
    with pytest.raises(KeyboardInterrupt):
        build(small_data, site)
    assert (site / "index.html").read_text() == before
    assert (site / "runs" / "seed-000-l2-p10.html").read_text() == run_page
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]


def test_a_build_locks_its_own_site_not_the_folder_around_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import fcntl

    from reporter.render import writer
    # Locks are taken without waiting here: a build that would wait raises instead of hanging the test.
    flock = fcntl.flock
    monkeypatch.setattr(writer.fcntl, "flock", lambda fd, op: flock(fd, op | fcntl.LOCK_NB))
    data = tmp_path / "data"
    data.mkdir()
    with SiteWriter(tmp_path / "a", data, "now"):
        with SiteWriter(tmp_path / "b", data, "now") as sibling:  # a sibling folder's build goes on
            assert sibling.tmp is not None and sibling.tmp.is_dir()
        with pytest.raises(BlockingIOError), SiteWriter(tmp_path / "a", data, "now"):
            pass  # a second build of the same SITE waits for the first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing left beside them, lock files included


def test_index_lists_unreadable_traces(tmp_path: Path, small_data: Path) -> None:
    write_trace(small_data, "broken", "{oops")
    build(small_data, tmp_path / "site")
    text = text_of(tmp_path / "site" / "index.html")
    assert "Left out of this site (1)" in text and "broken/trace.json" in text and "(json)" in text


def test_golden_run_page(site: Path, update_gold: bool) -> None:
    for name in ("runs/seed-003-l2-p8.html", "index.html"):
        goldtest.check(name.replace("/", "_"), (site / name).read_text(encoding="utf-8"), update_gold)
