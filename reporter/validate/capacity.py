"""A throughput model of `reporter validate` for planning: kernels/hour on N cores and M GPUs.

The local executor compiles in even waves (`buildcache.pool_size`): `jobs` builds at once per machine,
each lasting `build_wall_s` and keeping `build_cpu_s / build_wall_s` cores busy, so a wave ends every
`build_wall_s` (longer when the jobs ask for more cores than there are). Kernels with nothing to build
are ready at once. Each ready kernel then costs its GPU `gpu_s` seconds (time with at least one check on
the GPU, per kernel): more while compiles compete for the CPU, `gpu_tail_s` once they are done, which
is when the last wave's kernels are checked. The GPUs take kernels in the order they become ready:

    GPU free = max(GPU free, wave ready) + kernels of the wave x gpu_s / GPUs, wave after wave
    wall     = setup + max(GPU free after the last wave, last wave ready + one check's wall)

and a long sweep runs at min(machines x jobs / build wall / share of kernels built, GPUs / gpu_s).
Assumptions, all taken from the measured run: a build takes as long and keeps as many cores busy as
there, a check costs the GPU what it cost there, the machines of a cluster add their cores and GPUs
and move builds for free, and the kernels are like the measured ones. Standard library only (issue
26's two-GPU run reuses it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .buildcache import pool_size


@dataclass(frozen=True)
class Measured:
    """Per-kernel costs of one measured run (seconds; means over its kernels)."""

    build_share: float  # share of the kernels that compiled something (pure-PyTorch kernels build nothing)
    build_cpu_s: float  # CPU-seconds of one such build
    build_wall_s: float  # wall seconds of one such build, under the run's contention
    gpu_s: float  # GPU-seconds per kernel for checks that ran beside compiles
    gpu_tail_s: float  # GPU-seconds per kernel for checks that ran after the last compile
    check_wall_s: float  # one check's wall time
    setup_s: float  # environment probe, cache lookups and server start, before the first compile

    @property
    def build_cores(self) -> float:
        return self.build_cpu_s / max(self.build_wall_s, 1e-9)


@dataclass(frozen=True)
class Plan:
    """Machines of one kind: `machines` x (`cores` cores, `gpus` GPUs), `jobs` compiles at once on each."""

    cores: int
    gpus: int
    machines: int = 1
    jobs: int | None = None  # None: the local executor's pool size (buildcache.pool_size)


@dataclass(frozen=True)
class Prediction:
    kernels: int
    wall_s: float
    kernels_per_hour: float
    steady_per_hour: float  # a long sweep, fill and tail left out
    bound: str  # "CPU" or "GPU": the side that ends the run
    jobs: int  # compiles at once per machine
    waves: int
    build_wall_s: float  # one build, stretched when the jobs ask for more cores than there are
    gpu_busy: float  # share of the run with a check on the GPU, all GPUs averaged


def predict(m: Measured, plan: Plan, kernels: int) -> Prediction:
    builds = round(kernels * m.build_share)
    per_machine = -(-builds // plan.machines)
    jobs = plan.jobs or pool_size(plan.cores, m.build_wall_s, m.build_cpu_s, max(1, per_machine))
    wall_b = m.build_wall_s * max(1.0, jobs * m.build_cores / plan.cores)
    waves = math.ceil(per_machine / jobs) if builds else 0
    gpus = max(1, plan.machines * plan.gpus)
    busy = (kernels - builds) * m.gpu_s / gpus  # kernels with nothing to build are checked first
    free, at, left = busy, 0.0, builds
    for wave in range(1, waves + 1):
        at, n = wave * wall_b, min(left, jobs * plan.machines)
        cost = n * (m.gpu_tail_s if wave == waves else m.gpu_s) / gpus
        free, busy, left = max(free, at) + cost, busy + cost, left - n
    cpu_end = at + m.check_wall_s
    wall = m.setup_s + max(free, cpu_end)
    build_rate = plan.machines * jobs / wall_b / max(m.build_share, 1e-9)
    steady = 3600.0 * min(build_rate, gpus / max(m.gpu_s, 1e-9))
    return Prediction(kernels, wall, kernels * 3600.0 / wall, steady, "GPU" if free > cpu_end else "CPU", jobs, waves,
                      wall_b, min(1.0, busy / wall))


def busy_time(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the (start, end) intervals."""
    total, end = 0.0, float("-inf")
    for lo, hi in sorted(intervals):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total
