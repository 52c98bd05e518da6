"""Writing an audit: one verdict on one run's kernel, appended to `DATA/reviews.toml` (`reporter review`).

The entry is checked as the build will read it before a byte is written: the run exists, its kernel's sha256
is the one judged, the quote points inside that kernel (its line count) or transcript (its turns), and no
verdict on this kernel is there already (the first one counts, so a second would be ignored). The file is only
ever appended to: what a person wrote there, comments included, stays as it was.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from ..core.errors import ConfigError
from ..core.records import Trace, sha256_text
from .read import find_traces, read_trace, run_ids
from .reviews import QUOTE, REVIEWS_FILE, Review, ReviewVerdict, load_reviews


def _trace(data: Path, run: str) -> tuple[str, Trace]:
    """The run's id and trace; RUN is its id (its folder under DATA) or a path to that folder or file."""
    ids = {rid: path for path, rid in run_ids(data, find_traces(data)).items()}
    wanted = run.strip("/")
    given = Path(run)
    if wanted not in ids and given.exists():
        target = given.resolve()
        wanted = next((rid for rid, path in ids.items() if target in (path.resolve(), path.resolve().parent)), wanted)
    if wanted not in ids:
        near = sorted(i for i in ids if wanted.rsplit("/", 1)[-1] in i)[:5]
        hint = f"; runs with that name: {', '.join(near)}" if near else f"; {len(ids)} runs there (`reporter export {data}` lists them)"
        raise ConfigError(f"{run}: no run of that id in {data}{hint}")
    return wanted, read_trace(ids[wanted], data)


def _check_quote(quote: str, trace: Trace) -> None:
    m = QUOTE.fullmatch(quote)
    if m is None:
        raise ConfigError(f"--quote {quote!r}: name the evidence as kernel.py:LINE, kernel.py:LINE-LINE, reference.py:LINE or turn N")
    if m.group("turn") is not None:
        turns = sorted(t.index for t in trace.turns)
        if int(m.group("turn")) not in turns:
            have = f"turns {turns[0]}-{turns[-1]}" if turns else "no turns"
            raise ConfigError(f"--quote {quote!r}: this run's transcript has {have}")
        return
    source = (trace.final_kernel.source if trace.final_kernel else "") if m.group("file") == "kernel.py" else (trace.reference_source or "")
    lines = len(source.splitlines())
    first, last = int(m.group("line")), int(m.group("end") or m.group("line"))
    if not 1 <= first <= last <= lines:
        raise ConfigError(f"--quote {quote!r}: {m.group('file')} has lines 1-{lines}")


def entry_text(review: Review) -> str:
    """The [[review]] table of one verdict; JSON's string escapes are TOML's basic-string escapes."""
    fields = {"run": review.run, "kernel_sha256": review.kernel_sha256, "reviewer": review.reviewer,
              "verdict": review.verdict.value, "quote": review.quote, "note": review.note}
    return "\n[[review]]\n" + "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in fields.items())


def add_review(data: Path, run: str, verdict: str, quote: str, note: str, reviewer: str) -> Review:
    """Append a verdict on RUN's kernel to DATA/reviews.toml; ConfigError (nothing written) says what to fix."""
    if verdict not in set(ReviewVerdict):
        raise ConfigError(f"--verdict {verdict!r}: one of {', '.join(ReviewVerdict)}")
    if not note.strip() or not reviewer.strip():
        raise ConfigError("--note and the reviewer (--reviewer, or [tool.reporter.audit] reviewer) must not be empty")
    run_id, trace = _trace(data, run)
    if trace.final_kernel is None:
        raise ConfigError(f"{run_id}: submitted no kernel, so there is nothing to judge")
    quote = quote.strip()
    if quote or verdict != ReviewVerdict.CLEAN:
        _check_quote(quote, trace)
    review = Review(run_id, sha256_text(trace.final_kernel.source), reviewer.strip(), note.strip(), ReviewVerdict(verdict), quote)
    path = data / REVIEWS_FILE
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ConfigError(f"{path}: not a regular file; reviews are appended to a plain file only")
    existing = load_reviews(data)
    if existing.errors:
        raise ConfigError(f"{path} has problems to fix first: " + "; ".join(f"{e.field}: {e.message}" for e in existing.errors[:3]))
    same = next((r for r in existing.clearances if (r.run, r.kernel_sha256) == (review.run, review.kernel_sha256)), None)
    if same is not None:
        raise ConfigError(f"{path} already judges this kernel ({same.where}: {same.verdict.value} by {same.reviewer}); "
                          "edit that entry instead, since the first verdict on a kernel is the one that counts")
    before = path.read_bytes() if path.exists() else b""
    text = entry_text(review)
    tomllib.loads(before.decode("utf-8") + text)  # it must read back; a failure here is a bug, and nothing is written
    with open(path, "ab") as fh:
        fh.write(("\n" if before and not before.endswith(b"\n") else "").encode() + text.encode("utf-8"))
    return review
