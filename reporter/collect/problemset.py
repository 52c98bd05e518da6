"""The benchmark's problem set: the universe a leaderboard's denominators count (``kernelbench-problems.json``).

`reporter import kernelbench --problems DIR` records, for each level folder of DIR, every problem file and
its sha256 (and the KernelBench commit, when DIR is in a git checkout that tracks those files unchanged) in OUT/kernelbench-problems.json.
KernelBench's fast_p divides by the level's problems, not by the kernels a run folder happens to hold, so
the leaderboards of the runs below OUT count a problem with no kernel as "not attempted".

The first import records a problem (or, for a folder imported before sets were recorded, the reference its
traces already hold); a later import never rewrites it. A problem file whose hash differs
from the recorded one, or a recorded problem that is missing or renamed under today's DIR, is one message
per kernel naming run, problem and both hashes, and the trace's source note says so (shown on its page):
re-validation would otherwise test a kernel against a problem it was never given.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic import locked
from ..core.errors import CollectError, printable
from ..core.gitread import commit_holding
from ..core.names import visible
from ..core.safeio import parse_json, read_bounded, write_inside
from .imported import LOCK_FILE

PROBLEMSET_FILE = "kernelbench-problems.json"
FORMAT = 1
LEVEL_RE = re.compile(r"level(\d+)$")
PROBLEM_RE = re.compile(r"(\d+)_.+\.py$")


@dataclass(frozen=True)
class Problem:
    """One problem of the set: where it is (benchmark, level, id), its file and the file's sha256."""

    benchmark: str
    level: int
    problem_id: int
    file: str
    sha256: str


@dataclass(frozen=True)
class ProblemSet:
    """The problems of one benchmark as recorded, keyed by (level, problem id), and where they came from."""

    benchmark: str
    problems: dict[tuple[int, int], Problem]
    source: str = ""  # the --problems folder's name
    commit: str | None = None  # KernelBench's git commit, when --problems was inside a checkout
    scope: str = ""  # the folder (relative to DATA, posix) whose runs it applies to; "" is all of DATA

    def levels(self) -> tuple[int, ...]:
        return tuple(sorted({lv for lv, _ in self.problems}))


def _level_folders(problems: Path) -> Iterator[tuple[int, Path]]:
    """Each level folder of a KernelBench problem folder (or of KernelBench/ inside a checkout)."""
    for base in (problems, problems / "KernelBench"):
        try:
            names = sorted(os.listdir(base)) if base.is_dir() and not base.is_symlink() else []
        except OSError:
            names = []
        found = [(int(m.group(1)), base / n) for n in names if (m := LEVEL_RE.match(n)) and (base / n).is_dir()]
        if found:
            yield from found
            return


def _commit(problems: Path, files: list[Path]) -> str | None:
    """The KernelBench commit the problem files come from: the HEAD of the checkout that holds `problems` (it, or one
    or two folders up: KernelBench/KernelBench/level1), read from .git as data (never by running git on a folder we
    did not make), and only when that checkout tracks every file read, unchanged. An untracked copy inside the
    user's own repository is no KernelBench commit: None, every time."""
    for root in (problems, *list(problems.resolve().parents)[:2]):
        if not (root / ".git").exists():
            continue
        try:
            names = [f.resolve().relative_to(root.resolve()).as_posix() for f in files]
        except ValueError:
            return None
        return commit_holding(root, names)
    return None


def scan(problems: Path, benchmark: str = "kernelbench") -> tuple[ProblemSet, list[str]]:
    """Every problem file of `problems` with its sha256; a file that cannot be read is a message."""
    found: dict[tuple[int, int], Problem] = {}
    read: list[Path] = []
    messages: list[str] = []
    for level, folder in _level_folders(problems):
        for name in sorted(os.listdir(folder)):
            m = PROBLEM_RE.match(name)
            if m is None or (level, int(m.group(1))) in found:
                continue
            try:
                blob = read_bounded(folder / name, problems, "(file)", "MAX_TRACE_BYTES")
            except CollectError as exc:
                messages.append(f"problem set: {exc}; not recorded")
                continue
            read.append(folder / name)
            found[(level, int(m.group(1)))] = Problem(benchmark, level, int(m.group(1)), printable(name),
                                                       hashlib.sha256(blob).hexdigest())
    return ProblemSet(benchmark, found, printable(problems.name), _commit(problems, read)), messages


def _document(ps: ProblemSet) -> dict[str, object]:
    levels: dict[str, dict[str, dict[str, str]]] = {}
    for (lv, pid), p in sorted(ps.problems.items()):
        levels.setdefault(str(lv), {})[str(pid)] = {"file": p.file, "sha256": p.sha256}
    return {"format": FORMAT, "benchmark": ps.benchmark, "source": ps.source, "commit": ps.commit, "levels": levels}


_SHA256 = re.compile(r"[0-9a-f]{64}")  # a digest is kept as it is (a redactor may read 1 in 1,500 as a key)
_NUMBER = re.compile(r"[0-9]{1,6}")  # a level or problem number as a key: ASCII digits, small enough for any table


