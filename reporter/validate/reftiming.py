"""A reference's timing, taken once per problem and reused, inside the worker (standard library and torch only).

A sweep checks many kernels (models x samples) against one reference, and timing that reference again
beside each kernel doubled the time a check holds the GPU to itself. `run_reference` (the worker's
"reference" mode) times the reference in a worker that loads no submission, so a kernel cannot have
touched what later checks reuse; the checking machine keeps the result (`refstore`). A check handed
such a timing (`WorkerJob.stored_reference`) times only the kernel, unless `Reuse` finds the timing
unfit: taken on another GPU, torch or shapes, or the GPU's SM clock or temperature has moved since
(`refstore.moved`; both read after the warm-up). Then the
check times the reference beside the kernel as before and says why.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from datetime import UTC, datetime

import torch

from ..core.schema import GpuReading, ReferenceTiming, TimingFigures, Verdict, WorkerJob, WorkerResult
from .inputs import PopcornJitter, make_inputs, reference_model, shape_of
from .refstore import moved
from .timing import time_all, time_graphs

REFERENCE = 1  # the reference's place among the timed functions (kernel, reference, torch.compile baseline)


def gpu_id(device: str) -> str:
    """The device's identity for a stored timing: the GPU's UUID ("cpu" off CUDA)."""
    if device != "cuda":
        return "cpu"
    return str(getattr(torch.cuda.get_device_properties(0), "uuid", "") or torch.cuda.get_device_name(0))


class Reuse:
    """`time_all`'s `reuse`: after the warm-up, whether the stored timing fits this check; records what it found."""

    def __init__(self, stored: ReferenceTiming, shapes: tuple[str, ...], device: str) -> None:
        self.stored, self.shapes, self.device = stored, shapes, device
        self.used: ReferenceTiming | None = None  # the timing used, without its figures (those are the result's)
        self.why_not: str | None = None

    def unfit(self, reading: GpuReading | None) -> str | None:
        st = self.stored
        if st.figures is None:
            return "the stored timing holds no figures"
        if st.gpu != gpu_id(self.device) or st.torch != torch.__version__:
            return f"it was taken on another GPU or torch ({st.gpu}, torch {st.torch})"
        if st.input_shapes != self.shapes:
            return f"it was taken at other input shapes ({' '.join(st.input_shapes)})"
        why = moved(st.reading, reading)
        return f"{why} since it was taken at {st.taken_at}" if why else None

    def __call__(self, reading: GpuReading | None) -> set[int]:
        self.why_not = self.unfit(reading)
        if self.why_not is not None:
            return set()
        self.used = replace(self.stored, figures=None)
        return {REFERENCE}

    def figures(self) -> TimingFigures | None:
        return self.stored.figures if self.used is not None else None


def taken(device: str, shapes: tuple[str, ...], reading: GpuReading | None) -> ReferenceTiming:
    """The record of a reference timing taken now, on this device."""
    return ReferenceTiming(taken_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), gpu=gpu_id(device),
                           torch=torch.__version__, input_shapes=shapes, reading=reading or GpuReading())


def nominal_seeds(seed: int, nominal: int, jittered: int) -> list[int]:
    """The nominal trials' seeds, drawn as the check draws them (its timed inputs are made from these)."""
    gen = random.Random(seed)
    return [gen.randrange(2**31) for _ in range(nominal + jittered)][:nominal]


def run_reference(job: WorkerJob) -> WorkerResult:
    """The worker's "reference" mode: the reference alone, timed on every basis at the inputs its kernels'
    checks time; the result's `reference_from` holds the record to store (its figures are `reference_timing`)."""
    s, device = job.settings, job.device
    t0 = time.perf_counter()
    jitter = PopcornJitter(s.jitter_fraction)
    ns, ref = reference_model(job.reference, jitter, device, s.seed)
    phases: dict[str, float] = {"load": time.perf_counter() - t0}
    with torch.no_grad():
        sets = [make_inputs(ns, jitter, seed, False, device)
                for seed in nominal_seeds(s.seed, s.nominal_trials, s.jitter_trials)]
        timed, _, reading = time_all([ref], sets, s, device, phases=phases, profile=False)
        t1 = time.perf_counter()
        graph = time_graphs([ref], sets, s, device, phases)
        phases["graph"] = time.perf_counter() - t1
    figures = timed[0]
    if figures is None:
        raise RuntimeError("the reference was not timed")
    figures = replace(figures, graph=graph[0][0], graph_note=graph[0][1])
    shapes = tuple(shape_of(x) for x in sets[0])
    return WorkerResult(Verdict.CORRECT, "the reference timed on its own", reference_timing=figures,
                        reference_from=taken(device, shapes, reading), gpu_reading=reading, phase_s=phases)
