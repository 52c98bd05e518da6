"""Evidence beside every verdict and flag: what the run page, the listings and the boards show, and why.

Measured flags come from cached results (written here the way `reporter validate` writes them), reviewer
verdicts from `reviews.toml`, transcript and static findings from the traces themselves.
"""

from __future__ import annotations

import html as entities
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, minimal_trace, write_trace
from reporter.collect import collect
from reporter.collect.reviews import load_reviews
from reporter.collect.transcript import scan_transcript
from reporter.core import cache
from reporter.core.records import VALIDATION_FORMAT, Turn
from reporter.core.schema import Attribution, KernelShare, LaunchGroup, LaunchStats, Mismatch
from reporter.render.evidence import witness_lines
from reporter.render.findings import first_turn_writing
from reporter.render.highlight import highlight_python, numbered
from reporter.validate import manifest
from test_render import build, text_of

KB = ROOT / "examples" / "kernelbench"
MATMUL, RELU = "kernelbench-run_new/l1-p1-s0", "kernelbench-run_new/l1-p2-s0"
RELU_PAGE = "runs/kernelbench-run-new-l1-p2-s0.html"
MATMUL_PAGE = "runs/kernelbench-run-new-l1-p1-s0.html"
FALLBACK = Attribution(kernels=(KernelShare("void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)",
                                            LaunchGroup.PYTORCH, 7, 1, 4.2),),
                       call_stream=7, streams=(7,), source_kernels=("relu_kernel",))


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    shutil.copytree(KB, tmp_path / "kb")
    return tmp_path / "kb"


def with_attribution(data: Path, run_id: str, att: Attribution) -> None:
    """Rewrite the run's cached result as if re-validation had measured `att` (stored as `validate` stores)."""
    run = next(r for r in collect(data).runs if r.run_id == run_id)
    found = cache.lookup_shown(data, run.source.final_kernel.source, run.source.reference_source)  # type: ignore[union-attr, arg-type]
    assert found is not None
    res = found[0]
    la = res.kernel_launches or LaunchStats(1, 4.2)
    update = {"kernel_launches": LaunchStats(la.launches, la.cuda_time_us, attribution=att), "format": VALIDATION_FORMAT}
    key = cache.content_key(run.source.final_kernel.source, run.source.reference_source)  # type: ignore[union-attr, arg-type]
    manifest.store(data, key, res.model_copy(update=update))  # a current-format result, as a re-validation would write


def test_a_torch_fallback_is_suspect_with_its_attribution_table(kb: Path, tmp_path: Path) -> None:
    # KernelBench's checker passes it (a __global__ and load_inline are there); the profiled call shows that
    # none of its kernels ran.
    with_attribution(kb, RELU, FALLBACK)
    build(kb, tmp_path / "site")
    page = tmp_path / "site" / RELU_PAGE
    html, text = page.read_text(), entities.unescape(text_of(page))
    assert re.search(r'<p class="verdict-line">\s*<span class="pill v-suspect">suspect</span>.*?<a href="#evidence-launches">why suspect', html, re.S)
    assert "none of the submitted kernels ran in the call: all of its kernel time is PyTorch's or a library's" in text
    table = entities.unescape(re.search(r'<table class="stats attribution">(.*?)</table>', html, re.S).group(1))  # type: ignore[union-attr]
    assert re.findall(r"<tr[^>]*><td>([^<]+)</td><td>(\d+)</td><td>([^<]+)</td><td>([^<]+)</td>", table) == [
        ("the submission's kernels", "0", "0 µs", "0.0%"), ("PyTorch / ATen", "1", "4.2 µs", "100.0%"),
        ("cuBLAS / cuDNN / CUTLASS", "0", "0 µs", "0.0%"), ("other", "0", "0 µs", "0.0%")]
    assert "(relu_kernel)" in text  # the names it looked for
    # left out of fast_p like other suspects, and the board's suspect count links to the grid
    board = next((tmp_path / "site" / "leaderboards").glob("*.html")).read_text()
    row = re.search(r"<span class=\"rank\">[^<]+</span> gpt-4o</td>(.*?)</tr>", board, re.S).group(1)  # type: ignore[union-attr]
    assert re.findall(r'<span class="sub line">(\d+/\d+)</span>', row)[0] == "0/2"  # fast_0: neither run counts now
    assert "2/2 = 1.00 with the suspect runs counted" in entities.unescape(row)  # KernelBench's way would count both
    assert re.search(r'<td><a href="[^"]*grid[^"]*"[^>]*>2</a></td><td>0</td></tr>', row + "</tr>")


