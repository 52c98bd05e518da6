"""The site's numbers across runs, as pandas group-bys over `reporter.load(DATA)`.

Leaderboards (fast_p, geometric mean, denominators, re-validated counts), the problem × model grid and
per-problem comparisons. The renderer calls these functions and notebook users can too, so a page and
a notebook never disagree. Rules, once:

- Only complete runs with a level and a problem take part (`comparable`).
- A model that attempted a problem several times counts once, by its best run: correct first, then fastest.
- fast_p follows KernelBench: over ALL attempted problems, the share whose kernel is correct and whose
  speedup is strictly greater than p. fast_0 is the correctness rate only where every correct run has
  a speedup; a correct run with unknown speedup is attempted and correct but never "fast".
- The geometric mean covers correct runs with a known speedup; its `geomean_n` says how many.
- `speedup` is our re-validation's where one exists, else the recorded one (`speedup_source`), and null for
  a kernel that is incorrect, failed or excluded (`checks.speedup_reported`).
  `revalidated_only=True` keeps only re-validated runs and their own verdicts and speedups.
- `basis` picks the timing basis (device, graph or wall; default device, the one that repeats). A
  re-validated run takes kernel_ms, ref_ms and speedup on that basis; where it has no figure there (a
  call that was not capturable as a CUDA graph) its speedup is unknown: correct but never "slower", never
  counting. A run we did not re-validate keeps its recorded figures, whatever the basis.
- A run counts towards fast_p and the geomean when it is correct, not excluded and has a real speedup
  (finite, above 0) that is not a recorded one against a reference timed on another GPU (`baseline_other_gpu`:
  shown and flagged, never counted; our re-validation times both on one GPU). `exclude` names a boolean
  column, by default `suspect` (an error-level cheat finding, static or measured, that no reviewer cleared,
  or a reviewer's reward-hack verdict): those runs stay
  attempted (in the denominator) but never count; `reward_hacks` counts a group's runs reviewed as hacks.
  `exclude=None` counts them; `fast_<p>_with_suspects` and `geomean_with_suspects` are the board's figures with
  them counted, as KernelBench's own scoring (which has no cheat checks) would give them.
- Rows are ranked by `RANK_RULE`: the exact fast_1 share, then the geomean as the pages print it; rows that
  read the same share a `rank` and are listed by model name.
"""

from __future__ import annotations

from ..core.vocab import MISSING_KEY
from .board import COUNT_COLUMNS, RANK_RULE, board_table, leaderboard
from .denominators import denominators, recorded_problems
from .grid import STATES, counts, grid, grid_table, problems, states
from .moves import audit_moves
from .scope import (
    DEFAULT_BASIS,
    DEFAULT_EXCLUDE,
    FAST_P,
    LEADERBOARD_KEYS,
    PROBLEM_KEYS,
    best_per_problem,
    comparable,
    fast_column,
    on_basis,
    scoped,
    scopes,
)

__all__ = [
    "COUNT_COLUMNS",
    "DEFAULT_BASIS",
    "DEFAULT_EXCLUDE",
    "FAST_P",
    "LEADERBOARD_KEYS",
    "MISSING_KEY",
    "PROBLEM_KEYS",
    "RANK_RULE",
    "STATES",
    "audit_moves",
    "best_per_problem",
    "board_table",
    "comparable",
    "counts",
    "denominators",
    "fast_column",
    "grid",
    "grid_table",
    "leaderboard",
    "on_basis",
    "problems",
    "recorded_problems",
    "scoped",
    "scopes",
    "states",
]
