"""Persisting L2 reset before every timed call (issue 48, item 4).

A kernel can set aside part of L2 for "persisting" lines (`cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)` and
an access-policy window on its stream): lines marked so survive the timer's L2 flush, which is made of ordinary
writes, so the next timed call reads its weights from L2 while the reference reads them from memory (GPU MODE
hardened its flush against this after two autoresearch runs used it). Before each timed call the guard makes every
persisting line ordinary again (`cuCtxResetPersistingL2Cache`), so the flush that follows evicts them whatever set
them: a window alone can use the set-aside the driver gives every context (9,830,400 bytes on an H100 80GB, measured).
It also reads the context's persisting-L2 limit through the driver API: where a kernel raised it above the context's
own starting value (read before the kernel's module loads), the limit is put back and the run gets the
`l2_persistence` finding with the largest limit seen.

The driver is reached through ctypes (torch exposes none of these calls); `Driver` is the seam the CPU tests fake.
Standard library and torch only: the isolated worker imports this.
"""

from __future__ import annotations

import ctypes
from typing import Protocol

from ..core.schema import DynamicCheck, DynamicResult

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # cuda.h, CUlimit
CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108  # cuda.h, CUdevice_attribute


class Driver(Protocol):
    def persisting_limit(self) -> int: ...
    def reset_lines(self) -> bool: ...
    def set_limit(self, limit: int) -> None: ...


class CudaDriver:
    """The three driver calls, on the calling thread's current context (torch's primary context)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib

    def persisting_limit(self) -> int:
        value = ctypes.c_size_t(0)
        if self.lib.cuCtxGetLimit(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0:
            return 0
        return int(value.value)

    def reset_lines(self) -> bool:
        return bool(self.lib.cuCtxResetPersistingL2Cache() == 0)  # CUDA_SUCCESS

    def set_limit(self, limit: int) -> None:
        self.lib.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(limit))


def cuda_driver() -> CudaDriver | None:
    """The driver, where the device can persist L2 lines at all (Ampere and later); None elsewhere. Starts torch's
    context, so that the limit read next is the context's own, before any kernel ran."""
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        torch.cuda.synchronize()  # the primary context exists from here: its limit can be read
        lib = ctypes.CDLL("libcuda.so.1")
        if lib.cuInit(0) != 0:  # idempotent; torch may not have started the driver yet
            return None
        size, device = ctypes.c_int(0), ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(device), torch.cuda.current_device()) != 0:
            return None
        if lib.cuDeviceGetAttribute(ctypes.byref(size), CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, device) != 0:
            return None
        return CudaDriver(lib) if size.value > 0 else None
    except (OSError, AttributeError):
        return None


class L2Guard:
    """Call `before_call()` before every timed call; `result()` is the run's finding."""

    def __init__(self, driver: Driver | None) -> None:
        self.driver, self.calls, self.seen, self.largest, self.failed = driver, 0, 0, 0, 0
        self.baseline = driver.persisting_limit() if driver is not None else 0  # the context's own, before any kernel

    def before_call(self) -> None:
        if self.driver is None:
            return
        self.calls += 1
        if not self.driver.reset_lines():  # always: a window alone can use the context's own set-aside
            self.failed += 1
        limit = self.driver.persisting_limit()
        if limit > self.baseline:
            self.seen += 1
            self.largest = max(self.largest, limit)
            self.driver.set_limit(self.baseline)

    def result(self) -> DynamicResult:
        if self.driver is None:
            # not "not run": nothing could persist, so the check is not missing (the run's checks stay complete)
            return DynamicResult(DynamicCheck.L2_PERSISTENCE, None,
                                 "not applicable: no CUDA device here that can keep persisting L2 lines")
        if self.failed:
            return DynamicResult(DynamicCheck.L2_PERSISTENCE, None,
                                 f"not run: the driver refused to make persisting L2 lines ordinary before {self.failed} of "
                                 f"{self.calls} timed calls (cuCtxResetPersistingL2Cache)")
        if self.seen:
            return DynamicResult(DynamicCheck.L2_PERSISTENCE, True,
                                 f"the persisting-L2 limit was raised to {self.largest:,} bytes (the context's own: "
                                 f"{self.baseline:,}) before {self.seen} of {self.calls} timed calls: lines kept that way survive the timer's L2 flush, so each "
                                 "call would find its data in cache. Reset before every timed call, so the times here "
                                 "are not helped by it")
        return DynamicResult(DynamicCheck.L2_PERSISTENCE, False,
                             f"the persisting-L2 limit stayed at the context's own {self.baseline:,} bytes before all "
                             f"{self.calls} timed calls (persisting lines made ordinary before each)")


_guard = L2Guard(None)


def guard() -> L2Guard:
    """The worker's guard: one per process, as the worker checks one kernel."""
    return _guard


def start(driver: Driver | None) -> L2Guard:
    global _guard
    _guard = L2Guard(driver)
    return _guard