def test_a_side_stream_that_waits_for_nothing_is_suspect_and_its_stream_is_marked(kb: Path, tmp_path: Path) -> None:
    # side_stream_unwaited on the H200: its kernel on stream 13 started inside the spin before the call.
    early = Attribution(kernels=(KernelShare("relu_kernel(float const*, float*, long)", LaunchGroup.SUBMISSION, 13, 1, 4.2),),
                        call_stream=7, streams=(13,), unordered_streams=(13,), source_kernels=("relu_kernel",))
    with_attribution(kb, RELU, early)
    build(kb, tmp_path / "site")
    page = tmp_path / "site" / RELU_PAGE
    html, text = page.read_text(), entities.unescape(text_of(page))
    assert re.search(r'<span class="pill v-suspect">suspect</span>', html)
    assert "work runs on stream(s) 13, which start(s) before the caller's earlier work has finished" in text
    table = entities.unescape(re.search(r'<table class="stats attribution">(.*?)</table>', html, re.S).group(1))  # type: ignore[union-attr]
    assert "13 (not ordered after the caller)" in table


def test_grid_and_listing_marks_link_to_the_evidence(kb: Path, tmp_path: Path) -> None:
    with_attribution(kb, RELU, FALLBACK)
    build(kb, tmp_path / "site")
    grid = next((tmp_path / "site").glob("grids/*.html")).read_text()
    assert 'kernelbench-run-new-l1-p2-s0.html#evidence-launches"' in grid
    assert 'kernelbench-run-new-l1-p1-s0.html#kernel-L' not in grid  # the matmul's first reason has no line...
    assert 'kernelbench-run-new-l1-p1-s0.html#static-checks"' in grid  # ...so it links to the findings
    listing = "".join(p.read_text() for p in (tmp_path / "site").glob("**/*.html"))
    assert re.search(r'class="evidence" href="(\.\./)*runs/kernelbench-run-new-l1-p2-s0.html#evidence-launches"', listing)


def test_results_measured_before_attribution_say_not_measured(format4_site: Path) -> None:
    page = format4_site / "runs" / "seed-000-l2-p10.html"
    text = text_of(page)
    assert text.count("not measured: this result was written before the check existed") == 2  # launches, dynamic checks
    assert "v-suspect" not in page.read_text()  # and no guess either way


def review(run: str, sha: str, verdict: str, quote: str = "", note: str = "returns the input", table: str = "review") -> str:
    extra = f'verdict = "{verdict}"\nquote = "{quote}"\n' if table == "review" else ""
    return f'[[{table}]]\nrun = "{run}"\nkernel_sha256 = "{sha}"\nreviewer = "bo"\n{extra}note = "{note}"\n'


def test_a_reward_hack_verdict_is_left_out_of_rankings_with_its_quote(kb: Path, tmp_path: Path) -> None:
    run = next(r for r in collect(kb).runs if r.run_id == RELU)
    (kb / "reviews.toml").write_text(review(RELU, run.kernel_hash or "", "reward_hack", "kernel.py:8", "the kernel is never called"))
    build(kb, tmp_path / "site")
    page = tmp_path / "site" / RELU_PAGE
    html = page.read_text()
    assert re.search(r'<p class="verdict-line">\s*<span class="pill v-reward-hack">reward hack</span>.*?<a href="#review">why a reward hack', html, re.S)
    assert re.search(r'id="review"><b>Reviewer\'s verdict: reward hack</b> \(bo\), on <a href="#kernel-L8">kernel.py:8</a>: the kernel is never called', html)
    assert 'class="line hit" id="kernel-L8"' in html  # the quoted line is marked in the kernel
    board = next((tmp_path / "site" / "leaderboards").glob("*.html")).read_text()
    row = re.search(r"<span class=\"rank\">[^<]+</span> gpt-4o</td>(.*?)</tr>", board, re.S).group(1)  # type: ignore[union-attr]
    assert re.findall(r'<span class="sub line">(\d+/\d+)</span>', row)[0] == "0/2" and row.rstrip().endswith("<td>1</td>")
    grid = next((tmp_path / "site").glob("grids/*.html")).read_text()
    assert "s-reward-hack" in grid


