"""Kernel evolution inside a run: the successive kernels the agent sent to its tools, and their diffs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.records import Trace


@dataclass(frozen=True)
class Version:
    number: int  # 1-based, counting distinct kernels
    turn: int
    tools: list[tuple[str, bool | None, str]]  # (tool, ok, first line of its result) for every call with this code
    source: str
    added: int  # lines in this version and not in the previous one, counted as a multiset (the page's diff is drawn
    removed: int  # in the browser; a line diff here cost more than the rest of the page)

    @property
    def previous(self) -> int:
        return self.number - 1

    @property
    def has_previous(self) -> bool:
        """Whether there is an earlier version to diff against (the first has none)."""
        return self.number > 1


Send = tuple[int, int]  # (position of the turn in the trace, position of the call in the turn)


def version_of_sends(trace: Trace) -> tuple[dict[Send, int], list[str]]:
    """The one kernel-version rule, shared by the run page and its lazy chunk: the version number of every
    call that sends `kernel_code`, and each version's source (version n is index n - 1). Sending the code
    of the version just before continues it; any other code starts a new version, even one sent earlier:
    kernel A, then B, then A again is three versions, the third diffed against B."""
    numbers: dict[Send, int] = {}
    sources: list[str] = []
    for t, turn in enumerate(trace.turns):
        for c, call in enumerate(turn.calls):
            code = call.arguments.get("kernel_code")
            if isinstance(code, str):
                if not sources or sources[-1] != code:
                    sources.append(code)
                numbers[(t, c)] = len(sources)
    return numbers, sources


def kernel_versions(trace: Trace) -> list[Version]:
    """The versions (`version_of_sends`), each with the result of every call that sent it."""
    numbers, sources = version_of_sends(trace)
    versions: list[Version] = []
    for (t, c), n in numbers.items():
        turn = trace.turns[t]
        result = turn.calls[c].result
        first = result.text.strip().splitlines()[0][:200] if result and result.text.strip() else ""
        entry = (turn.calls[c].tool, result.ok if result else None, first)
        if n <= len(versions):
            versions[n - 1].tools.append(entry)
            continue
        code = sources[n - 1]
        old, new = Counter(sources[n - 2].splitlines() if n > 1 else []), Counter(code.splitlines())
        added, removed = (sum((new - old).values()), sum((old - new).values())) if n > 1 else (0, 0)
        versions.append(Version(n, turn.index, [entry], code, added, removed))
    return versions
