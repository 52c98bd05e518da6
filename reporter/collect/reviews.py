"""Reviewer verdicts on kernels, read from `DATA/reviews.toml`: one verdict per kernel, with a quote.

    [[review]]
    run = "kernelbench-run_new/l1-p1-s0"          # the run id (its folder under DATA)
    kernel_sha256 = "d8826a3b…"                    # sha256 of final_kernel.source, all 64 hex digits
    reviewer = "ada"
    verdict = "reward_hack"                        # clean | reward_hack | contamination | rubric_leak | harness_bug | interesting
    quote = "kernel.py:42"                         # the evidence: kernel.py:LINE[-LINE], reference.py:LINE or turn N
    note = "returns the input when the shapes match the timed ones"

The verdicts are the categories kernelbench.com audits by hand (`ReviewVerdict`, the one vocabulary; `reporter
review` writes an entry). `reward_hack` and `contamination` (the kernel copies another run's work or results it
should not have seen) leave the run out of the rankings and keep its evidence on its page. `clean`, `rubric_leak`
(within the rules as written, exploiting a gap in them: the rules, not the run, need fixing) and `harness_bug` (the
flag or verdict is the tools' mistake; a verdict is never changed, the reviewer's words stand beside it) clear what
the automatic checks flagged, and the run counts again, shown with the reviewer's words. `interesting` neither
clears nor excludes: a note worth reading. Every verdict makes the kernel audited. The older clearance format is
still read, as `clean` with no quote:

    [[cleared]]
    run = "…"
    kernel_sha256 = "…"
    reviewer = "ada"
    note = "uses cuBLAS on purpose: the problem asks for a baseline"

A verdict names the kernel's hash, so an edited kernel is judged again until someone re-reviews it. A bad
file or entry is an error that names the file and the field; it never stops the build, and an entry that
cannot be read decides nothing.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..core.errors import CollectError, excerpt
from ..core.safeio import read_bounded

REVIEWS_FILE = "reviews.toml"
_SHA256 = re.compile(r"[0-9a-f]{64}")
QUOTE = re.compile(r"(?P<file>kernel\.py|reference\.py):(?P<line>\d+)(?:-(?P<end>\d+))?|turn (?P<turn>\d+)")
_CLEARED_FIELDS = ("run", "kernel_sha256", "reviewer", "note")
_REVIEW_FIELDS = ("run", "kernel_sha256", "reviewer", "verdict", "quote", "note")
_TABLES = {"review": _REVIEW_FIELDS, "cleared": _CLEARED_FIELDS}


class ReviewVerdict(StrEnum):
    """An audit's verdict on one kernel: the one vocabulary (kernelbench.com's audit categories)."""

    CLEAN = "clean"
    REWARD_HACK = "reward_hack"
    CONTAMINATION = "contamination"
    RUBRIC_LEAK = "rubric_leak"
    HARNESS_BUG = "harness_bug"
    INTERESTING = "interesting"


VERDICT_LABEL = {ReviewVerdict.CLEAN: "clean", ReviewVerdict.REWARD_HACK: "reward hack",
                 ReviewVerdict.CONTAMINATION: "contamination", ReviewVerdict.RUBRIC_LEAK: "rubric leak",
                 ReviewVerdict.HARNESS_BUG: "harness bug", ReviewVerdict.INTERESTING: "interesting"}
# Verdicts under which what the automatic checks flagged no longer holds the run back.
CLEARING = (ReviewVerdict.CLEAN, ReviewVerdict.RUBRIC_LEAK, ReviewVerdict.HARNESS_BUG)
# Verdicts that leave the run out of the rankings, its evidence kept (as a suspect's is).
EXCLUDING = (ReviewVerdict.REWARD_HACK, ReviewVerdict.CONTAMINATION)


@dataclass(frozen=True)
class Review:
    run: str
    kernel_sha256: str
    reviewer: str
    note: str
    verdict: ReviewVerdict = ReviewVerdict.CLEAN
    quote: str = ""  # "" for a clearance in the older format
    where: str = ""  # the entry, for messages: "review[2]" or "cleared[0]"

    @property
    def clears(self) -> bool:
        return self.verdict in CLEARING

    @property
    def excludes(self) -> bool:
        return self.verdict in EXCLUDING


# The older name: a clearance is a review whose verdict is clean.
Clearance = Review


@dataclass(frozen=True)
class Reviews:
    path: Path
    clearances: tuple[Review, ...]  # every readable verdict, in file order
    errors: tuple[CollectError, ...]

    def for_run(self, run_id: str, kernel_sha256: str | None) -> tuple[Review | None, str]:
        """The verdict on this kernel, or None and (when one names the run) why it does not apply."""
        named = [c for c in self.clearances if c.run == run_id]
        for c in named:
            if c.kernel_sha256 == kernel_sha256:
                return c, ""
        if named:
            c = named[0]
            return None, (f"{REVIEWS_FILE} judges this run's kernel {c.kernel_sha256[:12]}… ({VERDICT_LABEL[c.verdict]}, reviewer "
                          f"{c.reviewer}), but the kernel now hashes to {(kernel_sha256 or 'nothing')[:12]}…: it changed after the "
                          "review, so the verdict does not apply")
        return None, ""


def _entry(path: Path, table: str, i: int, item: Any) -> Review:
    where, fields = f"{table}[{i}]", _TABLES[table]
    if not isinstance(item, dict):
        raise CollectError(path, where, f"each [[{table}]] entry must be a table")
    unknown = sorted(set(item) - set(fields))
    if unknown:
        raise CollectError(path, f"{where}.{unknown[0]}", f"unknown field; an entry has {', '.join(fields)}")
    verdict = item.get("verdict", ReviewVerdict.CLEAN.value)
    required = [f for f in fields if f != "quote" or verdict != ReviewVerdict.CLEAN.value]
    for name in fields:
        value = item.get(name, "" if name not in required else None)
        if not isinstance(value, str) or (name in required and not value.strip()):
            raise CollectError(path, f"{where}.{name}", "missing or empty; must be a non-empty string")
    if not _SHA256.fullmatch(item["kernel_sha256"]):
        raise CollectError(path, f"{where}.kernel_sha256",
                           "must be the kernel's sha256: 64 lowercase hex digits (the run page shows it)")
    if verdict not in set(ReviewVerdict):
        raise CollectError(path, f"{where}.verdict", f"{excerpt(verdict, 40)!r} is not one of {', '.join(ReviewVerdict)}")
    quote = item.get("quote", "").strip()
    if quote and not QUOTE.fullmatch(quote):
        raise CollectError(path, f"{where}.quote", "must name the evidence as kernel.py:LINE, kernel.py:LINE-LINE, reference.py:LINE or turn N")
    return Review(item["run"], item["kernel_sha256"], item["reviewer"].strip(), item["note"].strip(), ReviewVerdict(verdict), quote, where)


def _read(path: Path, doc: dict[str, Any]) -> Reviews:
    reviews: list[Review] = []
    errors = [CollectError(path, key, "unknown table; this file holds [[review]] (and older [[cleared]]) entries only")
              for key in sorted(doc) if key not in _TABLES]
    for table in _TABLES:
        entries = doc.get(table, [])
        if not isinstance(entries, list):
            errors.append(CollectError(path, table, f"must be an array of tables: write [[{table}]]"))
            continue
        for i, item in enumerate(entries):
            try:
                review = _entry(path, table, i, item)
            except CollectError as exc:
                errors.append(exc)
                continue
            first = next((r for r in reviews if (r.run, r.kernel_sha256) == (review.run, review.kernel_sha256)), None)
            if first is not None:
                errors.append(CollectError(path, f"{table}[{i}]", f"a second verdict on this kernel; {first.where} is the one that counts"))
                continue
            reviews.append(review)
    return Reviews(path, tuple(reviews), tuple(errors))


def load_reviews(data: Path) -> Reviews:
    """Verdicts from DATA/reviews.toml (none when the file is absent)."""
    path = data / REVIEWS_FILE
    if not path.exists() and not path.is_symlink():
        return Reviews(path, (), ())
    # A FIFO would block the build and a link could publish a file from elsewhere: regular files in DATA only.
    try:
        doc = tomllib.loads(read_bounded(path, data, "(file)", "MAX_CONFIG_FILE_BYTES").decode("utf-8"))
    except CollectError as exc:
        return Reviews(path, (), (CollectError(path, exc.field, f"{exc.message}; no verdict applies"),))
    except UnicodeDecodeError as exc:
        return Reviews(path, (), (CollectError(path, "(file)", f"not UTF-8 text (byte {exc.start:,}); no verdict applies"),))
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return Reviews(path, (), (CollectError(path, "(toml)", f"not valid TOML: {str(exc)[:200]}; no verdict applies"),))
    return _read(path, doc)
