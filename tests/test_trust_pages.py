"""Pages show what was recorded and what counts: reasoning as written, suspect runs, honest labels."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import DATA, ROOT, minimal_trace, write_trace
from reporter.collect import collect
from test_render import build, text_of

KB = ROOT / "examples" / "kernelbench"
MATMUL_PAGE = "runs/kernelbench-run-new-l1-p1-s0.html"


@pytest.fixture
def site(format4_site: Path) -> Path:
    return format4_site  # pinned figures: the format-4 H200 results, built once per run (conftest); read only


def with_turns(page: Path) -> str:
    """A run page with its turns, which it loads from the chunk beside it when a reader expands them."""
    chunk = page.with_suffix(".turns.js").read_text()
    turns = json.loads(chunk[chunk.index("(") + 1: chunk.rindex(")")])["turns"]
    return page.read_text() + "".join(f'<details class="turn">{t}</details>' for t in turns)


def test_seed_000_reasoning_is_shown_as_written(site: Path) -> None:
    html = with_turns(site / "runs" / "seed-000-l2-p10.html")
    assert html.count("<em>") == 0  # the old markdown rendering made 104 of them out of `*`
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "4*24*96" in text and "ModelNew.__init__" in text
    reasoning = re.findall(r'<div class="reasoning">(.*?)</div>\s*(?:<div class="toolcall">|</details>)', html, re.S)
    assert reasoning and any('<code class="language-cuda">' in r for r in reasoning)  # its fenced CUDA, for the browser


def test_line_breaks_and_fences_in_reasoning_and_tool_results(tmp_path: Path) -> None:
    doc = minimal_trace()
    doc["turns"] = [{"index": 0, "reasoning": "first line\nsecond line\n\n```python\nx = 4*24*96\n```\nB * N",
                     "calls": [{"tool": "run_correctness", "arguments": {},
                                "result": {"ok": False, "text": "error at *x*\nnext line\n```\ntrace\n```"}}]},
                    {"index": 1, "reasoning": "**bold** and 4*24*96", "reasoning_format": "markdown"}]
    write_trace(tmp_path / "data", "lines", doc)
    build(tmp_path / "data", tmp_path / "site")
    html = with_turns(next((tmp_path / "site" / "runs").glob("*.html")))
    assert '<div class="plain">first line\nsecond line</div>' in html
    assert '<div class="plain">error at *x*\nnext line</div>' in html  # tool results too
    assert html.count('<div class="hl">') >= 2 and "<em>" not in html
    assert "<strong>bold</strong> and 4*24*96" in html  # markdown only where the trace says so


def test_backend_and_precision_not_recorded_show_a_dash(site: Path) -> None:
    html = (site / "runs" / "seed-002-partial.html").read_text()
    assert re.search(r"<dt>backend</dt><dd>(.*?)</dd>", html).group(1) == "— (not recorded)"  # type: ignore[union-attr]
    assert "cuda fp32" in text_of(site / "runs" / "seed-000-l2-p10.html")  # recorded there


def test_precision_assumed_for_validation_is_said(tmp_path: Path, sample_data: Path) -> None:
    path = sample_data / "seed-003-l2-p8" / "trace.json"
    doc = json.loads(path.read_text())
    del doc["run"]["precision"]
    path.write_text(json.dumps(doc))  # the kernel is unchanged, so its cached result still applies
    build(sample_data, tmp_path / "site")
    text = text_of(tmp_path / "site" / "runs" / "seed-003-l2-p8.html")
    assert "no precision recorded" in text and "checked at fp32" in text


def test_reproduced_column_is_not_read_as_microseconds(site: Path) -> None:
    html = (site / "runs" / "seed-003-l2-p8.html").read_text()
    assert "reproduced (us)" not in html and "reproduced (reporter)" in html


def test_roofline_point_uses_total_flops_over_total_bytes(site: Path) -> None:
    html = (site / "runs" / "seed-000-l2-p10.html").read_text()
    fig = json.loads(re.search(r'<script type="application/json" id="fig-roofline">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    kernel = next(t for t in fig["data"] if t.get("name") == "kernel")
    from test_gpu_metrics import _seed0_kernel_csv

    from reporter.collect import ncu
    ks = [ncu.derive(k) for k in ncu.load_ncu(_seed0_kernel_csv(site.parent / "data" / "validation"))]
    flops = sum((k.figures["fp32_tflops"].value or 0) * (k.duration_ns or 0) for k in ks)
    dram = sum((k.figures["dram_bandwidth"].value or 0) * 1e-3 * (k.duration_ns or 0) for k in ks)
    assert len(ks) == 3 and kernel["x"][0] == pytest.approx(flops / dram)
    # the table shows the same total FLOPs / total bytes as the chart (re-measuring moves the third digit)
    assert f"{kernel['x'][0]:.2f} FLOP/B" in text_of(site / "runs" / "seed-000-l2-p10.html")


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    shutil.copytree(KB, tmp_path / "kb")
    return tmp_path / "kb"


def test_plain_matmul_reads_suspect_and_does_not_count(kb: Path, tmp_path: Path) -> None:
    build(kb, tmp_path / "site")
    page = tmp_path / "site" / MATMUL_PAGE
    text = text_of(page)
    assert re.search(r'<p class="verdict-line">\s*<span class="pill v-suspect">suspect</span>', page.read_text())
    assert "no_cuda_kernel" in text and "no_extension" in text and "torch_computation" in text
    assert re.search(r"torch_computation\s+warn\s+\d+", text)  # with its line number
    board = text_of(next((tmp_path / "site" / "leaderboards").glob("*.html")))
    assert "fast1.0" in board.replace(" ", "")
    html = next((tmp_path / "site" / "leaderboards").glob("*.html")).read_text()
    row = re.search(r"<span class=\"rank\">[^<]+</span> gpt-4o</td>(.*?)</tr>", html, re.S)
    assert row is not None
    counts = re.findall(r'<span class="sub line">(\d+/\d+)</span>', row.group(1))
    assert counts[3] == "0/2"  # fast_1.0: the 1.01x torch.matmul run no longer counts
    fig = json.loads(re.search(r'id="fig-fastp-device">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    curve = fig["data"][0]
    assert curve["y"][curve["x"].index(1.0)] == 0  # and the fast_p curve agrees with the table


def test_a_cleared_kernel_counts_and_says_who_cleared_it(kb: Path, tmp_path: Path) -> None:
    run = next(r for r in collect(kb).runs if r.run_id.endswith("l1-p1-s0"))
    (kb / "reviews.toml").write_text(f'[[cleared]]\nrun = "{run.run_id}"\nkernel_sha256 = "{run.kernel_hash}"\n'
                                     'reviewer = "ada"\nnote = "a cuBLAS baseline on purpose"\n')
    build(kb, tmp_path / "site")
    page = tmp_path / "site" / MATMUL_PAGE
    assert 'v-suspect' not in page.read_text()
    assert "Cleared by ada" in text_of(page) and "a cuBLAS baseline on purpose" in text_of(page)


def test_impossible_values_never_print_inf_or_nan_on_a_leaderboard(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for name, sp in (("a", float("inf")), ("b", 2.0)):
        doc = minimal_trace(problem_id=1 if name == "a" else 2)
        doc["metrics"] = {"timing": {"unit": "ms", "runtime": 1.0, "ref_runtime": 2.0, "speedup": sp}}
        doc["turns"] = [{"index": 0, "llm_s": float("nan"), "tool_s": 1.0}]
        write_trace(data, name, json.dumps(doc))
    build(data, tmp_path / "site")
    board = next(p for p in sorted((tmp_path / "site" / "leaderboards").glob("*.html"))
                 if "revalidated" not in p.name).read_text()  # the re-validated-only twin has no rows here
    assert "infx" not in board and "nanx" not in board.lower() and "2.00x" in board
    def refuse(constant: str) -> None:
        pytest.fail(f"{constant} in figure JSON")

    for page in (tmp_path / "site").rglob("*.html"):
        for blob in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page.read_text(), re.S):
            json.loads(blob, parse_constant=refuse)


def shown(page: Path) -> str:
    """A page's text as a reader sees it: tags dropped, entities decoded, white space collapsed."""
    import html
    return html.unescape(text_of(page))


