"""Two kernels of one problem side by side: the problem page's data, and each kernel's source chunk.

A run page writes its final kernel as `runs/<slug>.kernel.js`, a `<script src>` chunk calling
`reporterKernel(key, source)` (file:// blocks fetch, but not a script), so the problem page loads only
the two sources a reader picks. static/compare.js draws them and their diff (static/diff.js).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .urls import Urls

CHUNK_CALLBACK = "reporterKernel"


def kernel_chunk_js(key: str, source: str) -> str:
    """The chunk of one final kernel (already redacted, as its download is)."""
    return f"{CHUNK_CALLBACK}({json.dumps(key)}, {json.dumps(source, ensure_ascii=False)});\n"


@dataclass(frozen=True)
class CompareChoice:
    """One kernel a reader can pick, on either side; `left`/`right` mark the two shown first."""

    key: str
    chunk: str  # relative to the site root
    label: str
    left: bool
    right: bool


def choices(entries: Sequence[tuple[str, str, str, str]], urls: Urls) -> tuple[CompareChoice, ...]:
    """(run id, model, group, verdict) of each run with a final kernel, in page order: the first two are shown."""
    return tuple(CompareChoice(urls.runs[run_id], urls.kernel_chunk(run_id), f"{model} · {group} · {verdict.replace('_', ' ')}",
                               i == 0, i == 1) for i, (run_id, model, group, verdict) in enumerate(entries))
