"""Model-written text shown as written: escaped, line breaks kept, only fenced code highlighted."""

from __future__ import annotations

from reporter.render.text import markdown, plain, prose

REASONING = ("Shapes: B * N * D = 4*24*96 = 9216\n"
             "Then ModelNew.__init__ loads the extension.\n"
             "One line\nthe next line\n\n"
             "```cuda\n__global__ void k(float* x) { x[0] = 1.0f; }\n```\n"
             "after the code <b>not bold</b> [link](javascript:alert(1))")


def test_plain_keeps_what_the_model_wrote() -> None:
    html = str(plain(REASONING))
    assert "4*24*96" in html and "<em>" not in html and "<strong>" not in html
    assert "ModelNew.__init__" in html
    assert "One line\nthe next line" in html  # a single line break survives (shown by white-space: pre-wrap)
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html and "<b>" not in html
    assert "<a " not in html  # a markdown link is text, not a link


def test_plain_highlights_fenced_code_only() -> None:
    html = str(plain(REASONING))
    assert html.count('<div class="hl">') == 1
    assert '<span class="kr">__global__</span>' in html  # the CUDA lexer ran on the fence
    assert "```" not in html  # the fence markers themselves are not shown as text
    assert html.index("ModelNew") < html.index('class="hl"') < html.index("after the code")


def test_plain_unclosed_fence_and_unknown_language() -> None:
    html = str(plain("text\n```nosuchlang\n<script>x</script>\nstill code"))
    assert '<div class="hl">' in html and "&lt;script&gt;" in html and "<script>" not in html


def test_markdown_emphasis_needs_word_boundaries() -> None:
    html = str(markdown("B * N * D = 4*24*96 and ModelNew.__init__ and a_b_c, but *this* and **that** (_too_)."))
    assert "4*24*96" in html and "ModelNew.__init__" in html and "a_b_c" in html
    assert "<em>this</em>" in html and "<strong>that</strong>" in html and "<em>too</em>" in html


def test_prose_renders_markdown_only_when_declared() -> None:
    assert "<strong>" in str(prose("**x**", "markdown"))
    assert "<strong>" not in str(prose("**x**", "text")) and "**x**" in str(prose("**x**", "text"))


def test_fences_flattened_into_one_line_are_still_code() -> None:
    # Captures that turned newlines into spaces (seed 000) keep the fences inside the line.
    html = str(plain("Now, the kernel: ```cuda template <typename T> __device__ T silu(T x) { return x; } ``` But `*` stays."))
    assert html.count('<div class="hl">') == 1 and '<span class="k">template</span>' in html
    assert "But `*` stays." in html
    assert '<div class="hl">' not in str(plain("a lone ``` without a partner"))