def test_times_shown_together_share_a_unit_and_name_their_basis(site: Path) -> None:
    seed0 = shown(site / "runs" / "seed-000-l2-p10.html")
    # headline cards: kernel 0.448 ms beside reference 49.2 µs was one card group in two units
    assert "runtime (device time, re-validated) 448 μs" in seed0 and "ref runtime (device time, re-validated) 49.2 μs" in seed0
    assert "speedup (device time, re-validated) 0.11x" in seed0 and "0.448 ms" not in seed0
    assert "kernel 3 448 μs 0 / 0 36.19 MB reference 9 41.9 μs 1 / 0 41.38 MB" in seed0  # the launch table too
    seed3 = shown(site / "runs" / "seed-003-l2-p8.html")
    # the timing table reads down in one unit: the reference's wall time is 137 μs, not 0.137 ms
    assert "wall time 137 μs 16.8 μs 120 μs – 228 μs 1340" in seed3 and "0.137 ms" not in seed3


def test_recorded_counters_carry_the_measured_figures_units(site: Path) -> None:
    seed3 = shown(site / "runs" / "seed-003-l2-p8.html")
    assert "dram bandwidth 198.59 GB/s 90.06 GB/s 188.03 GB/s" in seed3  # the recorded 188.03 had no unit
    assert "compute util 24.16 % 19.34 % 12.20 %" in seed3 and "ridge point 13.90 FLOP/B 13.88 FLOP/B 20.00 FLOP/B" in seed3


