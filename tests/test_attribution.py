"""Launch attribution, a pure function of profiler events: who wrote each kernel, on which streams it ran.

The events are real: torch.profiler traces of the seed runs (data/), read the way the worker reads its own
profiled call, with the marker kernel the worker launches on the caller's stream once the call returned.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import DATA
from reporter.core.schema import LaunchGroup
from reporter.core.suspects import STRICT_OWN_SHARE, attribution_flags, own_kernel_share, strict
from reporter.validate.attribution import MARKER, Event, attribute, classify, extension_kernels, qualified_name, source_kernels

P10, P8 = DATA / "seed-000-l2-p10", DATA / "seed-003-l2-p8"


def events(path: Path, marker_stream: int | None = 7, marker_at: float | None = None) -> list[Event]:
    """A Chrome trace's device events, plus the worker's marker (after the last event unless `marker_at`)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = [Event(e["name"], e["args"]["stream"], e["ts"], e["ts"] + e["dur"], e["dur"]) for e in doc["traceEvents"]
           if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if marker_stream is not None:
        at = marker_at if marker_at is not None else max(e.end_us for e in out) + 1.0
        out.append(Event(MARKER, marker_stream, at, at + 0.5, 0.5))
    return out


def kernel_source(folder: Path) -> str:
    return str(json.loads((folder / "trace.json").read_text(encoding="utf-8"))["final_kernel"]["source"])


def test_a_fused_kernel_does_the_work_itself() -> None:
    att = attribute(events(P10 / "p10_new_trace.json"), source_kernels(kernel_source(P10)), set())
    assert att.source_kernels == ("fused_scene_graph_kernel",)
    assert [(k.group, k.launches) for k in att.kernels] == [(LaunchGroup.PYTORCH, 2), (LaunchGroup.SUBMISSION, 1)]
    assert att.device_us(LaunchGroup.SUBMISSION) == pytest.approx(442.495)
    assert att.share(LaunchGroup.SUBMISSION) == pytest.approx(442.495 / (442.495 + 1.76 + 1.343))
    assert (att.call_stream, att.streams, att.unwaited_streams) == (7, (7,), ())
    assert attribution_flags(att) == []


def test_a_call_made_of_pytorch_and_cublas_kernels_is_suspect() -> None:
    # The reference's own call, attributed as if it were the p8 submission: none of its kernels are the submission's.
    att = attribute(events(P8 / "p8_ref_trace.json"), source_kernels(kernel_source(P8)), set())
    def group(prefix: str) -> LaunchGroup:
        (found,) = {k.group for k in att.kernels if k.name.startswith(prefix)}
        return found
    assert group("sm80_xmma_gemm_f32f32") is LaunchGroup.LIBRARY  # cuBLAS
    assert group("void (anonymous namespace)::softmax_warp_forward") is LaunchGroup.PYTORCH  # ATen without at::
    assert att.launches(LaunchGroup.PYTORCH) == 7 and att.launches(LaunchGroup.SUBMISSION) == 0
    assert att.share(LaunchGroup.SUBMISSION) == 0.0
    (flag,) = attribution_flags(att)
    assert (flag.field, flag.severity) == ("attribution.submission", "error")
    assert flag.message == ("none of the submitted kernels ran in the call: all of its kernel time is PyTorch's or a "
                            "library's (a fallback behind the built extension)")


def _call(own_us: float, other_us: float) -> list[Event]:
    return [Event("my_kernel(float*)", 7, 0, own_us, own_us), Event("sm90_xmma_gemm_f32f32_cublas", 7, own_us, own_us + other_us, other_us),
            Event(MARKER, 7, 1e6, 1e6 + 1, 1)]


def test_a_gemm_left_to_cublas_with_an_own_epilogue_is_not_suspect() -> None:
    # The ordinary Level-2 strategy (KernelBench allows it): cuBLAS does the GEMM, the submission's kernel fuses the
    # epilogue and takes 0.2% of the call's kernel time. Its share is a measured property, not a flag.
    att = attribute(_call(2.0, 998.0), {"my_kernel"}, set())
    assert attribution_flags(att) == []
    assert own_kernel_share(att) == pytest.approx(0.002)
    assert strict(own_kernel_share(att)) is False  # left out of the boards' strict view only


def test_the_strict_view_at_its_boundary_and_the_rules_for_nothing_launched() -> None:
    at = attribute(_call(STRICT_OWN_SHARE * 1000, (1 - STRICT_OWN_SHARE) * 1000), {"my_kernel"}, set())
    below = attribute(_call(STRICT_OWN_SHARE * 1000 - 1e-3, (1 - STRICT_OWN_SHARE) * 1000 + 1e-3), {"my_kernel"}, set())
    assert strict(own_kernel_share(at)) is True and strict(own_kernel_share(below)) is False
    assert attribution_flags(at) == attribution_flags(below) == []
    assert strict(None) is None and own_kernel_share(None) is None
    # a call that launches nothing computed nothing on the GPU
    (nothing,) = attribution_flags(attribute([Event(MARKER, 7, 0, 1, 1)], {"my_kernel"}, set()))
    assert nothing.message.startswith("the call launched no kernel at all")
    assert attribution_flags(None) == []  # not measured (an older result): no flag, and no guess
    # A plain-PyTorch submission defines no kernel: "done by PyTorch" says nothing new (the static scan's job)
    plain = attribute(_call(0.0, 1000.0), set(), set())
    assert plain.source_kernels == () and attribution_flags(plain) == [] and own_kernel_share(plain) is None
    assert attribution_flags(attribute([Event(MARKER, 7, 0, 1, 1)], set(), set())) == []  # ...nor one that launched nothing


def test_work_the_caller_does_not_wait_for_is_flagged() -> None:
    # KernelBench's non-default-stream kernel: cuBLAS on a stream of its own, still running when the caller's
    # stream moved on (the marker started at 20 µs, the GEMM ended at 50).
    gemm = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_cublas"
    late = [Event("copy_kernel(float*)", 7, 0, 10, 10), Event(gemm, 13, 5, 50, 45), Event(MARKER, 7, 20, 21, 1)]
    att = attribute(late, {"copy_kernel"}, set())
    assert (att.streams, att.unwaited_streams) == ((7, 13), (13,))
    (flag,) = attribution_flags(att)  # its own kernel does 10 of 55 µs: above the share rule, but the stream is not waited for
    assert (flag.field, flag.severity) == ("attribution.streams", "error") and flag.message.startswith("work runs on stream(s) 13,")
    # A side stream the caller waits for: the marker could start only after the side stream's work ended.
    waited = [Event("copy_kernel(float*)", 7, 0, 10, 10), Event("side_kernel(float*)", 13, 5, 50, 45), Event(MARKER, 7, 50, 51, 1)]
    att = attribute(waited, {"copy_kernel", "side_kernel"}, set())
    assert (att.streams, att.unwaited_streams) == ((7, 13), ())
    assert attribution_flags(att) == []
    assert attribute(waited[:2], {"copy_kernel"}, set()).unwaited_streams == ()  # no marker: nothing judged


@pytest.mark.parametrize("name, qualified", [
    ("fused_scene_graph_kernel(float const*, float*, int)", "fused_scene_graph_kernel"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
     "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)", "at::native::vectorized_elementwise_kernel"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 1, false, false>(float*, float const*)",
     "(anonymous namespace)::softmax_warp_forward"),
    ("void mine::tkernel<4>(float*)", "mine::tkernel"),
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::Tens",
     "at::native::elementwise_kernel"),  # cut at 120 characters, as LaunchStats.kernel_names keeps them
])
def test_qualified_names(name: str, qualified: str) -> None:
    assert qualified_name(name) == qualified


