"""Where every page lives. All paths are relative to the site root; pages link with a `rel` prefix.

Names come from traces (model names, run folders, problem files), so two different names can slugify
alike ("GPT 4", "gpt-4"): `names.unique_slugs` keeps such pages apart instead of letting one overwrite
the other. Slugs are computed once per site from every name in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.names import unique_slugs
from ..core.vocab import spelled

GroupKey = tuple[str, str]  # (benchmark, configuration)
ProblemKey = tuple[int, int, str]  # (level, problem id, problem file or title)


def _composite(keys: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Slugs for composite keys (tuples, never joined strings): the whole key is unique, parts joined
    with `--` in the slug, a missing part spelled "unknown" but kept apart from a recorded "unknown"."""
    return unique_slugs(set(keys), shown=spelled)


@dataclass(frozen=True)
class Urls:
    """Page paths for one site, computed once from every name that appears in it."""

    runs: dict[str, str]  # run id -> slug
    groups: dict[GroupKey, str]
    models: dict[tuple[GroupKey, str], str]
    problems: dict[ProblemKey, str]

    @classmethod
    def build(cls, run_ids: Iterable[str], groups: Iterable[GroupKey], models: Iterable[tuple[GroupKey, str]],
              problems: Iterable[ProblemKey]) -> Urls:
        # Sorted, so the maps' order (and anything hashed or listed from them) is the same in every process:
        # a set's order of strings changes with Python's hash seed.
        models = sorted(set(models), key=repr)
        # A problem is named without its ".py", unless that makes two of them one (`19_ReLU.py`, `19_ReLU`): those
        # keep their whole names, so each has its own page.
        short = {p: (f"l{p[0]}-p{p[1]}", p[2].removesuffix(".py") or "unnamed") for p in sorted(set(problems), key=repr)}
        shared = {n for n, k in Counter(short.values()).items() if k > 1}
        problem_names = {p: (n[0], p[2] or "unnamed") if n in shared else n for p, n in short.items()}
        by_name = _composite(problem_names.values())
        model_slugs = _composite((*g, m) for g, m in models)
        groups_slugs = _composite(set(groups))
        return cls(runs=dict(sorted(unique_slugs(run_ids).items())),
                   groups={k: groups_slugs[k] for k in sorted(groups_slugs, key=repr)},  # type: ignore[misc]
                   models={(g, m): model_slugs[(*g, m)] for g, m in models},
                   problems={p: by_name[n] for p, n in problem_names.items()})

    def run(self, run_id: str) -> str:
        return f"runs/{self.runs[run_id]}.html"

    def download(self, run_id: str, what: str) -> str:
        """A run's downloadable source (`kernel` or `reference`), beside its page."""
        return f"runs/{self.runs[run_id]}.{what}.py"

    def kernel_chunk(self, run_id: str) -> str:
        """A run's final kernel as a script chunk, for problem pages' side-by-side comparison."""
        return f"runs/{self.runs[run_id]}.kernel.js"

    def group(self, key: GroupKey) -> str:
        return f"variants/{self.groups[key]}.html"

    def leaderboard(self, key: GroupKey) -> str:
        return f"leaderboards/{self.groups[key]}.html"

    def cross_gpu(self) -> str:
        """The board ranking models by fraction of speed of light across GPUs (`aggregates.sol`)."""
        return "cross-gpu.html"

    def grid(self, key: GroupKey) -> str:
        return f"grids/{self.groups[key]}.html"

    def model(self, key: GroupKey, model: str) -> str:
        return f"models/{self.models[(key, model)]}.html"

    def problem(self, key: ProblemKey) -> str:
        return f"problems/{self.problems[key]}.html"