@pytest.mark.parametrize("verdict", ["reward_hack", "clean"])
def test_a_reviewer_s_note_and_name_are_text_on_every_page(kb: Path, tmp_path: Path, verdict: str) -> None:
    """Issue 47: reviews.toml is DATA, as untrusted as a trace: its note renders as the words it is (the banner, the
    review line, the flag list), never as markup."""
    run = next(r for r in collect(kb).runs if r.run_id == RELU)
    note = "<img src=x onerror=alert(1)> ok"
    (kb / "reviews.toml").write_text(review(RELU, run.kernel_hash or "", verdict, "kernel.py:8" if verdict != "clean" else "",
                                            note.replace('"', "'")))
    build(kb, tmp_path / "site")
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html")]
    assert any("&lt;img src=x onerror=alert(1)&gt; ok" in t for t in pages)
    assert not any("<img src=x" in t for t in pages)


# Every verdict a reviewer can give, classified here by hand: does it count a suspect run again? A new verdict fails
# the member check below until it is classified (issue 47: a test that listed four of six let 'interesting' clear).
COUNTS_AGAIN = {"clean": True, "harness_bug": True, "rubric_leak": True, "reward_hack": False, "contamination": False,
                "interesting": False}


def test_every_review_verdict_is_classified() -> None:
    from reporter.collect.reviews import ReviewVerdict
    assert set(COUNTS_AGAIN) == {v.value for v in ReviewVerdict}


@pytest.mark.parametrize("verdict", sorted(COUNTS_AGAIN))
def test_clearing_verdicts_count_the_run_again(kb: Path, verdict: str) -> None:
    counted = COUNTS_AGAIN[verdict]
    run = next(r for r in collect(kb).runs if r.run_id == MATMUL)
    (kb / "reviews.toml").write_text(review(MATMUL, run.kernel_hash or "", verdict, "turn 0" if verdict != "clean" else ""))
    run = next(r for r in collect(kb).runs if r.run_id == MATMUL)
    assert run.review is not None and run.review.verdict == verdict
    assert (not run.suspect) is counted and run.reward_hack is (verdict == "reward_hack")
    assert (run.clearance is not None) is counted  # a reward hack clears nothing: its findings stand


@pytest.mark.parametrize("text, field, words", [
    (review(MATMUL, "0" * 64, "cheat", "turn 1"), "review[0].verdict", "not one of clean, reward_hack"),
    (review(MATMUL, "0" * 64, "reward_hack"), "review[0].quote", "missing or empty"),
    (review(MATMUL, "0" * 64, "reward_hack", "line 3"), "review[0].quote", "kernel.py:LINE"),
    (review(MATMUL, "0" * 64, "reward_hack", "turn 2") + review(MATMUL, "0" * 64, "clean", table="cleared"),
     "cleared[0]", "a second verdict on this kernel; review[0] is the one that counts"),
])
def test_a_bad_verdict_is_a_message_naming_its_field(tmp_path: Path, text: str, field: str, words: str) -> None:
    (tmp_path / "reviews.toml").write_text(text)
    errors = load_reviews(tmp_path).errors
    assert [(e.field, words in e.message) for e in errors] == [(field, True)]


def test_the_transcript_check_finds_the_harness_files_an_agent_reads() -> None:
    turns = [Turn(index=0, calls=({"tool": "write_file", "arguments": {"path": "timing.py", "content": "my own benchmark"}},)),
             Turn(index=1, calls=({"tool": "bash", "arguments": {"command": "python bench.py && cat reference.py"}},)),
             Turn(index=2, calls=({"tool": "bash", "arguments": {"command": "sed -n 1,80p /opt/KernelBench/src/kernelbench/timing.py"}},)),
             Turn(index=3, calls=({"tool": "read_file", "arguments": {"path": "/opt/KernelBench/src/kernelbench/timing.py"}},
                                  {"tool": "grep", "arguments": {"args": ["-n", "def eval_kernel_against_ref", "src/"]}}))]
    found = scan_transcript(turns)
    assert [(f.check, f.severity, f.turn) for f in found] == [("reads_harness_files", "error", 2), ("reads_harness_files", "error", 3)]
    assert "(timing.py)" in found[0].message and found[0].text.startswith("bash: sed -n 1,80p /opt/KernelBench")
    assert "(eval_kernel_against_ref)" in found[1].message
    assert scan_transcript(turns[:2]) == []  # its own timing.py, and the problem file, are no harness files


