"""Reviewer clearances for suspect runs, read from `DATA/reviews.toml`.

A run whose kernel trips an error-level static cheat check is "suspect" and left out of fast_p and the
geomean until a person looks at it. The file records who cleared which kernel and why:

    [[cleared]]
    run = "kernelbench-run_new/l1-p1-s0"          # the run id (its folder under DATA)
    kernel_sha256 = "d8826a3b…"                    # sha256 of final_kernel.source, all 64 hex digits
    reviewer = "ada"
    note = "uses cuBLAS on purpose: the problem asks for a baseline"

A clearance names the kernel's hash, so an edited kernel is suspect again until someone re-reviews it.
A bad file or entry is an error that names the file and the field; it never stops the build, and an
entry that cannot be read clears nothing.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CollectError
from .safeio import read_bounded

REVIEWS_FILE = "reviews.toml"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FIELDS = ("run", "kernel_sha256", "reviewer", "note")


@dataclass(frozen=True)
class Clearance:
    run: str
    kernel_sha256: str
    reviewer: str
    note: str


@dataclass(frozen=True)
class Reviews:
    path: Path
    clearances: tuple[Clearance, ...]
    errors: tuple[CollectError, ...]

    def for_run(self, run_id: str, kernel_sha256: str | None) -> tuple[Clearance | None, str]:
        """The clearance that applies to this kernel, or None and (when one names the run) why it does not."""
        named = [c for c in self.clearances if c.run == run_id]
        for c in named:
            if c.kernel_sha256 == kernel_sha256:
                return c, ""
        if named:
            c = named[0]
            return None, (f"{REVIEWS_FILE} clears this run for kernel {c.kernel_sha256[:12]}… (reviewer {c.reviewer}), "
                          f"but the kernel now hashes to {(kernel_sha256 or 'nothing')[:12]}…: it changed after the "
                          "review, so the clearance does not apply")
        return None, ""


def _entry(path: Path, i: int, item: Any) -> Clearance:
    where = f"cleared[{i}]"
    if not isinstance(item, dict):
        raise CollectError(path, where, "each [[cleared]] entry must be a table")
    unknown = sorted(set(item) - set(_FIELDS))
    if unknown:
        raise CollectError(path, f"{where}.{unknown[0]}", f"unknown field; an entry has {', '.join(_FIELDS)}")
    for name in _FIELDS:
        value = item.get(name)
        if not isinstance(value, str) or not value.strip():
            raise CollectError(path, f"{where}.{name}", "missing or empty; must be a non-empty string")
    if not _SHA256.fullmatch(item["kernel_sha256"]):
        raise CollectError(path, f"{where}.kernel_sha256",
                           "must be the kernel's sha256: 64 lowercase hex digits (the run page shows it)")
    return Clearance(item["run"], item["kernel_sha256"], item["reviewer"].strip(), item["note"].strip())


def load_reviews(data: Path) -> Reviews:
    """Clearances from DATA/reviews.toml (none when the file is absent)."""
    path = data / REVIEWS_FILE
    if not path.exists() and not path.is_symlink():
        return Reviews(path, (), ())
    # A FIFO would block the build and a link could publish a file from elsewhere: regular files in DATA only.
    try:
        doc = tomllib.loads(read_bounded(path, data, "(file)", "MAX_CONFIG_FILE_BYTES").decode("utf-8"))
    except CollectError as exc:
        return Reviews(path, (), (CollectError(path, exc.field, f"{exc.message}; no clearance applies"),))
    except UnicodeDecodeError as exc:
        return Reviews(path, (), (CollectError(path, "(file)", f"not UTF-8 text (byte {exc.start:,}); no clearance applies"),))
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return Reviews(path, (), (CollectError(path, "(toml)", f"not valid TOML: {str(exc)[:200]}; no clearance applies"),))
    clearances: list[Clearance] = []
    errors = [CollectError(path, key, "unknown table; this file holds [[cleared]] entries only")
              for key in sorted(doc) if key != "cleared"]
    entries = doc.get("cleared", [])
    if not isinstance(entries, list):
        return Reviews(path, (), (*errors, CollectError(path, "cleared", "must be an array of tables: write [[cleared]]")))
    for i, item in enumerate(entries):
        try:
            clearances.append(_entry(path, i, item))
        except CollectError as exc:
            errors.append(exc)
    return Reviews(path, tuple(clearances), tuple(errors))
