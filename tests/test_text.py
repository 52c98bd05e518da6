"""Model-written text shown as written: escaped, line breaks kept, fenced code as code blocks tagged with
their language (the reader's browser highlights them, static/lazy.js)."""

from __future__ import annotations

from markupsafe import Markup

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


def test_plain_marks_fenced_code_only() -> None:
    html = str(plain(REASONING))
    assert html.count('<div class="hl">') == 1
    # the code as written, escaped, tagged with its fence's language; no highlighting at build time
    assert '<pre><code class="language-cuda">__global__ void k(float* x) { x[0] = 1.0f; }\n</code></pre>' in html
    assert "<span" not in html
    assert "```" not in html  # the fence markers themselves are not shown as text
    assert html.index("ModelNew") < html.index('class="hl"') < html.index("after the code")


def test_plain_unclosed_fence_and_unknown_language() -> None:
    html = str(plain("text\n```nosuchlang\n<script>x</script>\nstill code"))
    assert '<div class="hl">' in html and "&lt;script&gt;" in html and "<script>" not in html
    assert '<code class="language-nosuchlang">' in html  # the browser leaves a language it does not know plain
    untagged = str(plain('```\nx = 1\n```\n```"><script>\ny\n```'))
    assert untagged.count("<code>") == 2 and "<script>" not in untagged  # no language: detected in the browser


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
    assert html.count('<div class="hl">') == 1
    assert '<code class="language-cuda">template &lt;typename T&gt; __device__ T silu(T x) { return x; }</code>' in html
    assert "But `*` stays." in html
    assert '<div class="hl">' not in str(plain("a lone ``` without a partner"))
    # inside a line, only a language's name is a tag: the first word of other code is code
    assert '<code>value = 1</code>' in str(plain("x ```value = 1``` y"))


def test_home_folders_become_a_tilde_and_nothing_else_does() -> None:
    from reporter.render.text import home_paths
    assert home_paths("-isystem /home/alice/.venv/include -I/usr/include") == "-isystem ~/.venv/include -I/usr/include"
    assert home_paths("cd /scratch/bob/build && ls /Users/carol") == "cd ~/build && ls ~"
    assert home_paths("/root/.cache/torch_extensions/x.so: error") == "~/.cache/torch_extensions/x.so: error"
    assert home_paths('File "/home/al-ice/k.py", line 3') == 'File "~/k.py", line 3'
    for kept in ("/homework/a", "/data/home/alice/x", "/rooted/x", "x/home/a/b", "/home/"):
        assert home_paths(kept) == kept


def test_numbers_and_their_units_are_kept_on_one_line() -> None:
    from reporter.render.numbers import nowrap
    assert str(nowrap("2.62e-06")) == '<span class="n">2.62e-06</span>'
    assert str(nowrap("11.0 μs – 12.4 μs")) == '<span class="n">11.0 μs</span> – <span class="n">12.4 μs</span>'
    assert str(nowrap("max 4,802.21 GB/s, 1.57x and 25.7%")) == ('max <span class="n">4,802.21 GB/s</span>, '
                                                              '<span class="n">1.57x</span> and <span class="n">25.7%</span>')
    # digits inside a word, a date, a shape or a hash are not numbers of their own; text is escaped
    for word in ("cuda fp32", "2026-05-02T19:26:01Z", "4673x112", "dc7359 197300dd", "l2-p8"):
        assert str(nowrap(word)) == word
    assert str(nowrap("<b>it's 3 s</b>")) == '&lt;b&gt;it&#39;s <span class="n">3 s</span>&lt;/b&gt;'
    assert str(nowrap(Markup('<span class="t">1 ms</span>'))) == '<span class="t">1 ms</span>'  # already formatted


def test_markdown_shows_raw_html_as_text_and_keeps_only_web_and_mail_links() -> None:
    html = str(markdown("<b>x</b> <script>alert(1)</script> ![i](data:image/png;base64,iVBORw0KGgo=) "
                        "[d](data:image/png;base64,AAAA) [h](https://example.com/a) [j](javascript:alert(1)) [m](mailto:a@b.c)"))
    assert html == ('<p>&lt;b&gt;x&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt; <img alt="i"> <a rel="noopener noreferrer">d</a> '
                    '<a href="https://example.com/a" rel="noopener noreferrer">h</a> [j](javascript:alert(1)) '
                    '<a href="mailto:a@b.c" rel="noopener noreferrer">m</a></p>\n')


def test_words_keeps_each_hyphenated_word_whole_and_escapes() -> None:
    from reporter.render.text import words
    assert words("kernelbench · example-sweep") == 'kernelbench · <span class="w">example-sweep</span>'
    assert words("a <b>-x</b>") == 'a <span class="w">&lt;b&gt;-x&lt;/b&gt;</span>'
    assert words("no hyphen here") == "no hyphen here"
