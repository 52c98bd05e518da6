"""Helpers of build_speed.py: a run page's visible text, and a trace as one MkDocs markdown page."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


class _Text(HTMLParser):
    """Text a reader sees with every <details> open: all text outside <script>, <style> and <head>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head") and self.hidden:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_text(markup: str) -> str:
    p = _Text()
    p.feed(markup)
    p.close()
    return "".join(p.parts)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def expanded_text_bytes(page: Path, chunks: list[Path]) -> int:
    """UTF-8 bytes of the visible text of a page and of its JSONP chunks (`callback(<json>, ...)`), as HTML."""
    total = len(html_text(page.read_text(encoding="utf-8")).encode())
    for chunk in chunks:
        body = chunk.read_text(encoding="utf-8")
        payload = json.loads("[" + body[body.index("(") + 1: body.rindex(")")] + "]")  # every argument
        total += sum(len(html_text(s).encode()) for s in _strings(payload))
    return total


def to_markdown(trace: dict[str, Any], name: str) -> str:
    """The same content a run page shows, as MkDocs would get it: reasoning as text, code fenced."""
    run = trace.get("run", {})
    out = [f"# {name}\n", f"{run.get('model')} · {run.get('benchmark')} · {run.get('configuration')} · "
                          f"{run.get('problem_file')} · {run.get('recorded_verdict')}\n"]
    if trace.get("reference_source"):
        out.append(f"## Reference\n\n```python\n{trace['reference_source']}\n```\n")
    for turn in trace.get("turns", []):
        out.append(f"## Turn {turn.get('index')}\n\n{turn.get('reasoning') or ''}\n")
        for call in turn.get("calls", []):
            out.append(f"### {call.get('tool')}\n")
            code = call.get("arguments", {}).get("kernel_code")
            if isinstance(code, str):
                out.append(f"```python\n{code}\n```\n")
            result = call.get("result") or {}
            if result.get("text"):
                out.append(f"```text\n{result['text']}\n```\n")
    if trace.get("final_kernel"):
        out.append(f"## Final kernel\n\n```python\n{trace['final_kernel']['source']}\n```\n")
    return "\n".join(out)