def read(path: Path, root: Path, clean: Callable[[str], str] = str) -> ProblemSet:
    """A recorded problem set, its names passed through `clean` (the redactor) and shown visibly; anything malformed
    is a CollectError naming the file and field. The file is anyone's text, like a trace."""
    doc = parse_json(read_bounded(path, root, "(file)", "MAX_TRACE_BYTES"), path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("levels"), dict):
        raise CollectError(path, "format", f"not a problem set of format {FORMAT} ({{format, benchmark, levels}})")

    def name(value: object) -> str:
        return visible(clean(str(value)))

    bench = name(doc.get("benchmark") or "kernelbench")
    found: dict[tuple[int, int], Problem] = {}
    for lv, entries in doc["levels"].items():
        for pid, entry in (entries.items() if isinstance(entries, dict) else ()):
            ok = _NUMBER.fullmatch(str(lv)) and _NUMBER.fullmatch(str(pid)) and isinstance(entry, dict) and \
                isinstance(entry.get("file"), str) and isinstance(entry.get("sha256"), str)
            if not ok:
                raise CollectError(path, f"levels.{name(lv)[:40]}.{name(pid)[:40]}",
                                   "expected {file, sha256} under a level and problem number (at most 6 digits each)")
            found[(int(lv), int(pid))] = Problem(bench, int(lv), int(pid), name(entry["file"]), sha if _SHA256.fullmatch(sha := entry["sha256"]) else name(sha))
    commit = doc.get("commit")
    return ProblemSet(bench, found, name(doc.get("source") or ""), name(commit) if isinstance(commit, str) else None)


@dataclass(frozen=True)
class Drift:
    """A problem whose file today is not the one recorded: renamed, changed or gone."""

    recorded: Problem
    today: Problem | None

    def sentence(self) -> str:
        rec, now = self.recorded, self.today
        where = f"level {rec.level} problem {rec.problem_id}"
        if now is None:
            return f"{where}: the problem set recorded {rec.file} (sha256 {rec.sha256[:12]}), which is missing from --problems"
        what = f"renamed {rec.file} -> {now.file}" if now.file != rec.file else f"{now.file} changed"
        same = " (same contents)" if now.sha256 == rec.sha256 else ""
        return (f"{where}: {what} since the problem set was recorded: sha256 {now.sha256[:12]} today, "
                f"{rec.sha256[:12]} recorded{same}; the reference imported is today's file, not the one recorded")


def imported_before(out: Path, benchmark: str) -> ProblemSet:
    """The references that imports already wrote into OUT's traces, as a problem set: what its runs are checked
    against. For an OUT without a problem set (imported before sets were recorded), so that today's files are
    compared with them instead of silently taking their place. The first trace (by path) of a problem names it."""
    found: dict[tuple[int, int], Problem] = {}
    for folder, dirs, names in os.walk(out):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(n for n in names if n == "trace.json" or n.endswith(".trace.json")):
            try:
                doc = parse_json(read_bounded(Path(folder) / name, out, "(file)", "MAX_TRACE_BYTES"), Path(folder) / name)
            except CollectError:
                continue  # a trace that cannot be read names no reference; the build reports it
            run, ref = doc.get("run") if isinstance(doc, dict) else None, doc.get("reference_source") if isinstance(doc, dict) else None
            if not isinstance(run, dict) or not isinstance(ref, str) or run.get("benchmark") != benchmark:
                continue
            level, pid, file = run.get("level"), run.get("problem_id"), run.get("problem_file")
            if isinstance(level, int) and isinstance(pid, int) and isinstance(file, str):
                found.setdefault((level, pid), Problem(benchmark, level, pid, file, hashlib.sha256(ref.encode("utf-8")).hexdigest()))
    return ProblemSet(benchmark, found)


def record(out: Path, today: ProblemSet) -> tuple[ProblemSet, dict[tuple[int, int], Drift]]:
    """Merge today's problems into OUT's problem set (new problems are added, recorded ones never changed)
    and write it; returns the set as recorded and each recorded problem that drifted. Without a set in OUT, the
    references its traces already hold are the recorded ones (`imported_before`)."""
    with locked(out, LOCK_FILE):  # two imports into one OUT: each merges into what the other recorded
        return _record(out, today)


def _record(out: Path, today: ProblemSet) -> tuple[ProblemSet, dict[tuple[int, int], Drift]]:
    path = out / PROBLEMSET_FILE
    old = read(path, out) if path.is_file() and not path.is_symlink() else imported_before(out, today.benchmark)
    drift = {key: Drift(rec, now) for key, rec in old.problems.items() if key[0] in today.levels()
             and ((now := today.problems.get(key)) is None or (now.file, now.sha256) != (rec.file, rec.sha256))}
    merged = ProblemSet(today.benchmark, {**today.problems, **old.problems}, old.source or today.source,
                        old.commit or today.commit)
    import json
    write_inside(out, (PROBLEMSET_FILE,), json.dumps(_document(merged), indent=1, ensure_ascii=False) + "\n")
    return merged, drift


def find(data: Path, errors: list[CollectError] | None = None) -> list[ProblemSet]:
    """Every problem set below DATA (linked folders are not entered), each scoped to the folder it is in."""
    from .redact import Redactor, load_allow_list
    redactor = Redactor(load_allow_list(data)[0])
    clean = lambda text: redactor.text(text, Counter())  # noqa: E731
    sets = []
    for folder, dirs, names in os.walk(data):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if PROBLEMSET_FILE not in names:
            continue
        path = Path(folder) / PROBLEMSET_FILE
        try:
            ps = read(path, data, clean)
        except CollectError as exc:
            if errors is not None:
                errors.append(exc)
            continue
        scope = Path(folder).relative_to(data).as_posix()
        sets.append(ProblemSet(ps.benchmark, ps.problems, ps.source, ps.commit, "" if scope == "." else scope))
    return sets


def fingerprint(data: Path) -> tuple[list[str], list[CollectError]]:
    """What the listing pages depend on in DATA's problem sets (scope and problems), and those that cannot be read:
    a changed problem set re-renders the leaderboards even when no trace changed."""
    errors: list[CollectError] = []
    found = find(data, errors)
    return [f"{ps.scope}|{sorted((k, p.file, p.sha256) for k, p in ps.problems.items())}" for ps in found], errors
