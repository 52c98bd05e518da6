"""A throughput model of `reporter validate` for planning: kernels/hour on N cores and M GPUs.

What a kernel costs, as one call measured it (`Measured`, from `throughput.measured`):

- its build: `build_cpu_s` CPU-seconds over `build_wall_s` (kernels with nothing to build cost none), a wall
  time measured under that call's contention (`jobs` compiles on `cores` cores) and stops (`quiet_share` of its
  wall): a prediction scales it by the predicted run's contention and stops relative to those, so a run like the
  measured one is predicted with the builds it had (applying them on top of the measured wall counted them twice
  and predicted 461-475 s for a call that took 345: benchmarks/h200-validate-corpus.txt);
- its GPU: `exclusive_s` seconds holding the GPU to itself (the timing windows, one at a time per GPU)
  and `shared_s` seconds of check work beside the other check slots (`slots` of them per GPU), so a
  GPU takes a kernel every `gpu_s = exclusive_s + shared_s / slots` seconds;
- its host: `host_quiet_s` seconds with every compile on its machine stopped (the windows of the wall and
  graph bases) and `check_cpu_s` CPU-seconds of the check itself, out of the compiles' cores.

A machine of C cores then compiles at most C / (build_share x build_cpu_s + check_cpu_s + C x host_quiet_s)
kernels a second, and its G GPUs check at most G / gpu_s: a long sweep runs at the smaller of the two,
summed over machines. A finite run also fills and drains: builds run in even waves
(`buildcache.pool_size`), each stretched when the jobs ask for more cores than there are and by the
share of time compiles stand stopped; kernels with nothing to build are checked first; the GPUs take
kernels in the order they become ready:

    GPU free = max(GPU free, wave ready) + kernels of the wave x gpu_s / GPUs, wave after wave
    wall     = setup + max(GPU free after the last wave, last wave ready + one check's wall)

Assumptions, all taken from the measured run: builds and checks cost what they cost there, the machines
of a cluster add their cores and GPUs and move builds for free, the GPUs of one machine time side by
side (one gate lane each) but stop the same compiles, and the kernels are like the measured ones.
Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .buildcache import pool_size

# The share of time compiles may stand stopped before the model calls the machine's compiles starved.
MAX_HOST_QUIET = 0.95


@dataclass(frozen=True)
class Measured:
    """Per-kernel costs of one measured run (seconds; means over its kernels)."""

    build_share: float  # share of the kernels that compiled something (pure-PyTorch kernels build nothing)
    build_cpu_s: float  # CPU-seconds of one such build
    build_wall_s: float  # wall seconds of one such build, under the run's contention
    exclusive_s: float  # seconds a kernel held its GPU to itself (its reference's own timing included)
    shared_s: float  # seconds of a check outside timing windows, with nothing stopping it
    host_quiet_s: float  # seconds with the machine's compiles stopped for it
    check_cpu_s: float  # CPU-seconds of one check
    check_wall_s: float  # one check's wall time
    setup_s: float  # environment probe, cache lookups and server start, before the first compile
    slots: int = 4  # checks at once per GPU
    quiet_share: float = 0.0  # share of the measured call's wall its compiles stood stopped (in build_wall_s)
    jobs: int = 0  # compiles at once in the measured call (0: unknown, its builds taken as uncontended)
    cores: int = 0  # the measured call's cores

    def stretch(self, jobs: int, cores: int) -> float:
        """How much longer a build takes when `jobs` compiles share `cores` cores, as this run's builds used cores."""
        return max(1.0, jobs * self.build_cores / max(1, cores))

    @property
    def build_base_wall_s(self) -> float:
        """One build's wall time with its compiles never stopped and as many cores as it uses."""
        measured = self.stretch(self.jobs, self.cores) if self.jobs and self.cores else 1.0
        return self.build_wall_s * (1.0 - min(MAX_HOST_QUIET, self.quiet_share)) / measured

    @property
    def build_cores(self) -> float:
        return self.build_cpu_s / max(self.build_wall_s, 1e-9)

    @property
    def gpu_s(self) -> float:
        """GPU time per kernel: its windows, and its share of the time the slots work side by side."""
        return self.exclusive_s + self.shared_s / max(1, self.slots)


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
    bound: str  # "CPU" or "GPU": the side that limits a long sweep
    jobs: int  # compiles at once per machine
    waves: int
    build_wall_s: float  # one build, stretched when the jobs ask for more cores than there are or stand stopped
    gpu_busy: float  # share of the run with a kernel's GPU time under way, all GPUs averaged


def steady_rates(m: Measured, plan: Plan) -> tuple[float, float]:
    """(kernels a second the compiles allow, kernels a second the GPUs allow), summed over the machines."""
    per_kernel_cpu = m.build_share * m.build_cpu_s + m.check_cpu_s + plan.cores * m.host_quiet_s
    cpu = plan.machines * plan.cores / max(per_kernel_cpu, 1e-9)
    gpu = plan.machines * plan.gpus / max(m.gpu_s, 1e-9)
    return cpu, gpu


def predict(m: Measured, plan: Plan, kernels: int) -> Prediction:
    cpu_rate, gpu_rate = steady_rates(m, plan)
    rate = min(cpu_rate, gpu_rate)
    builds = round(kernels * m.build_share)
    per_machine = -(-builds // plan.machines)
    jobs = plan.jobs or pool_size(plan.cores, m.build_wall_s, m.build_cpu_s, max(1, per_machine))
    # Compiles stand stopped while any GPU of their machine times with the host quiet.
    quiet = min(MAX_HOST_QUIET, rate / plan.machines * m.host_quiet_s)
    wall_b = m.build_base_wall_s * m.stretch(jobs, plan.cores) / (1.0 - quiet)
    waves = math.ceil(per_machine / jobs) if builds else 0
    gpus = max(1, plan.machines * plan.gpus)
    busy = (kernels - builds) * m.gpu_s / gpus  # kernels with nothing to build are checked first
    free, at, left = busy, 0.0, builds
    for wave in range(1, waves + 1):
        at, n = wave * wall_b, min(left, jobs * plan.machines)
        cost = n * m.gpu_s / gpus
        free, busy, left = max(free, at) + cost, busy + cost, left - n
    wall = max(1e-9, m.setup_s + max(free, at + m.check_wall_s))
    return Prediction(kernels, wall, kernels * 3600.0 / wall, 3600.0 * rate, "GPU" if gpu_rate <= cpu_rate else "CPU",
                      jobs, waves, wall_b, min(1.0, busy / wall))


def busy_time(intervals: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the (start, end) intervals."""
    total, end = 0.0, float("-inf")
    for lo, hi in sorted(intervals):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total
