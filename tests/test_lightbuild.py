"""Light builds: which load_inline calls get the light headers, what torch is handed, and the fallback.

The pure parts are tested directly; one real C++ build on this machine (torch's CPU wheel builds C++
extensions) shows a light build that loads again without rebuilding, and a source that only compiles
with the full header falling back to the build exactly as written, with the run page saying which.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import KERNELS, kernel_run
from reporter.validate import lightbuild

SETTINGS_KW = {"nominal_trials": 1, "jitter_trials": 1, "perf_trials": 3, "warmup": 1, "timeout_s": 900}


@pytest.mark.parametrize(("source", "name"), [
    ("auto y = torch::nn::functional::relu(x);", "torch::nn::"),
    ("torch::optim::SGD opt(params, 0.1);", "torch::optim::"),
    ("auto m = torch::load(path);", "torch::load"),
    ("F::MSELossFuncOptions(torch::kMean)", "torch::kMean"),
    ("struct F : torch::autograd::Function<F> {};", "torch::autograd::Function"),
    ("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }", "PYBIND11_"),
    ("py::object o;", "py::"),
    ("#if TORCH_VERSION_MAJOR >= 2", "TORCH_VERSION"),
])
def test_names_only_the_full_header_declares_keep_the_build_as_written(source: str, name: str) -> None:
    why = lightbuild.full_header_use(["torch::Tensor f(torch::Tensor x);"], source)
    assert why == f"the source uses {name}, which only torch/extension.h declares"


@pytest.mark.parametrize("source", [
    "torch::Tensor f(torch::Tensor x) { auto y = torch::empty_like(x); TORCH_CHECK(x.is_cuda()); return y; }",
    "auto s = at::cuda::getCurrentCUDAStream(); auto o = x.options().dtype(torch::kFloat32);",
    "auto v = x.index({torch::indexing::Slice(0, 2)}); torch::NoGradGuard g; auto k = torch::kCUDA;",
    "__global__ void k(float* y) { y[threadIdx.x] = 0.f; }  // launched on torch::zeros' storage",
])
def test_ordinary_kernel_code_builds_light(source: str) -> None:
    assert lightbuild.full_header_use("torch::Tensor f(torch::Tensor x);", [source]) is None


def test_comment_naming_the_frontend_is_a_false_positive_that_only_costs_speed() -> None:
    # The scan reads text, not C++: a comment that names torch::nn:: gets the (slower, always right) full build.
    assert lightbuild.full_header_use(None, "// unlike torch::nn::Linear, this\n") is not None


def test_light_arguments_put_the_folder_first_and_keep_the_kernels_own() -> None:
    args = {"name": "e", "cpp_sources": "torch::Tensor f(torch::Tensor x);", "extra_include_paths": ["/k/inc"]}
    got = lightbuild.light_arguments(args, Path("/b/light"))
    assert got == {**args, "extra_include_paths": ["/b/light", "/k/inc"]}
    assert args["extra_include_paths"] == ["/k/inc"]  # the caller's arguments are left alone
    assert lightbuild.light_arguments({**args, "cuda_sources": "py::object o;"}, Path("/b/light")) is None


class FakeTorch:
    """Stands in for torch's load_inline: records what it was handed."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def load_inline(self, name: str, cpp_sources: Any, cuda_sources: Any = None, functions: Any = None,
                    extra_include_paths: Any = None, verbose: bool = False) -> str:
        self.calls.append({"name": name, "cpp_sources": cpp_sources, "cuda_sources": cuda_sources,
                           "functions": functions, "extra_include_paths": extra_include_paths, "verbose": verbose})
        return f"module {name}"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    record: list[tuple[str, str | None]] = []
    monkeypatch.setattr(lightbuild, "_CALLS", record)
    return record


def test_the_check_hands_torch_what_the_build_did(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  calls: list[tuple[str, str | None]]) -> None:
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    monkeypatch.setenv(lightbuild.ENV, "1")
    fake = FakeTorch()
    wrapped = lightbuild.wrap(fake.load_inline)
    assert wrapped("ext", "torch::Tensor f(torch::Tensor x);", functions=["f"]) == "module ext"
    folder = tmp_path / lightbuild.FOLDER
    assert fake.calls[0]["extra_include_paths"] == [str(folder)]
    assert fake.calls[0]["cpp_sources"] == "torch::Tensor f(torch::Tensor x);" and fake.calls[0]["functions"] == ["f"]
    shim = (folder / "torch" / "extension.h").read_text()
    assert "#include <torch/types.h>" in shim and "#include <torch/python.h>" in shim and "torch/all.h" not in shim
    assert {p.relative_to(folder).as_posix() for p in folder.rglob("*.h")} == {"torch/extension.h", "torch/torch.h", "torch/all.h"}
    # The check, in another process, repeats the call: the same arguments, and headers it does not touch
    # (a newer header would make torch's ninja rebuild).
    os.utime(folder / "torch" / "extension.h", (1_000_000, 1_000_000))
    wrapped("ext", "torch::Tensor f(torch::Tensor x);", functions=["f"])
    assert fake.calls[1] == fake.calls[0]
    assert (folder / "torch" / "extension.h").stat().st_mtime == 1_000_000
    assert calls == [("ext", None), ("ext", None)]


