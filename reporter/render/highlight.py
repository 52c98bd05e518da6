"""Fast highlighting of kernel sources, cached by content across builds.

Pygments' Python lexer costs ~10 ms per KB; a sweep of 10,000 runs with unique kernels would spend most
of its build there. Kernel files are Python with CUDA source inside string literals: one regular expression
pass (comments, strings, keywords, numbers, definitions) reads the Python at a fraction of the cost, and a
triple-quoted string that holds CUDA or C++ (what `load_inline` compiles) is read again as CUDA. The output uses Pygments' CSS classes,
so `pygments.css` colours it. Every token is escaped; nothing from the source reaches the page raw.
`static/kernelhl.js` is the same highlighter for what the browser shows from text (kernel versions, their
diffs, problem-page comparisons); `tests/test_kernel_highlight.py` holds the two to the same output.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from html import escape
from pathlib import Path

from markupsafe import Markup

from ..core.atomic import replace_file

_KEYWORDS = "|".join(sorted(keyword.kwlist, key=len, reverse=True))
_TOKENS = re.compile(
    r'(?P<s>[rRbBuUfF]{0,2}(?:"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'))'
    r"|(?P<c1>#[^\n]*)"
    r"|(?P<def>\b(?:def|class)\b)(?P<ws>[ \t]+)(?P<nf>[A-Za-z_]\w*)"
    rf"|(?P<k>\b(?:{_KEYWORDS})\b)"
    r"|(?P<mi>\b\d+(?:\.\d*)?(?:[eE][+-]?\d+)?\b)",
    re.ASCII,  # \b, \d and \w as in JavaScript: static/kernelhl.js highlights kernel versions the same way
)
CLASSES = ("s", "c1", "k", "mi")
HIGHLIGHTER = "3"  # in each cached fragment's key: a fragment of an older highlighter is made again

# CUDA and C++ inside a triple-quoted string (what `load_inline` compiles) read as CUDA, not as one Python string.
_C_MARKERS = ("__global__", "__device__", "#include", "torch::", "<<<", "blockIdx", "at::Tensor")
_C_KEYWORDS = ("break case catch class const constexpr continue default delete do else enum extern false for goto if "
               "inline namespace new nullptr operator private public return sizeof static static_cast reinterpret_cast "
               "struct switch template this throw true try typedef typename union using virtual volatile while "
               "__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __launch_bounds__")
_C_TYPES = ("auto bool char double float half int long short signed size_t unsigned void int8_t int16_t int32_t int64_t "
            "uint8_t uint16_t uint32_t uint64_t __half __half2 __nv_bfloat16 float2 float4 int2 int4 dim3 cudaStream_t")
_C_BUILTINS = ("threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp __shfl_sync __shfl_down_sync "
               "__shfl_up_sync __shfl_xor_sync __ldg atomicAdd atomicMax atomicMin atomicCAS")


def _words(names: str) -> str:
    return "|".join(sorted(map(re.escape, names.split()), key=len, reverse=True))


_C_TOKENS = re.compile(
    r"(?P<cm>/\*[\s\S]*?(?:\*/|\Z))|(?P<c1>//[^\n]*)|(?P<cp>^[ \t]*#[^\n]*)"
    r"""|(?P<s>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    rf"|(?P<kt>(?<![\w])(?:{_words(_C_TYPES)})(?![\w]))|(?P<k>(?<![\w])(?:{_words(_C_KEYWORDS)})(?![\w]))"
    rf"|(?P<nb>(?<![\w])(?:{_words(_C_BUILTINS)})(?![\w]))"
    r"|(?P<mf>(?<![\w.])\d+\.\d*(?:[eE][+-]?\d+)?[fF]?|(?<![\w.])\d+[eE][+-]?\d+[fF]?)"
    r"|(?P<mi>(?<![\w.])(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*(?![\w.]))", re.M | re.ASCII)
