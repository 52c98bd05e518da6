"""The per-problem step before any kernel of a problem is checked: how strong its correctness check is.

`strength.py` runs in a worker process of its own, on the reference alone, once per (reference, precision,
tolerance, seed); the answer is cached under ``DATA/validation/problems/strength/`` (committed with the other
results, so a later call or another machine does not measure it again) and handed to every kernel's job of
that problem: its strengthening transforms become correctness trials, and the page says what would also pass.
Standard library only on this side.
"""

from __future__ import annotations

import hashlib
import json
import logging
import tempfile
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

from ..core.decode import from_doc
from ..core.errors import CollectError
from ..core.records import CACHE_DIR, PROBLEMS_DIR, sha256_text
from ..core.safeio import parse_json, read_bounded, write_inside
from ..core.schema import CheckStrength, Verdict, WorkerJob
from .forkserver import ForkServer
from .process import package_env, run_forked

log = logging.getLogger(__name__)

STRENGTH_DIR = "strength"
STRENGTH_VERSION = 3  # bump when strength.py's answers, mutants or transforms change: older entries are measured again


def strength_key(job: WorkerJob) -> str:
    """What a problem's check strength depends on: the reference and the comparison the verdict uses."""
    s = job.settings
    blob = json.dumps([STRENGTH_VERSION, sha256_text(job.reference), job.precision, s.seed, s.atol[job.precision],
                       s.rtol[job.precision]])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _path(data: Path, key: str) -> Path:
    return data / CACHE_DIR / PROBLEMS_DIR / STRENGTH_DIR / f"{key}.json"


def cached_strength(data: Path, key: str) -> CheckStrength | None:
    """The stored strength for `key`, or None (not measured yet, or unreadable: measured again)."""
    path = _path(data, key)
    if not path.exists():
        return None
    try:
        doc = parse_json(read_bounded(path, data, "(file)", "MAX_CACHE_FILE_BYTES"), path)
        return from_doc(CheckStrength, doc.get("strength") if isinstance(doc, dict) else None)
    except (CollectError, ValueError) as exc:
        log.warning("check strength %s is unreadable (%s); measuring it again", path, exc)
        return None


def store_strength(data: Path, key: str, strength: CheckStrength, gpu: str) -> None:
    doc = {"format": STRENGTH_VERSION, "gpu": gpu, "strength": asdict(strength)}
    write_inside(data, (CACHE_DIR, PROBLEMS_DIR, STRENGTH_DIR, f"{key}.json"), json.dumps(doc, indent=1) + "\n")


def measure(jobs: Mapping[str, WorkerJob], gpus: list[str], per_gpu: int, timeout_s: float) -> dict[str, CheckStrength]:
    """Each problem's strength, measured in a worker of its own (several per GPU at once); a problem whose worker
    failed gets a strength that says why (not stored, so a later call tries again)."""
    servers = [ForkServer(package_env({"CUDA_VISIBLE_DEVICES": g})) for g in gpus] or [ForkServer(package_env())]
    work = Path(tempfile.mkdtemp(prefix="reporter-strength-"))

    def one(i_key: tuple[int, str]) -> tuple[str, CheckStrength]:
        i, key = i_key
        job_dir = Path(tempfile.mkdtemp(prefix=f"strength-{i}-", dir=work))
        res, _ = run_forked(servers[i % len(servers)], "strength", replace(jobs[key], kernel=""), job_dir, timeout_s, {})
        if res.verdict == Verdict.CORRECT and res.check_strength is not None:
            return key, res.check_strength
        return key, CheckStrength(note=f"not measured: {res.reason or res.verdict}"[:300])
    try:
        with ThreadPoolExecutor(max_workers=max(1, len(servers) * per_gpu)) as pool:
            return dict(pool.map(one, enumerate(sorted(jobs))))
    finally:
        for server in servers:
            server.close()
        import shutil
        shutil.rmtree(work, ignore_errors=True)


def strengths(data: Path, jobs: Iterable[WorkerJob], gpus: list[str], per_gpu: int, timeout_s: float, gpu: str,
              progress: bool = False) -> dict[str, CheckStrength]:
    """Strength key -> the problem's check strength, for every problem of `jobs`: cached, else measured and stored."""
    todo: dict[str, WorkerJob] = {}
    found: dict[str, CheckStrength] = {}
    for job in jobs:
        key = strength_key(job)
        if key in found or key in todo:
            continue
        hit = cached_strength(data, key)
        if hit is not None:
            found[key] = hit
        else:
            todo[key] = job
    if todo:
        if progress:
            print(f"measuring how strong {len(todo)} problem(s)' correctness checks are ({len(found)} cached)", flush=True)
        for key, got in measure(todo, gpus, per_gpu, timeout_s).items():
            found[key] = got
            if not got.note:
                store_strength(data, key, got, gpu)
    return found


def with_strength(job: WorkerJob, found: Mapping[str, CheckStrength]) -> WorkerJob:
    """The kernel's job with its problem's strength (its note says why, when it could not be measured)."""
    return replace(job, strength=found.get(strength_key(job)))
