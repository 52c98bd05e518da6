"""The machine's state during a validate run: clocks, power limit and persistence (NVML), and CPU load.

Read once per `reporter validate` run, right after timing, so the SM clock is the one the kernels ran
at rather than an idle one. NVML comes from `nvidia-ml-py` (the `gpu` extra; it is on GPU images); a
machine without it records only the load average.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.records import Environment, MachineState


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


# Device nodes a usable GPU leaves behind: NVIDIA on Linux, WSL2's GPU bridge, ROCm.
GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")


def import_torch() -> Any:
    """torch, without its "Failed to initialize NumPy" warning: the parent never hands torch a NumPy array,
    and torch's CPU wheel does not depend on NumPy, so a fresh install warned on every build."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        import torch
    return torch


def torch_installed() -> bool:
    """Whether torch can be imported here, asked of the import system without importing it (seconds)."""
    import importlib.util
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def gpu_available() -> bool:
    # Importing torch takes seconds; on a machine with no GPU device at all there is nothing to ask it.
    if not any(Path(n).exists() for n in GPU_NODES) and shutil.which("nvidia-smi") is None:
        return False
    try:
        torch = import_torch()
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def environment() -> Environment:
    torch = import_torch()
    driver = None
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            driver = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                    text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            driver = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return Environment(gpu=gpu, torch=torch.__version__, cuda=torch.version.cuda, driver=driver,
                       python=platform.python_version(), host=platform.node())