_STRING_PARTS = re.compile(r'(?P<head>[rRbBuUfF]{0,2}(?:"""|\'\'\'))(?P<body>[\s\S]*?)(?P<tail>"""|\'\'\'|)\Z')


def highlight_c(source: str) -> str:
    """CUDA / C++ as escaped text with Pygments' classes (comments, preprocessor, strings, keywords, types, CUDA's
    built-in variables, numbers); spans never nest, as `numbered` needs."""
    out: list[str] = []
    pos = 0
    for m in _C_TOKENS.finditer(source):
        out.append(escape(source[pos:m.start()], quote=False))
        out.append(_span(m.lastgroup or "", m.group(0)))
        pos = m.end()
    out.append(escape(source[pos:], quote=False))
    return "".join(out)


def _string(text: str) -> str:
    """A Python string literal: a triple-quoted one holding CUDA or C++ shows its content as such."""
    m = _STRING_PARTS.match(text)
    if m is None or not any(marker in m.group("body") for marker in _C_MARKERS):
        return _span("s", text)
    tail = m.group("tail")
    return _span("s", m.group("head")) + highlight_c(m.group("body")) + (_span("s", tail) if tail else "")


def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{escape(text, quote=False)}</span>'


def _token(m: re.Match[str]) -> str:
    if m.group("def"):
        return _span("k", m.group("def")) + m.group("ws") + _span("nf", m.group("nf"))
    cls = m.lastgroup or ""
    return _string(m.group(0)) if cls == "s" else _span(cls, m.group(0))


def highlight_python(source: str) -> str:
    """HTML for `source`: escaped text with spans; line breaks kept (the caller wraps it in <pre>)."""
    out: list[str] = []
    pos = 0
    for m in _TOKENS.finditer(source):
        out.append(escape(source[pos:m.start()], quote=False))
        out.append(_token(m))
        pos = m.end()
    out.append(escape(source[pos:], quote=False))
    return "".join(out)


class HighlightCache:
    """Highlighted sources by content hash, in a folder kept beside the site's build status."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def code(self, source: str) -> Markup:
        key = hashlib.sha256(f"{HIGHLIGHTER}\n{source}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
        path = self.folder / key[:2] / f"{key}.frag" if self.folder is not None else None  # not .html: no page
        if path is not None and path.is_file():
            return Markup(path.read_text(encoding="utf-8"))
        html = f'<div class="hl"><pre>{highlight_python(source)}</pre></div>'
        if path is not None:
            replace_file(path, html)  # a worker that loses the race to another wrote the same bytes
        return Markup(html)


_TAG = re.compile(r'<span class="[\w-]+">|</span>|[^<]+')


def numbered(html: str, prefix: str, marks: frozenset[int] = frozenset()) -> Markup:
    """`highlight_python`'s `<div class="hl"><pre>…</pre></div>` with each line in a `<span id="{prefix}{n}">`, and
    the lines in `marks` highlighted. Its spans never nest, so one that spans lines is closed and reopened."""
    head, _, rest = html.partition("<pre>")
    body, _, tail = rest.rpartition("</pre>")
    lines: list[list[str]] = [[]]
    open_tag = ""
    for m in _TAG.finditer(body):
        tok = m.group(0)
        if tok.startswith("<span"):
            open_tag = tok
            lines[-1].append(tok)
        elif tok == "</span>":
            open_tag = ""
            lines[-1].append(tok)
        else:
            parts = tok.split("\n")
            lines[-1].append(parts[0])
            for part in parts[1:]:
                if open_tag:
                    lines[-1].append("</span>")
                lines.append([open_tag, part] if open_tag else [part])
    if len(lines) > 1 and not "".join(lines[-1]).replace(open_tag, ""):
        lines.pop()  # the source's final newline ends its last line; it starts none
    out = [f'<span class="line{" hit" if n in marks else ""}" id="{prefix}{n}" data-n="{n}">{"".join(parts)}</span>'
           for n, parts in enumerate(lines, start=1)]
    return Markup(f'{head}<pre class="numbered">{chr(10).join(out)}</pre>{tail}')
