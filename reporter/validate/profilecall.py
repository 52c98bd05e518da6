"""The worker's `profile` mode: one warm call of each side inside an NVTX range, for Nsight Compute to pick up.

Runs in the isolated worker process (`worker.main`), as every mode does; kept apart so the worker's check stays
readable."""

from __future__ import annotations

import torch

from ..core.schema import WorkerJob
from .inputs import PopcornJitter, build_models, load, make_inputs
from .timing import SPIN_CYCLES


def profile_call(job: WorkerJob) -> None:
    """One warm call of each side profiled (`job.role`: "kernel", "reference" or "both") inside an NVTX range
    named `measured`, for ncu to pick up; with both, a marker kernel opens the reference's range, so the
    export splits into the two sides (`profiling.split_sides`)."""
    s = job.settings
    jitter = PopcornJitter(s.jitter_fraction)
    ns, _ = load(job.reference, job.kernel, jitter)
    ref, new, _ = build_models(ns, job.device, s.seed)
    fns = {"kernel": [new], "reference": [ref]}.get(job.role or "", [new, ref])
    inputs = make_inputs(ns, jitter, s.seed, False, job.device)
    # Start from the cache state the device timing starts from: L2 flushed before the call.
    flush = torch.empty(s.flush_l2_mb * 1024 * 1024 // 4, dtype=torch.float32, device=job.device)
    with torch.no_grad():
        for _ in range(3):
            for fn in fns:
                fn(*inputs)
        for i, fn in enumerate(fns):
            flush.zero_()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("measured")
            if i:
                torch.cuda._sleep(SPIN_CYCLES)
            fn(*inputs)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
