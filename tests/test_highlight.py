"""Kernel sources on the page: Python read as Python, and the CUDA / C++ that `load_inline` compiles read as CUDA
(issue 45, item 5), escaped token by token, with spans that never nest (the numbered view splits them by line)."""

from __future__ import annotations

import re

from reporter.render.highlight import highlight_python, numbered

KERNEL = '''cuda_source = r"""
#include <torch/extension.h>
__global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  /* one
    thread each */
    if (i < n) y[i] = x[i] * 2.0f;  // "</span><script>alert(1)</script>"
}
"""
cpp_source = "torch::Tensor scale(torch::Tensor x);"
note = """a docstring, not CUDA"""
'''


def test_cuda_inside_a_triple_quoted_string_is_highlighted_as_cuda() -> None:
    html = highlight_python(KERNEL)
    assert '<span class="s">r"""</span>\n<span class="cp">#include &lt;torch/extension.h&gt;</span>' in html
    assert '<span class="k">__global__</span> <span class="kt">void</span> scale(' in html
    assert '<span class="nb">blockIdx</span>.x * <span class="nb">blockDim</span>.x + <span class="nb">threadIdx</span>.x' in html
    assert '<span class="cm">/* one\n    thread each */</span>' in html
    assert '<span class="mf">2.0f</span>' in html
    # A one-line string and a triple-quoted string without CUDA stay Python strings.
    assert '<span class="s">"torch::Tensor scale(torch::Tensor x);"</span>' in html
    assert '<span class="s">"""a docstring, not CUDA"""</span>' in html


def test_cuda_text_is_escaped_and_its_spans_never_nest() -> None:
    html = highlight_python(KERNEL)
    assert "<script>" not in html and "&lt;/span&gt;&lt;script&gt;" in html
    depth = 0
    for tag in re.findall(r"<span[^>]*>|</span>", html):
        depth += 1 if tag.startswith("<span") else -1
        assert depth in (0, 1)
    lines = numbered(f'<div class="hl"><pre>{html}</pre></div>', "k")
    # the comment over two lines is closed at the end of the first and reopened on the second
    assert '<span class="cm">/* one</span></span>' in lines and '<span class="cm">    thread each */</span>' in lines


def test_a_string_holding_only_torch_s_cpp_api_is_read_as_cpp() -> None:
    html = highlight_python('cpp = """torch::Tensor scale(torch::Tensor x, int n);"""\n')
    assert ('<span class="s">"""</span>torch::Tensor scale(torch::Tensor x, <span class="kt">int</span> n);'
            '<span class="s">"""</span>') in html
