"""Turn untrusted trace text into safe HTML, and numbers into fixed-format strings.

Model-written text is shown as what the model wrote: escaped plain text with its line breaks, fenced
code blocks as code (`plain`), tagged with their fence's language and highlighted in the reader's browser
when the turn is shown (`static/lazy.js`, highlight.js): a build spends no time highlighting reasoning. Markdown is rendered only for fields a trace declares as
markdown (`markdown`), with raw HTML off, emphasis only at word boundaries, then nh3 sanitising; only
the sanitised result is marked safe for the (autoescaping) templates.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markupsafe import Markup, escape

from .numbers import DASH, num, speedup, time_ms

__all__ = ["DASH", "home_paths", "json_args", "markdown", "ms", "num", "pygments_css", "speedup", "words"]

# A user's home or scratch folder at the start of a path in a log (a compiler's, the validator's): shown as
# `~`, so a published page does not name the people or machines that ran the build.
_HOME = re.compile(r"(?<![\w.~/-])(?:/(?:home|scratch|Users)/[^/\s'\"`:;,()\[\]]+|/root)(?=/|(?![\w.-]))")


def home_paths(log: str) -> str:
    """`log` with `/home/<name>`, `/scratch/<name>`, `/Users/<name>` and `/root` shown as `~`."""
    return _HOME.sub("~", log)


_SPACES = re.compile(r"(\s+)")


def words(value: object) -> Markup:
    """`value` escaped, each hyphenated word in a `.w` span (an inline block): a line breaks before
    "example-sweep" rather than after "example-", and a word wider than its box still wraps inside it."""
    return Markup("").join(Markup('<span class="w">{}</span>').format(part) if "-" in part else escape(part)
                           for part in _SPACES.split(str(value)))


_TAGS = set(nh3.ALLOWED_TAGS)
_ATTRS = {k: set(v) for k, v in nh3.ALLOWED_ATTRIBUTES.items()}
for _tag in ("span", "code", "pre", "div"):
    _ATTRS.setdefault(_tag, set()).add("class")


# The languages a fence may name (highlight.js's common set with its aliases, and CUDA, which the browser
# highlights as C++). A fence at the start of a line takes any word as its language; one inside a line
# only these, since there the word after the backticks may as well be code.
FENCE_LANGUAGES = frozenset({
    "bash", "c", "c#", "c++", "cc", "cjs", "console", "cpp", "cs", "csharp", "css", "cts", "cu", "cuda", "cuh",
    "cxx", "diff", "go", "golang", "graphql", "h", "h++", "hh", "hpp", "html", "hxx", "ini", "java", "javascript",
    "js", "json", "json5", "jsonc", "jsx", "kotlin", "kt", "less", "lua", "make", "makefile", "markdown", "md",
    "mjs", "mk", "objc", "objectivec", "patch", "perl", "php", "plaintext", "pl", "py", "pycon", "python",
    "python-repl", "r", "rb", "ruby", "rs", "rust", "scss", "sh", "shell", "shellsession", "sql", "swift", "text",
    "toml", "ts", "tsx", "txt", "typescript", "vb", "vbnet", "wasm", "xml", "yaml", "yml", "zsh"})


def code_block(body: str, lang: str) -> str:
    """A fenced block as the browser highlights it: escaped text in `<pre><code>`, its language as a
    `language-X` class (none: detected in the browser). The `hl` box is the one kernel sources use."""
    tag = f' class="language-{escape(lang)}"' if lang else ""
    return f'<div class="hl"><pre><code{tag}>{escape(body)}</code></pre></div>'


# Emphasis needs word boundaries: `4*24*96` and `ModelNew.__init__` stay literal. A marker run opens
# only after whitespace or an opening bracket/quote, and closes only before whitespace or punctuation.
_OPEN_AFTER = set("([{\"'")
_CLOSE_BEFORE = set(".,;:!?)]}\"'")


def _bounded_emphasis(state: StateInline, silent: bool) -> bool:
    start, marker = state.pos, state.src[state.pos]
    if silent or marker not in ("_", "*"):
        return False
    end = start
    while end < state.posMax and state.src[end] == marker:
        end += 1
    before = state.src[start - 1] if start > 0 else " "
    after = state.src[end] if end < state.posMax else " "
    can_open = not after.isspace() and (before.isspace() or before in _OPEN_AFTER)
    can_close = not before.isspace() and (after.isspace() or after in _CLOSE_BEFORE)
    for _ in range(end - start):
        token = state.push("text", "", 0)
        token.content = marker
        state.delimiters.append(Delimiter(marker=ord(marker), length=end - start, token=len(state.tokens) - 1,
                                          end=-1, open=can_open, close=can_close))
    state.pos = end
    return True


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("js-default", {"html": False}).enable("table")  # fences: <pre><code class="language-X">
    md.inline.ruler.at("emphasis", _bounded_emphasis)
    return md


@lru_cache(maxsize=1024)
def markdown(text: str) -> Markup:
    """Text a trace declares as markdown, as HTML: no raw HTML, no javascript: links, sanitised."""
    html = _md().render(text)
    return Markup(nh3.clean(html, tags=_TAGS, attributes=_ATTRS, url_schemes={"http", "https", "mailto"}))


_TICKS = re.compile(r"`{3,}")
_LANG = re.compile(r"[\w+#.-]+")


def _fence_at(text: str, start: int, ticks: str) -> tuple[int, str, str] | None:
    """(end, language, code) of the fenced block whose opening backticks are at `start`, or None if none is.

    A fence at the start of a line takes its language from the rest of that line and runs to the next
    run of as many backticks, or to the end. Harness captures often flatten newlines to spaces, so a
    fence inside a line counts too, but only with a closing run: "```cuda __global__ void k() ```".
    """
    after = start + len(ticks)
    close = text.find(ticks, after)
    eol = text.find("\n", after)
    if eol >= 0 and text[text.rfind("\n", 0, start) + 1:start].strip(" ") == "":
        info = text[after:eol].strip()
        lang = _LANG.match(info)
        body_end = close if close >= 0 else len(text)
        return (body_end + len(ticks) if close >= 0 else len(text), lang.group().lower() if lang else "",
                text[eol + 1:body_end])
    if close < 0:
        return None
    body = text[after:close]
    lang = _LANG.match(body)
    named = lang.group().lower() if lang and body[lang.end():lang.end() + 1].isspace() else ""
    if named in FENCE_LANGUAGES and lang:
        return close + len(ticks), named, body[lang.end():].strip()
    return close + len(ticks), "", body.strip()


@lru_cache(maxsize=1024)
def plain(text: str) -> Markup:
    """Model-written text as written: escaped, line breaks kept (CSS pre-wrap), fenced code as code blocks.

    Nothing else is interpreted: `*`, `_`, `#` and links stay the characters the model wrote.
    """
    parts: list[str] = []
    pos = search = 0
    while (m := _TICKS.search(text, search)) is not None:
        fence = _fence_at(text, m.start(), m.group())
        if fence is None:
            search = m.end()
            continue
        end, lang, body = fence
        if text[pos:m.start()].strip():
            parts.append(f'<div class="plain">{escape(text[pos:m.start()].strip(chr(10)))}</div>')
        parts.append(code_block(body, lang))
        pos = search = end
    if text[pos:].strip():
        parts.append(f'<div class="plain">{escape(text[pos:].strip(chr(10)))}</div>')
    return Markup("".join(parts))


def prose(text: str, fmt: str | None) -> Markup:
    """A field rendered the way its trace declares: markdown only when it says so, else plain text."""
    return markdown(text) if fmt == "markdown" else plain(text)


def pygments_css() -> str:
    """The colours of kernel sources highlighted at build time (`highlight.py` uses Pygments' class names)."""
    from pygments.formatters import HtmlFormatter
    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def ms(value: float | None) -> str:
    """A time in ms for a page; kept under its old name for templates (the format lives in `numbers`)."""
    return time_ms(value)


def json_args(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True)
