"""What our audit changes on a board (issue 42, item 4): the runs a board counts as correct under the rules that
scored them (`correct`: the replay of those rules, else our audit, else the harness's record) that our audit, the
strict re-validation, finds incorrect (`revalidated_correct`). A board counts runs as the benchmark did, so it can
be compared with a published one; these are the runs a strict view would drop, each with the cause the verdicts
disagree (`verdicts_cause`)."""

from __future__ import annotations

import pandas as pd

from .scope import PROBLEM_KEYS

MOVE_COLUMNS = ("run_id", "model", "level", "problem_id", "problem", "rules", "verdicts_cause_class", "verdicts_cause")


def audit_moves(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs counted correct that fail our audit, by model, then problem; also how many were audited at all
    (`audited`, in `DataFrame.attrs`), so a page can say "none of N" rather than nothing."""
    counted = runs["correct"].astype("boolean").fillna(False).astype(bool)
    audit = runs["revalidated_correct"].astype("boolean")
    moved = runs[counted & audit.eq(False).fillna(False).astype(bool)]
    keys = [k for k in ("model", *PROBLEM_KEYS, "run_id") if k in moved]
    out = moved.sort_values(keys, kind="stable")[[c for c in MOVE_COLUMNS if c in moved]].reset_index(drop=True)
    out.attrs["audited"] = int((counted & audit.notna()).sum())
    return out