def test_a_library_kernel_is_never_the_submission_by_its_bare_name() -> None:
    # ATen has its own `elementwise_kernel`: a submission defining one must not get ATen's launches...
    aten = "void at::native::elementwise_kernel<128, 2, Foo>(int, Foo)"
    assert classify(aten, {"elementwise_kernel"}, set()) is LaunchGroup.PYTORCH
    assert classify("elementwise_kernel(float*, int)", {"elementwise_kernel"}, set()) is LaunchGroup.SUBMISSION
    # ...unless its extension built that very kernel (a CUTLASS or ATen template instantiated in the submission)
    cutlass = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"
    assert classify(cutlass, set(), set()) is LaunchGroup.LIBRARY
    assert classify(cutlass, set(), {"cutlass::Kernel2"}) is LaunchGroup.SUBMISSION
    assert classify("triton_poi_fused_add_relu_0", set(), set()) is LaunchGroup.PYTORCH  # torch.compile's
    assert classify("nvjet_tst_128x64_64x8_2x1_v_bz_TNT", set(), set()) is LaunchGroup.LIBRARY  # cuBLAS on Hopper
    assert classify("some_kernel_nobody_wrote", set(), set()) is LaunchGroup.OTHER


def test_kernel_names_in_the_source() -> None:
    source = '''
cuda = r"""
template <int B> __global__ void __launch_bounds__(256) tiled(float* x) {}
extern "C" __global__ void plain_c(float* x) {}
__global__ static void hidden(float* x) {}
// __device__ void helper(float* x) {} is not a kernel
"""
@triton.jit
def add_kernel(x_ptr, n: tl.constexpr):
    pass
@triton.autotune(configs=[])
@triton.jit
def tuned_kernel(x_ptr):
    pass
'''
    assert source_kernels(source) == {"tiled", "plain_c", "hidden", "add_kernel", "tuned_kernel"}


