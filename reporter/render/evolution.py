"""Kernel evolution inside a run: the successive kernels the agent sent to its tools, and their diffs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..records import Trace


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


def kernel_versions(trace: Trace) -> list[Version]:
    """Distinct `kernel_code` arguments in call order; a resend of the same code adds its result to that version."""
    versions: list[Version] = []
    for turn in trace.turns:
        for call in turn.calls:
            code = call.arguments.get("kernel_code")
            if not isinstance(code, str):
                continue
            result = call.result
            first = result.text.strip().splitlines()[0][:200] if result and result.text.strip() else ""
            entry = (call.tool, result.ok if result else None, first)
            if versions and versions[-1].source == code:
                versions[-1].tools.append(entry)
                continue
            old, new = Counter(versions[-1].source.splitlines() if versions else []), Counter(code.splitlines())
            added, removed = (sum((new - old).values()), sum((old - new).values())) if versions else (0, 0)
            versions.append(Version(len(versions) + 1, turn.index, [entry], code, added, removed))
    return versions