def test_without_the_switch_or_with_full_header_names_torch_gets_the_call_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, str | None]]) -> None:
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    monkeypatch.delenv(lightbuild.ENV, raising=False)
    fake = FakeTorch()
    wrapped = lightbuild.wrap(fake.load_inline)
    wrapped("a", "torch::Tensor f(torch::Tensor x);", extra_include_paths=["/k"])
    monkeypatch.setenv(lightbuild.ENV, "1")
    wrapped(name="b", cpp_sources="torch::Tensor f(torch::Tensor x);", cuda_sources=["auto o = torch::nn::Linear(2, 2);"])
    assert [c["extra_include_paths"] for c in fake.calls] == [["/k"], None]
    assert not (tmp_path / lightbuild.FOLDER).exists()
    assert calls == [("a", "light headers off"), ("b", "the source uses torch::nn::, which only torch/extension.h declares")]


def test_build_line() -> None:
    light, heavy = ("a", None), ("b", "the source uses py::, which only torch/extension.h declares")
    assert lightbuild.describe(None, [light]) is None
    assert lightbuild.describe("accelerated", [light]) == \
        "light build: torch/types.h in place of torch/extension.h (and torch/python.h for the bindings)"
    assert lightbuild.describe("accelerated", [heavy]) == "built as written: the source uses py::, which only torch/extension.h declares"
    assert lightbuild.describe("accelerated", [light, heavy]).startswith("1 of 2 extensions built light")  # type: ignore[union-attr]
    assert lightbuild.describe("accelerated", []) == "no load_inline extension to build"
    assert lightbuild.describe("plain-retry", [heavy]) == "rebuilt exactly as written: the first, light build did not compile"
    assert lightbuild.describe("plain", [light]) == "built exactly as written (light headers and compile accelerations off)"


def _compiles(build_dir: Path) -> list[str]:
    """The objects ninja compiled in one build folder, from its log (a rebuild would add lines)."""
    return sorted(line.split("\t")[3] for log in build_dir.rglob(".ninja_log")
                  for line in log.read_text().splitlines() if not line.startswith("#"))


@pytest.mark.slow  # two real builds of a torch extension: ~140 CPU-s
def test_a_source_that_needs_the_full_header_falls_back_to_the_build_as_written(tmp_path: Path) -> None:
    """Real C++ builds (minutes on a busy 2-core machine): one light, one that only the full header compiles."""
    pytest.importorskip("torch")
    from reporter.collect import collect
    from reporter.core.records import ValidationSettings
    from reporter.validate import validate_runs
    from reporter.validate.buildcache import default_root
    from reporter.validate.recorder import RunStats
    data = tmp_path / "data"
    for name in ("cpp_light", "cpp_full_header"):
        kernel_run(data, name, (KERNELS / f"{name}.py").read_text())
    stats: list[RunStats] = []
    results = validate_runs(data, collect(data).runs, ValidationSettings(**SETTINGS_KW), device="cpu", jobs=2, stats=stats)
    builds = {o.item.run_id: (o.build, o.item.build_key) for o in stats[0].outcomes}
    light, full = results["cpp_light"][0], results["cpp_full_header"][0]
    assert (light.verdict, full.verdict) == ("correct", "correct"), (light.reason, light.log[-2000:], full.reason)
    assert builds["cpp_light"][0] == "accelerated" and light.build_note is not None and light.build_note.startswith("light build:")
    assert builds["cpp_full_header"][0] == "plain-retry"
    assert full.build_note == "rebuilt exactly as written: the first, light build did not compile"
    # Built once, loaded by the check without a rebuild: ninja compiled main.cpp once and linked once.
    for run_id in ("cpp_light", "cpp_full_header"):
        assert _compiles(default_root() / builds[run_id][1]) == sorted(["main.o", f"{run_id}_ext.so"]), run_id
    from reporter.collect.validation import load_validations
    from reporter.render import build_site
    col = collect(data)
    build_site(col, load_validations(data, col.runs)[0], data, tmp_path / "site")
    page = re.sub(r"<[^>]+>", "", (tmp_path / "site" / "runs" / "cpp-full-header.html").read_text())
    assert "Build: rebuilt exactly as written: the first, light build did not compile" in page
    page = re.sub(r"<[^>]+>", "", (tmp_path / "site" / "runs" / "cpp-light.html").read_text())
    assert "Build: light build: torch/types.h in place of torch/extension.h" in page
