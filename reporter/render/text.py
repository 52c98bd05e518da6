"""Turn untrusted trace text into safe HTML, and numbers into fixed-format strings.

Defence in depth for model-written text: markdown with raw HTML off, then nh3 sanitising, and only
the sanitised result is marked safe for the (autoescaping) templates.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from .numbers import DASH, num, speedup, time_ms

__all__ = ["DASH", "code", "json_args", "markdown", "ms", "num", "pygments_css", "speedup"]

_TAGS = set(nh3.ALLOWED_TAGS)
_ATTRS = {k: set(v) for k, v in nh3.ALLOWED_ATTRIBUTES.items()}
for _tag in ("span", "code", "pre", "div"):
    _ATTRS.setdefault(_tag, set()).add("class")


def _fence(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang or "text")
    except ClassNotFound:
        return ""  # markdown-it escapes the text itself
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("js-default", {"html": False, "highlight": _fence}).enable("table")


@lru_cache(maxsize=1024)
def markdown(text: str) -> Markup:
    """Model reasoning as HTML: no raw HTML, no javascript: links, sanitised."""
    html = _md().render(text)
    return Markup(nh3.clean(html, tags=_TAGS, attributes=_ATTRS, url_schemes={"http", "https", "mailto"}))


# Agents resend the same kernel to several tools, and pages repeat it (evolution, final kernel):
# highlighting is the slowest part of a build, so identical inputs are highlighted once.
@lru_cache(maxsize=1024)
def code(source: str, lang: str = "python", anchor: str | None = None) -> Markup:
    """Highlighted source with line numbers; Pygments escapes every token."""
    try:
        lexer = get_lexer_by_name(lang)
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    fmt = HtmlFormatter(cssclass="hl", linenos="table" if anchor else False, lineanchors=anchor or "", anchorlinenos=bool(anchor))
    return Markup(highlight(source, lexer, fmt))


def pygments_css() -> str:
    light = HtmlFormatter(style="default").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def ms(value: float | None) -> str:
    """A time in ms for a page; kept under its old name for templates (the format lives in `numbers`)."""
    return time_ms(value)


def json_args(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True)
