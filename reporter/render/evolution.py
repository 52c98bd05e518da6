"""Kernel evolution inside a run: the successive kernels the agent sent to its tools, and their diffs."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..records import Trace


@dataclass(frozen=True)
class Version:
    number: int  # 1-based, counting distinct kernels
    turn: int
    tools: list[tuple[str, bool | None, str]]  # (tool, ok, first line of its result) for every call with this code
    source: str
    diff: str  # unified diff against the previous distinct version ("" for the first)
    added: int
    removed: int

    @property
    def previous(self) -> int:
        return self.number - 1


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
            prev = versions[-1].source if versions else None
            diff = "" if prev is None else "".join(difflib.unified_diff(
                prev.splitlines(keepends=True), code.splitlines(keepends=True),
                f"version {len(versions)}", f"version {len(versions) + 1}", n=2))
            added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
            removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
            versions.append(Version(len(versions) + 1, turn.index, [entry], code, diff, added, removed))
    return versions