# Symbols nvcc 13 wrote for `namespace mine { __global__ void scale_kernel(float*, int) }` and
# `template <int B> __global__ void tkernel(float*)` (nm of the built .so), among others it always writes.
NVCC_SYMBOLS = (b"\x00_Z40__device_stub__ZN4mine12scale_kernelEPfiPfi\x00_ZL33__device_stub__Z7tkernelILi4EEvPfPf\x00"
                b"_ZZ40__device_stub__ZN4mine12scale_kernelEPfiPfiE8__handle\x00_ZN2at6native4reluERKNS_6TensorE\x00"
                b"_Z30__wrapper__device_stub_tkernelILi4EEvRPf\x00_ZN12_GLOBAL__N_16hiddenEv\x00")


def test_kernels_built_into_the_extension_come_from_its_device_stubs() -> None:
    # The ATen host function the extension imports is no kernel of the submission; an anonymous-namespace
    # function without a stub is not one either.
    assert extension_kernels(NVCC_SYMBOLS) == {"mine::scale_kernel", "tkernel"}
    assert extension_kernels(b"\x00_Z99__device_stub__Z3abc\x00") == set()  # a length running past the end
    assert extension_kernels(b"") == set()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_extension_kernels_of_a_real_nvcc_build(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text("namespace mine { __global__ void scale_kernel(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2.f; } }\n"
                   "template <int B> __global__ void tkernel(float* x) { x[threadIdx.x] += B; }\n"
                   "void launch(float* x) { mine::scale_kernel<<<1, 32>>>(x, 32); tkernel<4><<<1, 32>>>(x); }\n")
    subprocess.run(["nvcc", "-c", "-Xcompiler", "-fPIC", "-o", str(tmp_path / "k.o"), str(src)], check=True, timeout=600)
    assert extension_kernels((tmp_path / "k.o").read_bytes()) == {"mine::scale_kernel", "tkernel"}


def test_profiled_events_keep_streams_and_times() -> None:
    # What timing.count_launches reads from torch.profiler's FunctionEvents (CPU events are left out; a
    # missing stream id reads as -1, so no stream is judged unwaited rather than a guess).
    from types import SimpleNamespace

    pytest.importorskip("torch")
    from torch.profiler import DeviceType

    from reporter.validate.timing import profiled_events

    def ev(kind: DeviceType, name: str, stream: object, start: float, end: float, us: float) -> SimpleNamespace:
        return SimpleNamespace(device_type=kind, name=name, device_resource_id=stream,
                               time_range=SimpleNamespace(start=start, end=end), device_time_total=us)
    prof = SimpleNamespace(events=lambda: [ev(DeviceType.CUDA, MARKER, 7, 20.0, 21.0, 1.0), ev(DeviceType.CPU, "aten::add", 999, 0.0, 30.0, 0.0),
                                           ev(DeviceType.CUDA, "k(float*)", 13, 5.0, 50.0, 45.0), ev(DeviceType.CUDA, "Memset (Device)", None, 1.0, 2.0, 1.0)])
    assert profiled_events(prof) == [Event("Memset (Device)", -1, 1.0, 2.0, 1.0), Event("k(float*)", 13, 5.0, 50.0, 45.0),
                                      Event(MARKER, 7, 20.0, 21.0, 1.0)]
