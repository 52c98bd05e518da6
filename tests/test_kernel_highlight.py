"""Kernel sources read as CUDA wherever they are shown (issue 45, item 5): the build highlights the final kernel
(render/highlight.py) and the browser every kernel version, diff and comparison (static/kernelhl.js), and the two
give the same HTML for the same source, hostile text included."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest

from conftest import KERNELS, ROOT
from reporter.render.highlight import highlight_python

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

RUN = """
const vm = require('vm'), fs = require('fs');
const ctx = {window: {}};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.argv[1], 'utf8'), ctx);
const H = ctx.window.reporterHighlight, sources = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
console.log(JSON.stringify(sources.map(s => { const h = H.python(s); return [h, H.lines(h)]; })));
"""

HOSTILE = [
    'x = "</span><script>alert(1)</script>"\n',
    's = """\n__global__ void k() { /* unterminated\n',  # a triple quote and a comment that never close
    "é1 = 2  # 名前\nvar_é = 0x1F + 1e-3\n",  # Unicode around numbers and names
    "src = r'''\n#include <cuda.h>\n// a <b> & c\nint main() { return 0; }\n'''\n",
    'cpp = """torch::Tensor f(torch::Tensor x) { return x; }"""\nclass  A: pass\n',
    "a = 'it\\'s'\nb = \"q\\\\\"\n",
    "",
]


def _sources() -> list[str]:
    found = [p.read_text(encoding="utf-8") for p in sorted(KERNELS.glob("*.py"))]
    for trace in sorted((ROOT / "data").rglob("trace.json")):
        fk = json.loads(trace.read_text(encoding="utf-8")).get("final_kernel") or {}
        found += [fk["source"]] if isinstance(fk.get("source"), str) else []
    return found + HOSTILE


def run_js(sources: list[str], tmp_path: Path) -> list[tuple[str, list[str]]]:
    path = tmp_path / "sources.json"
    path.write_text(json.dumps(sources), encoding="utf-8")
    out = subprocess.run([NODE or "node", "-e", RUN, str(ROOT / "static" / "kernelhl.js"), str(path)],
                         capture_output=True, text=True, timeout=60, check=True)
    return [(h, lines) for h, lines in json.loads(out.stdout)]


def test_the_browser_highlights_as_the_build_does(tmp_path: Path) -> None:
    sources = _sources()
    assert len(sources) > 20 and sum("__global__" in s for s in sources) > 10
    got = run_js(sources, tmp_path)
    for src, (html, _) in zip(sources, got):
        assert html == highlight_python(src), src[:200]


def test_cuda_inside_a_load_inline_string_is_cuda(tmp_path: Path) -> None:
    src = 'cuda = """\n__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n"""\nx = "__global__ stays a string"\n'
    html = run_js([src], tmp_path)[0][0]
    assert '<span class="k">__global__</span> <span class="kt">void</span>' in html
    assert '<span class="nb">threadIdx</span>' in html and '<span class="mf">1.0f</span>' in html
    assert '<span class="s">"__global__ stays a string"</span>' in html  # one line: no load_inline source


def test_lines_split_spans_at_line_breaks_and_keep_the_text(tmp_path: Path) -> None:
    for src, (_, lines) in zip(HOSTILE, run_js(HOSTILE, tmp_path)):
        assert len(lines) == src.count("\n") + 1
        for line in lines:  # each line is whole: spans open and close on it, flat, and no raw markup gets in
            assert re.fullmatch(r'(?:<span class="[\w-]+">[^<>]*</span>|[^<>])*', line), line
        assert [unescape(re.sub(r"<[^>]+>", "", line)) for line in lines] == src.split("\n")
