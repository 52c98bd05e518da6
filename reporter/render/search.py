"""The site-wide run index: compact rows for client-side sorting and filtering, and a prebuilt search index.

`search-index.js` is one JSONP file, `reporterIndex({rows, index})`. `rows` holds one short array per run
(ROW_FIELDS); `index` is a MiniSearch index (static/minisearch.js, vendored from npm with its licence)
serialised here in MiniSearch's own `toJSON` format (serializationVersion 2), so the browser loads it
with `MiniSearch.loadJS` instead of indexing 10,000 runs on every visit. Terms are cut the way
MiniSearch's default tokenizer cuts them (runs of spaces, line breaks and punctuation) and lower-cased.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SEARCH_FIELDS = ("problem", "model", "kernels", "verdict")
ROW_FIELDS = ("href", "title", "problem", "model", "group", "verdict", "source", "speedup", "flags", "kernels")
INDEX_CALLBACK = "reporterIndex"


@dataclass(frozen=True)
class IndexRow:
    """What the run index knows of one run (≈200 bytes)."""

    href: str
    title: str
    problem: str
    model: str
    group: str
    verdict: str
    source: str  # re-validated | recorded | partial
    speedup: float | None
    flags: int
    kernels: str  # CUDA kernel names, space-separated

    def as_list(self) -> list[Any]:
        return [getattr(self, f) for f in ROW_FIELDS]


def _splits(ch: str) -> bool:
    # MiniSearch cuts at /[\n\r\p{Z}\p{P}]+/u; Python's re has no \p{..}, so ask Unicode directly.
    return ch in "\n\r" or unicodedata.category(ch)[0] in "ZP"


@lru_cache(maxsize=65536)
def tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    cur: list[str] = []
    for ch in text:
        if _splits(ch):
            if cur or not out:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return tuple(out)


def minisearch_index(rows: list[IndexRow]) -> dict[str, Any]:
    """The MiniSearch index of `rows` (document id = row number), as `MiniSearch#toJSON` would write it."""
    field_ids = {f: i for i, f in enumerate(SEARCH_FIELDS)}
    index: dict[str, dict[int, dict[int, int]]] = {}
    lengths: dict[str, list[int]] = {}
    totals = [0.0] * len(SEARCH_FIELDS)
    for doc, row in enumerate(rows):
        per_field = []
        for field, fid in field_ids.items():
            toks = tokens(str(getattr(row, field)))
            per_field.append(len(set(toks)))
            for tok in toks:
                term = tok.lower()
                if term:
                    freqs = index.setdefault(term, {}).setdefault(fid, {})
                    freqs[doc] = freqs.get(doc, 0) + 1
        lengths[str(doc)] = per_field
        for i, n in enumerate(per_field):
            totals[i] += n
    n_docs = len(rows)
    return {"documentCount": n_docs, "nextId": n_docs, "documentIds": {str(i): i for i in range(n_docs)},
            "fieldIds": field_ids, "fieldLength": lengths,
            "averageFieldLength": [t / n_docs if n_docs else 0 for t in totals], "storedFields": {}, "dirtCount": 0,
            "index": [[term, {str(f): {str(d): c for d, c in docs.items()} for f, docs in fields.items()}]
                      for term, fields in sorted(index.items())],
            "serializationVersion": 2}


def index_js(rows: list[IndexRow]) -> str:
    doc = {"fields": list(ROW_FIELDS), "search": list(SEARCH_FIELDS), "rows": [r.as_list() for r in rows],
           "index": minisearch_index(rows)}
    return f"{INDEX_CALLBACK}({json.dumps(doc, ensure_ascii=False, separators=(',', ':'))});\n"
