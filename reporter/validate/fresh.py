"""Inputs at a fresh address for every timed call (issue 48, item 1; SOL-ExecBench's shifting pool).

The timed loops rotate a few input sets, so without this the same few addresses come back call after call, and
a cache keyed on `data_ptr()` (in Python, or a `static` map in C++ no pattern sees) times a lookup. Here every
dense tensor input is copied, before the call and outside its timed interval, into a pool at an offset that moves
`STEP_BYTES` each call: `SLOTS` calls in a row never see one address twice. The warm-up and the profiled call set
take their inputs from here too, so no call is handed the input sets' own tensors: nothing a call writes reaches a
later call or the sets the timed outputs are judged against.

Tensors the pool cannot hold as they are (non-contiguous, empty) are passed as given; `fresh_share` says how many
were moved. The re-check after the timed loop (`aftertiming.recheck`) then writes new values into the kernel's last
timed inputs, at their address: a cache keyed on the address returns the old answer and fails it.

Standard library and torch only: the isolated worker imports this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

STEP_BYTES = 256  # keeps every view aligned for the widest vector load (16 B) and for any dtype
# Distinct addresses per input before the pool wraps (16 MiB of pool beyond the largest input): more calls than the
# warm-up and both eager bases make at their time caps (a 0.5 ms call, flush included, makes 6,000 in 3 s).
SLOTS = 65_536


def _movable(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.numel() > 0 and x.is_contiguous() and not x.is_sparse


class FreshInputs:
    """`next(round)` returns input set `round % len(sets)` with each movable tensor at a new address."""

    def __init__(self, input_sets: Sequence[Sequence[Any]], slots: int = SLOTS) -> None:
        self.sets, self.slots, self.calls = [list(s) for s in input_sets], slots, 0
        self.pools: dict[int, torch.Tensor] = {}
        width = len(self.sets[0]) if self.sets else 0
        for i in range(width):
            column = [s[i] for s in self.sets if i < len(s)]
            if column and all(_movable(x) for x in column):
                size = max(x.numel() * x.element_size() for x in column)
                self.pools[i] = torch.empty(size + slots * STEP_BYTES, dtype=torch.uint8, device=column[0].device)

    @property
    def pool_bytes(self) -> int:
        """What the pools hold on the device (the timer leaves it out of the call's peak memory)."""
        return sum(p.numel() for p in self.pools.values())

    @property
    def fresh_share(self) -> tuple[int, int]:
        """(tensor inputs moved to a fresh address each call, tensor inputs) of the first set."""
        first = self.sets[0] if self.sets else []
        return len(self.pools), sum(1 for x in first if isinstance(x, torch.Tensor))

    def next(self, round_: int) -> list[Any]:
        source = self.sets[round_ % len(self.sets)]
        offset = (self.calls % self.slots) * STEP_BYTES
        self.calls += 1
        out: list[Any] = []
        for i, x in enumerate(source):
            pool = self.pools.get(i)
            if pool is None:
                out.append(x)
                continue
            view = pool[offset: offset + x.numel() * x.element_size()].view(x.dtype).view(x.shape)
            view.copy_(x)
            out.append(view)
        return out
