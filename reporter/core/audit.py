"""What the user tells the pages about audits and cost (`[tool.reporter.audit]`, `[tool.reporter.prices]`), as one
frozen record the build hands the renderer (and hashes: a changed price or rule makes the boards again)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# "Audit pending": a board's top rows (by rank) whose counting runs a reviewer has not all judged. The default of
# `[tool.reporter.audit] pending_top`: kernelbench.com publishes a headline result only after a human audit.
PENDING_TOP = 3


@dataclass(frozen=True)
class PageOptions:
    pending_top: int = PENDING_TOP
    prices: tuple[tuple[str, float], ...] = ()  # (model, US dollars per million tokens), sorted by model

    def price(self, model: str) -> float | None:
        return dict(self.prices).get(model)

    def to_json(self) -> dict[str, Any]:
        return {"pending_top": self.pending_top, "prices": [list(p) for p in self.prices]}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> PageOptions:
        if not doc:
            return cls()
        return cls(int(doc["pending_top"]), tuple(sorted((str(m), float(p)) for m, p in doc["prices"])))


DEFAULT_OPTIONS = PageOptions()
