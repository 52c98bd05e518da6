"""Where every page lives. All paths are relative to the site root; pages link with a `rel` prefix.

Names come from traces (model names, run folders, problem files), so two different names can slugify
alike ("GPT 4", "gpt-4"): `unique_slugs` keeps such pages apart instead of letting one overwrite the other.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, TypeVar

from ..records import slugify

# Slugs are cut to this many characters before any suffix, so a page name stays far below 255 bytes.
MAX_SLUG = 80
GroupKey = tuple[str, str]  # (benchmark, configuration)
ProblemKey = tuple[int, int, str]  # (level, problem id, problem file or title)
K = TypeVar("K")


def _resolve(slugs: dict[K, str]) -> dict[K, str]:
    """Keep each proposed slug; where two keys propose the same (case-folded) slug, suffix a hash of the key."""
    by_slug: dict[str, list[K]] = defaultdict(list)
    for key, slug in slugs.items():
        by_slug[slug.lower()[:MAX_SLUG].rstrip("-.") or "x"].append(key)
    out: dict[K, str] = {}
    for slug, keys in by_slug.items():
        for key in keys:
            digest = hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).hexdigest()[:8]
            out[key] = slug if len(keys) == 1 else f"{slug}-{digest}"
    return out


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """A file-name-safe slug per distinct name; names whose slugs collide (case-folded) get a hash suffix."""
    return _resolve({n: slugify(n) for n in sorted(set(names))})


def _joined(parts: Iterable[str]) -> str:
    return "--".join(slugify(p) for p in parts)


@dataclass(frozen=True)
class Urls:
    """Page paths for one site, computed once from every name that appears in it."""

    runs: dict[str, str]  # run id -> slug
    groups: dict[GroupKey, str]
    models: dict[tuple[GroupKey, str], str]
    problems: dict[ProblemKey, str]

    @classmethod
    def build(cls, run_ids: Iterable[str], groups: Iterable[GroupKey], models: Iterable[tuple[GroupKey, str]],
              problems: Iterable[ProblemKey]) -> "Urls":
        return cls(runs=unique_slugs(run_ids),
                   groups=_resolve({g: _joined(g) for g in sorted(set(groups))}),
                   models=_resolve({m: _joined((*m[0], m[1])) for m in sorted(set(models))}),
                   problems=_resolve({p: f"l{p[0]}-p{p[1]}-{slugify(p[2].removesuffix('.py') or 'unnamed')}"
                                      for p in sorted(set(problems))}))

    def run(self, run_id: str) -> str:
        return f"runs/{self.runs[run_id]}.html"

    def download(self, run_id: str, what: str) -> str:
        """A run's downloadable source (`kernel` or `reference`), beside its page."""
        return f"runs/{self.runs[run_id]}.{what}.py"

    def group(self, key: GroupKey) -> str:
        return f"variants/{self.groups[key]}.html"

    def leaderboard(self, key: GroupKey) -> str:
        return f"leaderboards/{self.groups[key]}.html"

    def grid(self, key: GroupKey) -> str:
        return f"grids/{self.groups[key]}.html"

    def model(self, key: GroupKey, model: str) -> str:
        return f"models/{self.models[(key, model)]}.html"

    def problem(self, key: ProblemKey) -> str:
        return f"problems/{self.problems[key]}.html"
