"""A run's digest: everything any page, table or index above the run pages needs of one run.

A worker process makes it once per changed trace (`make`); the build status keeps it (`to_json`,
`from_json`: its one serialised form) and hands it back for unchanged runs, so the parent never parses a
trace it has read before. Listing pages, leaderboards, grids, the search index, `runs.csv` and
`reporter.load` are all drawn from digests, so they cannot disagree. A digest holds only tuples and
frozen records: it is immutable, and it pickles to the parent as it is.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..collect.traces import RunRecord
from ..collect.validation import CachedValidation, redactions
from ..core.checks import Flag
from ..core.errors import Problem, ProblemKind
from ..core.vocab import MISSING_KEY, Source, shown
from ..runrow import RunRow
from . import lazy
from .revalidation import validation_view
from .runpage import group_label
from .search import IndexRow
from .summary import RunSummary, group_key, problem_key, run_summary, title
from .urls import Urls

Row = tuple[tuple[str, Any], ...]  # the runs table's row (`frames.run_row`), as (column, JSON value) pairs


@dataclass(frozen=True)
class RunDigest:
    run_id: str
    path: str  # the trace, relative to DATA
    slug: str
    key: tuple[str, str]  # (benchmark, configuration), MISSING_KEY where not recorded
    model: str  # the model, MISSING_KEY where not recorded
    recorded_model: str | None  # the model as the trace has it (listing rows show "—" for none)
    problem: tuple[int, int, str] | None  # (level, problem id, file) of a complete run
    level: int | None
    problem_id: int | None
    title: str
    problem_name: str  # the problem file, else the trace's title, else the run id (the search index's)
    sub: str  # the problem file, else the run id (a listing row's second line)
    flags: tuple[Flag, ...]
    summary: RunSummary
    kernels: str  # CUDA kernel names in the final kernel, space-separated
    has_kernel: bool
    row: Row | None  # None: reporter failed on this run's row, so it is left out of the tables (warned)
    redactions: tuple[tuple[str, int], ...]  # secrets redacted for its pages, by kind
    cached: str | None  # the cached re-validation result shown, for -v
    problems: tuple[tuple[str, str, str, ProblemKind], ...]  # (path, field, message, kind): files of this run not used
    work: str | None = None  # the reference's work count (`core.work.WorkCount.to_json`), for its problem page

    def order(self) -> tuple[int | str, ...]:
        """The page order of runs: group (named ones first), model, level, problem, run id. Flat, with
        numbers and strings at fixed places, so the search page sorts rows of many shards by it too."""
        (bench, config), missing = self.key, MISSING_KEY
        return (int(bench == missing), bench, int(config == missing), config, self.recorded_model or "~",
                self.level or 99, self.problem_id or 10**6, self.run_id)

    def table_row(self) -> RunRow:
        """The run's table row with every column (`frames.run_row` leaves out those it has nothing for): unknown is None."""
        from ..frames import COLUMNS
        return cast(RunRow, {**dict.fromkeys(COLUMNS), **dict(self.row or ())})

    def index_row(self, urls: Urls) -> IndexRow:
        s = self.summary
        return IndexRow(urls.run(self.run_id), self.title, self.problem_name, shown(self.model), group_label(self.key),
                        s.verdict, s.verdict_source, s.speedup_value, s.flags, self.kernels, self.order())

    def problem_list(self) -> list[Problem]:
        return [Problem(*p) for p in self.problems]

    def to_json(self) -> dict[str, Any]:
        # By hand, not `dataclasses.asdict`: every build hashes every digest and the status stores them all,
        # and asdict's deep copy of each row cost about 10 ms per run (a quarter of a one-run rebuild at
        # 200 runs). Only `flags` and `summary` hold records; the tuples are written as JSON lists alike.
        doc = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        doc["flags"] = [dataclasses.asdict(f) for f in self.flags]
        doc["summary"] = dataclasses.asdict(self.summary)
        doc["row"] = None if self.row is None else dict(self.row)
        doc["redactions"] = dict(self.redactions)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RunDigest:
        s = dict(doc["summary"])
        s["runtime_flag"] = Flag(**s["runtime_flag"]) if s["runtime_flag"] else None
        s["verdict_source"] = Source(s["verdict_source"])
        s["caveats"] = tuple(s.get("caveats", ()))
        row = doc["row"]
        return cls(**{**doc, "key": tuple(doc["key"]), "problem": tuple(doc["problem"]) if doc["problem"] else None,
                      "flags": tuple(Flag(**f) for f in doc["flags"]), "summary": RunSummary(**s),
                      "row": None if row is None else tuple(row.items()),
                      "redactions": tuple((k, int(n)) for k, n in doc["redactions"].items()),
                      "problems": tuple(tuple(p) for p in doc["problems"])})


def _row(r: RunRecord, cached: CachedValidation | None) -> Row | None:
    from ..frames import guarded_row
    row = guarded_row(r, cached)
    # Through JSON here, so a digest made now equals the one read back from the status next time.
    return None if row is None else tuple(json.loads(json.dumps(row)).items())


def make(r: RunRecord, rel: str, cached: CachedValidation | None, problems: list[Problem],
         clean: Callable[[str], str] = str) -> RunDigest:
    """The digest of a run read just now; `clean` (the secret redactor) is applied to its problems' text."""
    t, run = r.trace, r.trace.run
    v = validation_view(t.final_kernel is not None, cached, t.metrics, run.recorded_verdict, run.precision)
    made = RunDigest(
        run_id=r.run_id, path=rel, slug=r.slug, key=group_key(r), model=run.model or MISSING_KEY, recorded_model=run.model,
        problem=problem_key(r), level=run.level, problem_id=run.problem_id, title=title(r),
        problem_name=run.problem_file or run.title or r.run_id, sub=run.problem_file or r.run_id, flags=tuple(r.flags),
        summary=run_summary(r, v), kernels=" ".join(lazy.kernel_names(t.final_kernel.source if t.final_kernel else None)),
        has_kernel=t.final_kernel is not None, row=_row(r, cached), redactions=tuple(redactions(r, cached).items()),
        cached=cached.shown_path if cached is not None else None,
        problems=tuple((clean(p.path), clean(p.field), clean(p.message), p.kind) for p in problems),
        work=r.work.to_json() if r.work is not None else None)
    return RunDigest.from_json(json.loads(json.dumps(made.to_json())))
