"""What issue 48's timing defences cost on a GPU, and whether the L2 reset takes a persistence hack's gain away.

    python benchmarks/runtime_defences_cost.py [--out FILE]        # needs CUDA

1. Fresh addresses (`validate/fresh.py`): the copy each timed call now makes before its flush, in µs per call, beside
   the flush every timed call already made (`flush_l2_mb` = 256 MB written), for inputs of 1 MB to 1 GB.
2. The L2 guard (`validate/l2.py`): the host time of making persisting lines ordinary and reading the limit before
   each call.
3. The kept timed outputs (`validate/aftertiming.py`): one device-to-host copy per batch of 10 rounds, in µs per
   timed call, for outputs of 1 MB to 1 GB.
4. The persistence hack itself: y = x * w where w (the module's own 16 MB weight, at one address for the whole run)
   is marked persisting with an access-policy window and the persisting-L2 limit raised; timed with the harness's
   own wall basis (fresh inputs, 256 MB flush) without and with the guard, beside the same kernel with no window.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch

from reporter.validate import l2, timing
from reporter.validate.fresh import FreshInputs

MULTIPLY = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

__global__ void mul_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * w[i];
}

torch::Tensor mul_forward(torch::Tensor x, torch::Tensor w, bool persist) {
    auto stream = c10::cuda::getCurrentCUDAStream();
    if (persist) {
        cudaDeviceProp prop;
        int device = 0;
        cudaGetDevice(&device);
        cudaGetDeviceProperties(&prop, device);
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize);
        cudaStreamAttrValue attr = {};
        attr.accessPolicyWindow.base_ptr = w.data_ptr();
        attr.accessPolicyWindow.num_bytes = std::min<size_t>(w.numel() * sizeof(float), prop.accessPolicyMaxWindowSize);
        attr.accessPolicyWindow.hitRatio = 1.0f;
        attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
    }
    auto y = torch::empty_like(x);
    long n = x.numel();
    mul_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""


def events_us(fn, reps: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / reps


def fresh_cost(lines: list[str]) -> None:
    flush = torch.empty(256 * 2**20 // 4, device="cuda")
    flush_us = events_us(flush.zero_, 50)
    lines.append(f"1. fresh addresses: the flush every timed call already makes costs {flush_us:.1f} µs")
    lines.append(f"   {'input':>8} {'copy µs/call':>13} {'share of flush':>15}")
    for mb in (1, 16, 128, 1024):
        x = torch.randn(mb * 2**20 // 4, device="cuda")
        pool = FreshInputs([[x]])
        us = events_us(lambda pool=pool: pool.next(0), 50)  # type: ignore[misc]
        lines.append(f"   {mb:>6} MB {us:>13.1f} {us / flush_us:>14.0%}")
        del pool, x
    torch.cuda.empty_cache()


def guard_cost(lines: list[str]) -> None:
    driver = l2.cuda_driver()
    if driver is None:
        lines.append("2. L2 guard: this device keeps no persisting L2 lines (the guard does nothing)")
        return
    t0 = time.perf_counter()
    for _ in range(10_000):
        driver.persisting_limit()
    us = (time.perf_counter() - t0) * 1e6 / 10_000
    own = driver.persisting_limit()
    t0 = time.perf_counter()
    for _ in range(1_000):
        driver.reset_lines()
    lines_us = (time.perf_counter() - t0) * 1e6 / 1_000
    t0 = time.perf_counter()
    for _ in range(1_000):
        driver.set_limit(own)
    limit_us = (time.perf_counter() - t0) * 1e6 / 1_000
    torch.cuda.synchronize()
    lines.append(f"2. L2 guard: the context's own persisting-L2 limit is {own:,} bytes; per timed call, making persisting "
                 f"lines ordinary costs {lines_us:.1f} µs and reading the limit {us:.2f} µs of host time; putting a raised "
                 f"limit back (only where a kernel raised it) {limit_us:.1f} µs")


def keep_cost(lines: list[str]) -> None:
    lines.append("3. kept timed outputs: one device-to-host copy per batch of 10 rounds")
    for mb in (1, 16, 128, 1024):
        y = torch.randn(mb * 2**20 // 4, device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(3):
            timing._host(y)
        us = (time.perf_counter() - t0) * 1e6 / 3
        lines.append(f"   {mb:>6} MB output: {us / 1e3:8.2f} ms a copy = {us / timing.BATCH:9.1f} µs per timed round")
        del y
    torch.cuda.empty_cache()


def persistence_gain(lines: list[str]) -> None:
    from torch.utils.cpp_extension import load_inline
    ext = load_inline("defence_cost_mul", cpp_sources="torch::Tensor mul_forward(torch::Tensor x, torch::Tensor w, bool persist);",
                      cuda_sources=MULTIPLY, functions=["mul_forward"], verbose=False)
    n = 16 * 2**20 // 4
    w = torch.randn(n, device="cuda")
    sets = [[torch.randn(n, device="cuda")] for _ in range(3)]
    props = torch.cuda.get_device_properties(0)
    lines.append(f"4. persistence hack, y = x * w with w {n * 4 / 2**20:.0f} MB at one address ({props.name}, L2 "
                 f"{props.L2_cache_size / 2**20:.0f} MB); median of 100 wall-basis calls, 256 MB flush, fresh inputs")
    for label, persist, guarded in (("no window (honest)", False, True), ("window, guard off", True, False),
                                    ("window, guard on (default)", True, True)):
        guard = l2.start(l2.cuda_driver() if guarded else None)
        timer = timing._Timer([lambda x, persist=persist: ext.mul_forward(x, w, persist)], sets, "cuda", 256)
        for _ in range(3):
            timer.wall()  # warm
        samples = [v for _ in range(10) for v in timer.wall()[0]]
        lines.append(f"   {label:<28} {statistics.median(samples) * 1e3:8.2f} µs   guard: {guard.result().detail[:90]}")
        driver = l2.CudaDriver(__import__("ctypes").CDLL("libcuda.so.1"))
        driver.reset_lines()
        driver.set_limit(guard.baseline)
    l2.start(None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs CUDA")
        return 2
    lines = [f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", ""]
    for step in (fresh_cost, guard_cost, keep_cost, persistence_gain):
        try:
            step(lines)
        except Exception as exc:  # noqa: BLE001 - one step failing still reports the others
            lines.append(f"{step.__name__} failed: {type(exc).__name__}: {exc}")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
