"""The machine's state during a validate run: clocks, power limit and persistence (NVML), and CPU load.

Read once per `reporter validate` run, right after timing, so the SM clock is the one the kernels ran
at rather than an idle one. NVML comes from `nvidia-ml-py` (the `gpu` extra; it is on GPU images); a
machine without it records only the load average.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..core.records import MachineState


def _read(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001 - an unsupported query (e.g. on a VM) leaves that field unknown
        return None


def machine_state(index: int = 0) -> MachineState:
    load = _read(os.getloadavg)
    fields: dict[str, Any] = {"load_avg_1m": round(load[0], 2) if load else None, "cpu_count": os.cpu_count()}
    try:
        import pynvml
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML library or no driver
        return MachineState(**fields)
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        power = _read(lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h))
        persistence = _read(lambda: pynvml.nvmlDeviceGetPersistenceMode(h))
        fields.update(
            sm_clock_mhz=_read(lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)),
            sm_clock_max_mhz=_read(lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
            mem_clock_mhz=_read(lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)),
            power_limit_w=power / 1000 if power is not None else None,
            persistence_mode=None if persistence is None else persistence == pynvml.NVML_FEATURE_ENABLED,
        )
    finally:
        _read(pynvml.nvmlShutdown)
    return MachineState(**fields)
