"""A call captured into a CUDA graph, and whether replaying the graph recomputes the eager call's output.

Standard library and torch only: the isolated worker imports this (through `timing`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def capture(fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, str | None]:
    """The call captured into a CUDA graph and checked once against the eager output, or why not."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                fn(*inputs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = fn(*inputs)
        same = replay_recomputes(graph.replay, captured, lambda: fn(*inputs), torch.cuda.synchronize)
    except Exception as exc:  # noqa: BLE001 - any capture failure is a reason to show, not a crash
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, f"{type(exc).__name__}: {first}"[:300]
    if not same:
        return None, ("the replayed graph's output differs from the eager call's (work launched outside the captured "
                      "stream, such as on the legacy default stream, host-side logic or a changing shape)")
    return graph, None


def replay_recomputes(replay: Callable[[], Any], captured: Any, eager: Callable[[], Any], sync: Callable[[], Any]) -> bool:
    """Whether replaying the graph writes the output the eager call computes.

    The captured output is poisoned first: a kernel launched outside the capturing stream runs once
    during capture and is left out of the graph, so its output would otherwise still hold the right
    values from that run while every replay does nothing (timed at ~1 µs on the H200).
    """
    for t in _float_tensors(captured):
        t.fill_(float("nan"))
    replay()
    sync()
    expected = eager()
    sync()
    return _same(captured, expected)


def _float_tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x] if x.is_floating_point() or x.is_complex() else []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _float_tensors(v)]
    return []


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.allclose(a.float(), b.float(), rtol=1e-3, atol=1e-5, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b)


def context_ok() -> bool:
    """Whether the CUDA context still runs work (a failed capture can leave it unusable)."""
    try:
        torch.ones(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001
        return False
