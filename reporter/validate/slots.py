"""Sharing one GPU between several checks, and giving a check the GPU to itself when memory ran out.

Several checks share a GPU because most of a check is host work. Their memory adds up, though: a
problem whose tensors fit alone can run out of GPU memory beside three others, and the kernel would be
blamed for a runtime error (or, in a jittered trial, an "incorrect" verdict) that says nothing about
it. A check that ran out of memory while it shared the GPU is therefore run again alone, and only that
second result counts. Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.schema import WorkerResult

# What torch writes when an allocation fails on the GPU (torch.OutOfMemoryError's name and message).
OUT_OF_MEMORY_TEXT = ("OutOfMemoryError", "CUDA out of memory")


def ran_out_of_memory(result: WorkerResult) -> bool:
    """Whether a worker's check result shows a failed GPU allocation: in its verdict, any trial, or a check that
    could not run for it (the run would show "checks incomplete" for memory another process held)."""
    texts = [result.reason] + [t.problem or "" for t in (*result.trials, *result.statistics_trials)]
    texts += [d.detail for d in result.dynamic_checks if d.tripped is None]
    return any(marker in text for text in texts for marker in OUT_OF_MEMORY_TEXT)


class GpuSlots:
    """Shared slots on one GPU, plus an exclusive turn that waits for the GPU to empty.

    A thread waiting for its exclusive turn stops new shared checks from starting, so it cannot starve.
    """

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._shared = 0
        self._alone = False
        self._waiting_alone = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cv:
            self._cv.wait_for(lambda: not self._alone and not self._waiting_alone)
            self._shared += 1
        try:
            yield
        finally:
            with self._cv:
                self._shared -= 1
                self._cv.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._cv:
            self._waiting_alone += 1
            self._cv.wait_for(lambda: not self._alone and not self._shared)
            self._waiting_alone -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._cv:
                self._alone = False
                self._cv.notify_all()