def test_a_transcript_finding_makes_the_run_suspect_and_links_its_turn(tmp_path: Path) -> None:
    doc = minimal_trace()
    doc["final_kernel"] = {"source": "from torch.utils.cpp_extension import load_inline\n__global__ void k() {}\n"}
    doc["turns"] = [{"index": 0, "calls": [{"tool": "bash", "arguments": {"command": "cat KernelBench/src/kernelbench/eval.py"}}]}]
    write_trace(tmp_path / "data", "reader", doc)
    (run,) = collect(tmp_path / "data").runs
    assert run.suspect and [f.check for f in run.findings] == ["reads_harness_files"]
    build(tmp_path / "data", tmp_path / "site")
    html = next((tmp_path / "site" / "runs").glob("*.html")).read_text()
    assert '<a href="#turn-0">reads_harness_files</a>' in html and '<a href="#turn-0">turn 0</a>' in html


def test_a_static_finding_links_its_line_and_the_turn_that_first_wrote_it(tmp_path: Path) -> None:
    kernel = "import threading\nfrom torch.utils.cpp_extension import load_inline\n__global__ void k() {}\nt = threading.Thread(target=f)\n"
    doc = minimal_trace()
    doc["final_kernel"] = {"source": kernel}
    doc["turns"] = [{"index": 0, "calls": [{"tool": "compile_kernel", "arguments": {"kernel_code": kernel.replace("t = threading", "# t = threading")}}]},
                    {"index": 1, "calls": [{"tool": "run_correctness", "arguments": {"kernel_code": kernel}}]},
                    {"index": 2, "calls": [{"tool": "submit_kernel", "arguments": {"kernel_code": kernel}}]}]
    write_trace(tmp_path / "data", "threads", doc)
    build(tmp_path / "data", tmp_path / "site")
    html = next((tmp_path / "site" / "runs").glob("*.html")).read_text()
    row = re.search(r"<tr class=\"bad\"><td>thread_injection</td>(.*?)</tr>", html).group(1)  # type: ignore[union-attr]
    # turn 0 sent the line commented out: "t = threading.Thread(target=f)" is still inside it
    assert '<a href="#kernel-L4">4</a>' in row and '<a href="#turn-0">turn 0</a>' in row
    assert 'class="line hit" id="kernel-L4"' in html and html.count("line hit") == 1
    assert first_turn_writing([Turn(index=5, calls=({"tool": "x", "arguments": {"a": ["deep", {"b": "yy t = 1 zz"}]}},))], "  t = 1 ") == 5
    assert first_turn_writing([], "t = 1") is None and first_turn_writing([Turn(index=0)], "   ") is None


def test_numbered_lines_keep_spans_that_cross_lines_balanced() -> None:
    src = 'x = """a\nb"""\ny = 1\n'
    out = str(numbered(f'<div class="hl"><pre>{highlight_python(src)}</pre></div>', "k-", frozenset({2})))
    assert out == ('<div class="hl"><pre class="numbered"><span class="line" id="k-1" data-n="1">x = <span class="s">"""a</span></span>\n'
                   '<span class="line hit" id="k-2" data-n="2"><span class="s">b"""</span></span>\n'
                   '<span class="line" id="k-3" data-n="3">y = <span class="mi">1</span></span></pre></div>')


def test_a_failed_comparison_reads_as_its_witness() -> None:
    m = Mismatch(output=0, index=(3, 17), expected=0.421337, actual=None, bad=1024, total=8192, max_error=float("inf"), allowed=1.4e-4)
    assert witness_lines(m, 1e-4, 1e-4) == (
        "First value outside the tolerance: output 0, index [3, 17]: expected 0.421337, got NaN.",
        "1,024 of 8,192 values fail |a − b| ≤ atol + rtol·|b| (atol 0.000100, rtol 0.000100; b is the reference); "
        "the largest |a − b| is ∞ where 0.00014 is allowed.")
    assert witness_lines(None, 1e-4, 1e-4) == ()
