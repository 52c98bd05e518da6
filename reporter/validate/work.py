"""Count the work of every reference that has no count yet: each in its own forked process, no GPU needed.

The parent never runs trace content: it hands each reference to the fork server (mode `work`), which runs
`workcount.main` as it runs a kernel's check, in a child of its own session and working folder (`forkserver.own_folder`:
what the problem file writes where it runs stays out of DATA) with no CUDA device visible, and kills it past
`WORK_TIMEOUT_S`. Results are kept in DATA/validation/work/ (`core.work`), a failure with its reason, so a
build shows why a problem has no bound; `force` counts again.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.atomic import replace_file
from ..core.cache import work_file
from ..core.records import sha256_text
from ..core.work import WORK_FILE, WORK_FORMAT, WORK_MODE, WORK_TIMEOUT_S, WorkCount, WorkJob, failed
from .forkserver import ForkServer
from .machine import torch_installed
from .process import last_lines, package_env

if TYPE_CHECKING:
    from ..collect.traces import RunRecord

log = logging.getLogger(__name__)
# No GPU for the counter: it runs on meta (or small CPU) tensors, and a problem file must not reach a device.
COUNT_ENV: dict[str, str | None] = {"CUDA_VISIBLE_DEVICES": "", "REPORTER_THREADS": "1"}
NO_TORCH = ("torch is not installed, and counting runs each reference under it (no GPU needed: "
            "pip install torch --index-url https://download.pytorch.org/whl/cpu)")


@dataclass(frozen=True)
class Counted:
    """What one `count_work` did: the counts it made now, and how many references already had one."""

    counts: tuple[WorkCount, ...]
    cached: int


def store_work(data: Path, work: WorkCount) -> Path:
    """Write one count where `core.cache.read_work` finds it (atomically: a build never sees half a file)."""
    path = work_file(data, work.reference_sha256)
    replace_file(path, work.to_json())
    return path


def _result(job_dir: Path, sha: str, rc: int | None, timeout_s: float) -> WorkCount:
    """The child's count, or a failed one that says how the child ended and quotes its last output."""
    path = job_dir / WORK_FILE
    log_path = job_dir / f"{WORK_MODE}.log"
    tail = last_lines(log_path.read_text(encoding="utf-8", errors="replace")[-4000:], 3) if log_path.is_file() else ""
    if rc is not None and path.is_file():
        try:
            found = WorkCount.from_json(path.read_text(encoding="utf-8"))
            if found.reference_sha256 == sha:
                return found
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            return failed(sha, f"the counter's result is not a work count ({str(exc)[:200]})")
    how = f"did not finish within {timeout_s:g} s (WORK_TIMEOUT_S)" if rc is None else f"died (exit code {rc})"
    return failed(sha, f"the counter {how}" + (f"; its last output: {tail.splitlines()[-1][:300]}" if tail else ""))


def _stale(data: Path, sha: str) -> bool:
    """No count yet, or one made under older rules (`WORK_FORMAT`); a file that is no count is left as it is (the
    build names it), never overwritten: `force` counts it again."""
    path = work_file(data, sha)
    if not path.is_file():
        return True
    try:
        return WorkCount.from_json(path.read_text(encoding="utf-8")).format != WORK_FORMAT
    except (OSError, UnicodeDecodeError, ValueError, TypeError, RecursionError):
        return False


def count_work(data: Path, references: Iterable[str], *, force: bool = False, jobs: int | None = None,
               timeout_s: float = WORK_TIMEOUT_S, on_done: Callable[[WorkCount], None] | None = None) -> Counted:
    """Count every distinct reference that has no count in DATA (all of them with `force`), `jobs` at once."""
    refs = {sha256_text(ref): ref for ref in references}
    todo = {sha: ref for sha, ref in refs.items() if force or _stale(data, sha)}
    if not todo:
        return Counted((), len(refs))
    server = ForkServer(package_env({"REPORTER_FORK_WARM": WORK_MODE}))
    try:
        with tempfile.TemporaryDirectory(prefix="reporter-work-") as tmp:
            def one(item: tuple[str, str]) -> WorkCount:
                sha, ref = item
                job_dir = Path(tmp) / sha[:20]
                job_dir.mkdir()
                (job_dir / "job.json").write_text(WorkJob(ref, sha).to_json(), encoding="utf-8")
                rc, _ = server.run(WORK_MODE, job_dir, COUNT_ENV, timeout_s)
                work = _result(job_dir, sha, rc, timeout_s)
                store_work(data, work)
                if on_done is not None:
                    on_done(work)
                return work
            with ThreadPoolExecutor(max_workers=jobs or len(os.sched_getaffinity(0))) as pool:
                counts = tuple(pool.map(one, sorted(todo.items())))
    finally:
        server.close()
    return Counted(counts, len(refs) - len(todo))


def count_missing(data: Path, runs: Iterable[RunRecord], *, force: bool = False, jobs: int | None = None,
                  on_done: Callable[[WorkCount], None] | None = None) -> str:
    """Count the work of the references of `runs` that have no count in DATA yet; the line that says what was done.

    `reporter import` calls it for what it wrote, `reporter validate` and a re-validating build for what they check,
    so the hardware floor needs no command of its own. Without torch nothing is counted and the line says how to
    count later (the caller decides whether that is an error: for `reporter work` it is)."""
    refs = [ref for r in runs if (ref := r.source.reference_source) is not None]
    if not refs:
        return "no reference to count the work of"
    if not torch_installed():
        return f"work not counted: {NO_TORCH}; then `reporter work {data}` counts it for the hardware floor"
    done = count_work(data, refs, force=force, jobs=jobs, on_done=on_done)
    failed = sum(not w.counted for w in done.counts)
    return (f"counted {len(done.counts)} references ({failed} failed); "
            f"{done.cached} already had a count in {data / 'validation' / 'work'}")
