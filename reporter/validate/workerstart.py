"""What a check spends before its first trial, measured apart (standard library and torch only: the worker).

"start" runs from the parent's request (`forkserver.Request.sent_at`, handed on as ``REPORTER_SENT_AT``)
to the worker's first line: the fork from the warm server and the child's environment. "cuda" is the
device's initialisation, done at once rather than inside whichever phase first touches the GPU. Loading
the extension and building the models are the check's "load" phase.
"""

from __future__ import annotations

import os
import time

import torch

from ..core.schema import WorkerJob

TIMED_MODES = ("check", "reference")


def started(job: WorkerJob, mode: str) -> dict[str, float]:
    """The "start" and "cuda" phases of a mode that times (none for the others)."""
    if mode not in TIMED_MODES:
        return {}
    out: dict[str, float] = {}
    sent = float(os.environ.get("REPORTER_SENT_AT") or 0)
    if sent:
        out["start"] = max(0.0, time.monotonic() - sent)
    if job.device == "cuda":
        t0 = time.perf_counter()
        torch.cuda.init()
        torch.empty(1, device="cuda")
        out["cuda"] = time.perf_counter() - t0
    return out
