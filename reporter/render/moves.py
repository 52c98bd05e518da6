"""The board's list of what our audit changes (`aggregates.moves`): the runs counted correct under the rules that
scored them that fail our strict re-validation, each linked, with the rule set and the cause, as the page shows it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .. import aggregates as ag
from ..core.vocab import MISSING_KEY, shown
from .urls import Urls


@dataclass(frozen=True)
class AuditMove:
    model: str
    problem: str  # "L1 · P12"
    href: str
    rules: str  # the rule set it counts under
    cause: str  # why the two verdicts differ ("passes at 0.01, fails at 0.0001: ..."), or what class of cause


@dataclass(frozen=True)
class AuditMoves:
    rows: tuple[AuditMove, ...]
    audited: int  # counted runs our audit judged: "none of N" when no row moved

    @property
    def sentence(self) -> str:
        if not self.audited:
            return ""
        if not self.rows:
            return (f"Every one of the {self.audited} counted runs our audit judged also passes it (strict rules, "
                    "docs/validation.md): a strict view would count the same runs.")
        n = len(self.rows)
        return (f"{n} run{'s' if n != 1 else ''} counted correct here under the rules that scored {'them' if n != 1 else 'it'} "
                f"fail{'' if n != 1 else 's'} our audit (strict rules, docs/validation.md), of {self.audited} counted runs "
                f"it judged: a strict view would drop {'them' if n != 1 else 'it'} from fast_p and the geomean.")


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA else str(value)


def audit_view(runs: pd.DataFrame, urls: Urls) -> AuditMoves:
    moved = ag.audit_moves(runs)
    rows = tuple(AuditMove(shown(_text(r["model"]) or MISSING_KEY), f"L{int(r['level'])} · P{int(r['problem_id'])}",
                           urls.run(str(r["run_id"])), _text(r["rules"]) or "—",
                           _text(r["verdicts_cause"]) or _text(r["verdicts_cause_class"]) or "not named")
                 for _, r in moved.iterrows())
    return AuditMoves(rows, int(moved.attrs.get("audited", 0)))