def test_two_related_figures_that_differ_say_why(site: Path) -> None:
    seed3 = shown(site / "runs" / "seed-003-l2-p8.html")
    assert ("CUDA time and device time differ (kernel 8.19 μs here, 11.5 μs device time) because they time different "
            "calls") in seed3 and "each after a 256 MB L2 flush" in seed3
    seed0 = shown(site / "runs" / "seed-000-l2-p10.html")
    # a max relative error of 4.71e-03 against rtol 1e-4, marked pass: the allclose rule passes it
    assert "pass (max rel error 4.71e-03 > rtol 0.0001: passes by the rule above)" in seed0
    assert "a trial passes when |kernel − reference| ≤ atol + rtol·|reference| at every element (torch.allclose)" in seed0
    assert "A pass can show a max relative error above rtol" in seed0
    assert "A pass can show" not in seed3  # no trial of seed 003 is above its bounds


def test_the_banner_and_the_rows_make_the_same_promise(site: Path) -> None:
    for name in ("seed-000-l2-p10", "seed-003-l2-p8"):  # both recorded on another (or no named) GPU than the H200
        page = shown(site / "runs" / f"{name}.html")
        assert "with no agree/disagree claim about times; only a gap of 100× or more" in page
        assert "off what we measured" not in page and "looks like a unit mix-up" in page


def test_home_folders_in_logs_are_shown_as_a_tilde(site: Path) -> None:
    # seed 000's compile log names /home/<user>/ and /scratch/<user>/: every view of it shows ~ instead
    assert "/home/prabhune/" in (DATA / "seed-000-l2-p10" / "trace.json").read_text()
    for name in ("seed-000-l2-p10.html", "seed-000-l2-p10.turns.js"):
        shown = (site / "runs" / name).read_text()
        assert "prabhune" not in shown and "/scratch/tejas" not in shown, name
    assert "-isystem ~/PopcornBench/.venv/lib" in (site / "runs" / "seed-000-l2-p10.turns.js").read_text()
    # the validator's own log (a failed build under /root/.cache on the GPU machine) is shown the same way
    beta = (site / "runs" / "kernelbench-sweep-kernelbench-level1-demo-beta-l1-p96-s0.html").read_text()
    assert "/root/" not in beta and '<pre class="log">' in beta
    assert "~/.cache/reporter/torch_extensions/a78eec278971d5712d00/beta_huber/cuda.cu(26): error" in beta
