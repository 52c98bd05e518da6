"""The site-wide run index: compact rows for client-side sorting and filtering, and prebuilt search indexes,
sharded by model so that a change to one run rewrites one shard.

`search-index.js`, the manifest, is `reporterIndex({fields, search, shards})`: the row fields, the
searched fields and the shard files. It changes only when the set of shards does. Each shard
`search/<model slug>.js` is `reporterShard({shard, rows, index})`: one short array per run of that model
(ROW_FIELDS, in page order; `order` is the page order as a list the browser compares part by part, so
rows from many shards merge into the order of the listing pages) and a MiniSearch index of those rows
(static/minisearch.js, vendored from npm with its licence), serialised here in MiniSearch's own `toJSON`
format (serializationVersion 2), so the browser loads it with `MiniSearch.loadJS` instead of indexing
10,000 runs on every visit. Terms are cut the way MiniSearch's default tokenizer cuts them (runs of
spaces, line breaks and punctuation) and lower-cased. Runs with no recorded model share one shard.

Everything is JSONP loaded by script tags (no fetch, so the site works from file://). The payload is
`json.dumps` output, which is a JavaScript expression; in a file loaded by `src` (never inline) no text
inside a string can end the script.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.names import unique_slugs
from ..core.vocab import spelled

SEARCH_FIELDS = ("problem", "model", "kernels", "verdict")
ROW_FIELDS = ("href", "title", "problem", "model", "group", "verdict", "source", "speedup", "flags", "kernels", "order")
INDEX_CALLBACK = "reporterIndex"
SHARD_CALLBACK = "reporterShard"
MANIFEST = "search-index.js"
SHARD_DIR = "search"


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
    order: tuple[int | str, ...] = ()  # the run's place in page order (`RunDigest.order`), flat

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


@dataclass(frozen=True)
class Shard:
    """One model's rows. `key` names everything its file is made from, so a build keeps an unchanged
    shard's file from the live site without indexing its rows again."""

    path: str
    rows: tuple[IndexRow, ...]
    key: str

    def text(self) -> str:
        return _jsonp(SHARD_CALLBACK, {"shard": self.path, "rows": [r.as_list() for r in self.rows],
                                       "index": minisearch_index(list(self.rows))})


def _jsonp(callback: str, doc: dict[str, Any]) -> str:
    return f"{callback}({json.dumps(doc, ensure_ascii=False, separators=(',', ':'))});\n"


@lru_cache(maxsize=1)
def _code() -> str:
    # This module writes the shards: a change to it (the tokenizer, the format) makes every shard again.
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def shards(rows: Iterable[tuple[str, IndexRow]], inputs: str = "") -> list[Shard]:
    """`rows` as (model, row) in page order (model MISSING_KEY: none recorded), one shard per model, sorted
    by path; the file names are the models' slugs, unique among them. `inputs` names what else the
    files depend on: the build's global hash (reporter version, static files, redaction settings)."""
    by_model: dict[str, list[IndexRow]] = {}
    for model, row in rows:
        by_model.setdefault(model, []).append(row)
    slugs = unique_slugs(by_model, shown=spelled)
    out = []
    for model, members in by_model.items():
        path = f"{SHARD_DIR}/{slugs[model]}.js"
        blob = json.dumps([_code(), inputs, path, [r.as_list() for r in members]])
        out.append(Shard(path, tuple(members), hashlib.sha256(blob.encode()).hexdigest()))
    return sorted(out, key=lambda shard: shard.path)


def manifest_js(shards: list[Shard]) -> str:
    """The manifest: the row fields, the searched fields and every shard (it changes only with the set of shards)."""
    return _jsonp(INDEX_CALLBACK, {"fields": list(ROW_FIELDS), "search": list(SEARCH_FIELDS),
                                   "shards": [shard.path for shard in shards]})
