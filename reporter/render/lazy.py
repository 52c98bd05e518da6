"""The heavy half of a run page, loaded only when a reader expands a turn or a kernel version.

A run page carries each turn's summary line; the turn's reasoning, tool calls and results, and the full
source of every distinct kernel the agent sent, go into `runs/<slug>.turns.js`, one JSONP chunk per run:
`reporterChunk({...})`. A `<script src>` loads from `file://` where `fetch` is blocked, and from any
sub-path, since the page names the chunk relatively. The chunk is the only copy of that text on the site:
without JavaScript a reader sees each turn's summary line and a note saying the rest needs JavaScript.

Everything model-written is escaped here; the browser inserts the chunk's HTML as given.
"""

from __future__ import annotations

import json
import re
from html import escape

from ..core.records import ToolCall, Trace, Turn
from . import text
from .evolution import version_of_sends

CHUNK_CALLBACK = "reporterChunk"
_KERNEL_NAME = re.compile(r"__global__\s+(?:[\w:<>]+(?:\([^)]*\))?\s+)*?(?!__launch_bounds__)(\w+)\s*\(")


def kernel_names(source: str | None) -> list[str]:
    """Names of the CUDA kernels (`__global__` functions) a source defines, for search."""
    return sorted(set(_KERNEL_NAME.findall(source or "")))


def _call_html(call: ToolCall, version: int | None) -> str:
    tool = escape(call.tool)
    parts = [f'<div class="toolcall"><h4>call → {tool}</h4>']
    rest = {k: v for k, v in sorted(call.arguments.items()) if not (k == "kernel_code" and isinstance(v, str))}
    code = call.arguments.get("kernel_code")
    if isinstance(code, str) and version is not None:
        n = version
        lines = code.count("\n") + (0 if code.endswith("\n") else 1)
        parts.append(f'<div class="arg"><span class="argname">kernel_code</span> <a href="#version-{n}" '
                     f'data-version="{n}">kernel version {n}</a> ({lines} lines, shown under Kernel evolution)</div>')
    if rest:
        parts.append(f'<pre class="args">{escape(json.dumps(rest, indent=2, ensure_ascii=False), quote=False)}</pre>')
    elif not call.arguments:
        parts.append('<p class="note">no arguments</p>')
    if call.result is not None:
        state = "ok" if call.result.ok else "fail"
        parts.append(f'<div class="result {state}"><h4>result ← {tool} ({state})</h4>'
                     f'<div class="result-text">{text.plain(text.home_paths(call.result.text))}</div></div>')
    else:
        parts.append('<p class="note">no result recorded</p>')
    parts.append("</div>")
    return "".join(parts)


def turn_html(turn: Turn, versions: list[int | None]) -> str:
    """The expanded body of one turn: reasoning as its trace declares it (plain text unless markdown), then
    each call, with `versions[i]` the kernel version call i sends (None: none)."""
    out = [f'<div class="reasoning"><h4>reasoning</h4>{text.prose(turn.reasoning, turn.reasoning_format)}</div>'] \
        if turn.reasoning else []
    out.extend(_call_html(c, v) for c, v in zip(turn.calls, versions))
    return "".join(out)


def _turn_versions(numbers: dict[tuple[int, int], int], t: int, turn: Turn) -> list[int | None]:
    return [numbers.get((t, c)) for c in range(len(turn.calls))]


def chunk_js(trace: Trace) -> str:
    """The JSONP chunk of a run: `turns[i]` is turn i's HTML, `versions[n - 1]` kernel version n's source,
    numbered by the page's own rule (`evolution.version_of_sends`)."""
    numbers, versions = version_of_sends(trace)
    doc = {"turns": [turn_html(turn, _turn_versions(numbers, t, turn)) for t, turn in enumerate(trace.turns)],
           "versions": versions}
    # A run's reasoning is its own: text's caches would only hold memory from one run to the next.
    text.plain.cache_clear()
    text.markdown.cache_clear()
    return f"{CHUNK_CALLBACK}({json.dumps(doc, ensure_ascii=False, separators=(',', ':'))});\n"
