"""Where one call's device time went: each launched kernel attributed to who wrote it, and its stream.

Pure functions of a list of profiler events, so they are tested on CPU with names from real traces.
Standard library only (the worker imports this). The worker profiles one call between two marker
kernels on the caller's stream (`timing.CallSet`): a long spin launched just before the call and a short
one launched right after it returns. Everything the call launched is attributed to one group:

- the submission: the kernel's name is a `__global__` (or `@triton.jit`) function of the submitted
  source, outside a library's namespace, or it was built into the submission's extension (the `.so`
  holds a `__device_stub_` host function for every kernel compiled into it);
- PyTorch (ATen, its CUDA helpers, torch.compile's Triton kernels);
- vendor libraries (cuBLAS, cuDNN, CUTLASS, CUB, cuFFT, ...);
- other.

Streams are judged by ordering, not by luck. On real CUDA, torch.profiler reports each kernel's CUPTI
stream id (`device_resource_id`) and its device start and end; a side stream the caller never waits
for shows up only if its kernel happens to overlap the marker, and a short kernel finishes before the
host has even launched the marker (the H200 run of issue 24 missed both stream cheats that way). The
spin before the call holds the caller's stream for longer than the host takes to make the call, so:

- a kernel on another stream that starts before the spin ends did not wait for the caller's earlier
  work (its inputs): `unordered_streams`;
- a kernel on another stream still running when the marker after the call starts was not waited for
  by the caller's stream: a timer recorded there after the call does not cover it: `unwaited_streams`.
  Work that waited for the spin starts when the spin ends, as the marker does, so the marker cannot
  overtake it unless the caller's stream waits for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.schema import Attribution, KernelShare, LaunchGroup

# What `torch.cuda._sleep` launches; the marker is left out of the attribution.
MARKER = "spin_kernel"
# Namespaces of libraries: a kernel qualified with one is not matched to the submission by its bare name
# (ATen has its own `elementwise_kernel`); it is the submission's only if its extension built it.
LIBRARY_NAMESPACES = frozenset({"at", "c10", "cub", "thrust", "cutlass", "cute", "cudnn", "cublas", "cublasLt", "torch", "std"})
_PYTORCH = re.compile(r"\bat::|\bc10::|^triton_|softmax_warp_(forward|backward)|\bcunn_|\bfused_dropout")
_LIBRARY = re.compile(r"cublas|cudnn|cutlass|\bcute::|\bcub::|xmma|^nvjet|gemm|gemv|cufft|fft_|curand|nccl", re.I)
_GLOBAL = re.compile(r"__global__\s+(?:(?:__launch_bounds__\s*\([^)]*\)|static|inline|__noinline__|__forceinline__)\s+)*"
                     r"void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)")
_TRITON = re.compile(r"@triton\.jit\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)")
_STUB = re.compile(rb"_Z(?:L)?(\d+)__device_stub_")
_ANON = "(anonymous namespace)"


@dataclass(frozen=True)
class Event:
    """One device event of the profiled call: a kernel, memcpy or memset, with its stream and times (µs)."""

    name: str
    stream: int
    start_us: float
    end_us: float
    device_us: float

    @property
    def is_copy(self) -> bool:
        return self.name.startswith(("Memcpy", "Memset"))


def source_kernels(source: str) -> set[str]:
    """Names of the `__global__` and `@triton.jit` functions a submitted source defines (in its CUDA strings too)."""
    return set(_GLOBAL.findall(source)) | set(_TRITON.findall(source))


def _nested(mangled: str) -> tuple[str, ...]:
    """The qualified name's parts of an Itanium-mangled function name, up to its template arguments.

    `_ZN4mine12scale_kernelEPfi` -> ("mine", "scale_kernel"); `_Z7tkernelILi4EEvPf` -> ("tkernel",).
    Anything this short reader does not know ends the name; it never guesses further.
    """
    rest = mangled[2:] if mangled.startswith("_Z") else ""
    nested = rest.startswith("N")
    rest = rest[1:] if nested else rest
    parts: list[str] = []
    while m := re.match(r"(\d+)", rest):
        n, rest = int(m.group(1)), rest[m.end():]
        part, rest = rest[:n], rest[n:]
        if len(part) < n:
            return ()
        parts.append(_ANON if part.startswith("_GLOBAL__N") else part)
        if not nested:
            break
    return tuple(parts)


def extension_kernels(blob: bytes) -> set[str]:
    """Qualified names of the kernels compiled into one extension `.so` (from its `__device_stub_` symbols).

    nvcc gives every `__global__` function a host stub named `__device_stub_<mangled kernel name>`; the
    stub's own mangling prefixes that identifier with its length, which is what marks where it ends.
    A stripped library has no such symbols: only the source's names are matched then.
    """
    found: set[str] = set()
    for m in _STUB.finditer(blob):
        start = m.end(1)
        ident = blob[start:start + int(m.group(1))]
        if len(ident) != int(m.group(1)) or not re.fullmatch(rb"\w+", ident):
            continue  # a length that runs past the symbol's end: not a stub's name
        parts = _nested(ident.decode("ascii").removeprefix("__device_stub_"))
        if parts:
            found.add("::".join(parts))
    return found


def extension_kernels_in(folder: str | None) -> set[str]:
    """`extension_kernels` of every `.so` in a build folder of the submission (its TORCH_EXTENSIONS_DIR)."""
    if not folder or not Path(folder).is_dir():
        return set()
    found: set[str] = set()
    for so in sorted(Path(folder).glob("*/*.so")) + sorted(Path(folder).glob("*.so")):
        try:
            found |= extension_kernels(so.read_bytes())
        except OSError:
            continue
    return found


def _strip_templates(text: str) -> str:
    depth, out = 0, []
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def qualified_name(name: str) -> str:
    """A profiler kernel name without return type, template arguments and parameters:
    `void at::native::elementwise_kernel<128, 2, ...>(int, ...)` -> `at::native::elementwise_kernel`."""
    text = name.replace(_ANON, "\x00")
    text = text.removeprefix("void ")
    text = _strip_templates(text).split("(", 1)[0].strip()
    return text.replace("\x00", _ANON)


def classify(name: str, source: set[str], extension: set[str]) -> LaunchGroup:
    qual = qualified_name(name)
    parts = qual.split("::")
    if qual in extension or (parts[-1] in source and (len(parts) == 1 or parts[0] not in LIBRARY_NAMESPACES)):
        return LaunchGroup.SUBMISSION
    if _PYTORCH.search(name):
        return LaunchGroup.PYTORCH
    if _LIBRARY.search(name):
        return LaunchGroup.LIBRARY
    return LaunchGroup.OTHER


def _unwaited(events: Sequence[Event], marker: Event | None) -> tuple[int, ...]:
    if marker is None:
        return ()
    return tuple(sorted({e.stream for e in events if e.stream != marker.stream and e.end_us > marker.start_us}))


def _unordered(events: Sequence[Event], spin: Event | None) -> tuple[int, ...]:
    if spin is None:
        return ()
    return tuple(sorted({e.stream for e in events if e.stream != spin.stream and e.start_us < spin.end_us}))


def attribute(events: Iterable[Event], source: set[str], extension: set[str]) -> Attribution:
    """One profiled call's attribution. `events` hold the call's device events between the two markers on
    the caller's stream: the spin launched before the call (first, when there are two) and the marker
    launched once it returned (last). Without the marker after the call no stream is judged unwaited;
    without the spin before it none is judged unordered."""
    ordered = sorted(events, key=lambda e: e.start_us)
    markers = [e for e in ordered if MARKER in e.name]
    work = [e for e in ordered if MARKER not in e.name]
    spin = markers[0] if len(markers) >= 2 else None
    rows: dict[tuple[str, LaunchGroup, int], list[float]] = {}
    for e in work:
        if e.is_copy:
            continue
        key = (e.name[:200], classify(e.name, source, extension), e.stream)
        rows.setdefault(key, []).append(e.device_us)
    kernels = tuple(KernelShare(name, group, stream, len(us), sum(us)) for (name, group, stream), us in rows.items())
    marker = markers[-1] if markers else None
    return Attribution(kernels=kernels, call_stream=marker.stream if marker else None,
                       streams=tuple(sorted({e.stream for e in work})), unwaited_streams=_unwaited(work, marker),
                       unordered_streams=_unordered(work, spin), source_kernels=tuple(sorted(source | extension)))
