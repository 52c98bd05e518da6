"""The light build: a kernel's load_inline extension compiled against the torch headers it needs, not all of them.

``#include <torch/extension.h>`` pulls in torch's whole C++ frontend (nn, optim, data, jit, serialize...) and
the Python bindings, and every build parses them again: on the H200 host that was most of a build's 73
CPU-seconds. A light build puts a folder first on the include path (``-I`` is searched before torch's
``-isystem`` folders) whose ``torch/extension.h``, ``torch/torch.h`` and ``torch/all.h`` hold only
``torch/types.h`` (tensors, ATen operators, factories, TORCH_CHECK) and, outside CUDA files, ``torch/python.h``
(pybind11 and every torch type caster, so a binding converts exactly the arguments it did before). The
kernel's source is not edited: only the declarations that reach it differ. A kernel that names something
only the full header declares (the frontend's namespaces, pybind11 in a CUDA file) is built as written from
the start; one that fails to compile light is rebuilt as written by `steps.build` (its "plain-retry").

The worker wraps ``torch.utils.cpp_extension.load_inline`` in every mode: a check or a profile run must pass
torch exactly the arguments the build did, or torch would build again. The folder lives in the build's own
``TORCH_EXTENSIONS_DIR``, so it travels with the build (the Ray executor's archive) and vanishes with it.
Standard library only at import (the worker imports torch itself).
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core.atomic import replace_file

ENV = "REPORTER_LIGHT_HEADERS"  # "1": light builds on (steps.build's first attempt sets it, the check repeats it)
LABEL_ENV = "REPORTER_BUILD"  # the build step's label, handed to the check so its result can say how it was built
FOLDER = "reporter-light-headers"
SHIMMED = ("torch/extension.h", "torch/torch.h", "torch/all.h")
SHIM = """// Written by reporter's light build, in place of the torch header of this name: tensors, operators,
// factories and TORCH_CHECK (torch/types.h), and outside CUDA files the Python bindings with all of torch's
// type casters (torch/python.h), without the C++ frontend (nn, optim, data, jit, serialize, ...).
#pragma once
#include <torch/types.h>
#ifndef __CUDACC__
#include <torch/python.h>
#endif
"""
LIGHT = "torch/types.h in place of torch/extension.h (and torch/python.h for the bindings)"

# Names only the full header declares: a source that uses one would fail light, so it is built as written.
_FRONTEND = ("nn", "optim", "data", "jit", "fft", "special", "sparse", "nested", "linalg", "serialize", "python",
             "cuda", "xpu", "mps", "enumtype")
_ENUMS = ("Linear", "Conv1D", "Conv2D", "Conv3D", "ConvTranspose1D", "ConvTranspose2D", "ConvTranspose3D", "Sigmoid",
          "Tanh", "ReLU", "GELU", "SiLU", "Mish", "LeakyReLU", "FanIn", "FanOut", "Constant", "Reflect", "Replicate",
          "Circular", "Nearest", "Bilinear", "Bicubic", "Trilinear", "Area", "NearestExact", "Sum", "Mean", "Max",
          "None", "BatchMean", "Zeros", "Border", "Reflection", "RNN_TANH", "RNN_RELU", "LSTM", "GRU", "Valid", "Same")
FULL_ONLY = re.compile(
    rf"\btorch::(?:{'|'.join(_FRONTEND)})::|\btorch::(?:save|load)\s*\(|\btorch::k(?:{'|'.join(_ENUMS)})\b"
    r"|\btorch::autograd::(?:Function|AutogradContext|grad|backward)\b|\bTORCH_MODULE\b|\bTORCH_VERSION"
    r"|\bPYBIND11_|\bpybind11::|\bpy::|\bTHP[A-Z]\w*")

# What this process's load_inline calls did: (extension name, None when built light, else why not).
_CALLS: list[tuple[str, str | None]] = []


def _texts(sources: str | Iterable[str] | None) -> list[str]:
    if sources is None:
        return []
    return [sources] if isinstance(sources, str) else [str(s) for s in sources]


def full_header_use(cpp_sources: str | Iterable[str] | None, cuda_sources: str | Iterable[str] | None) -> str | None:
    """Why these sources need the full torch header (the first name only it declares), or None."""
    for text in _texts(cpp_sources) + _texts(cuda_sources):
        hit = FULL_ONLY.search(text)
        if hit is not None:
            return f"the source uses {hit.group(0).rstrip('(').strip()}, which only torch/extension.h declares"
    return None


def light_arguments(arguments: dict[str, Any], folder: Path) -> dict[str, Any] | None:
    """load_inline's bound arguments for a light build (`folder` first on the include path); None: build as written."""
    if full_header_use(arguments.get("cpp_sources"), arguments.get("cuda_sources")) is not None:
        return None
    return {**arguments, "extra_include_paths": [str(folder), *(arguments.get("extra_include_paths") or [])]}


def write_shims(folder: Path) -> None:
    """The light headers, written once: a check finds them as the build left them (a newer file would rebuild)."""
    for name in SHIMMED:
        path = folder / name
        if not path.is_file():
            replace_file(path, SHIM)


def _folder() -> Path | None:
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    return Path(root) / FOLDER if os.environ.get(ENV) == "1" and root else None


def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
    """`real` (torch's load_inline) with light arguments when the environment asks for them."""
    signature = inspect.signature(real)

    def load_inline(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        name, folder = str(bound.arguments.get("name")), _folder()
        light = light_arguments(dict(bound.arguments), folder) if folder is not None else None
        if light is None:
            why = full_header_use(bound.arguments.get("cpp_sources"), bound.arguments.get("cuda_sources"))
            _CALLS.append((name, why or "light headers off"))
            return real(*args, **kwargs)
        assert folder is not None
        write_shims(folder)
        _CALLS.append((name, None))
        return real(**light)

    load_inline.reporter_light = True  # type: ignore[attr-defined]
    return load_inline


def install() -> None:
    """Wrap torch's load_inline for the rest of this process (one worker: one kernel)."""
    from torch.utils import cpp_extension
    if not getattr(cpp_extension.load_inline, "reporter_light", False):
        cpp_extension.load_inline = wrap(cpp_extension.load_inline)


def build_line() -> str | None:
    """`describe` for this process: the label the build step put in its environment, the calls made so far."""
    return describe(os.environ.get(LABEL_ENV))


def describe(label: str | None, calls: list[tuple[str, str | None]] | None = None) -> str | None:
    """The run page's build line: how the build step ended (`label`) and what the extensions were compiled against."""
    calls = _CALLS if calls is None else calls
    if label is None:
        return None
    if label == "plain-retry":
        return "rebuilt exactly as written: the first, light build did not compile"
    if label == "plain":
        return "built exactly as written (light headers and compile accelerations off)"
    if not calls:
        return "no load_inline extension to build"
    heavy = [why for _, why in calls if why is not None]
    if not heavy:
        return f"light build: {LIGHT}"
    return f"built as written: {heavy[0]}" if len(heavy) == len(calls) else \
        f"{len(calls) - len(heavy)} of {len(calls)} extensions built light ({LIGHT}); the others as written: {heavy[0]}"
