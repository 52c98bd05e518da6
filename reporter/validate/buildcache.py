"""A content-addressed cache of built extensions, shared across runs and machines.

``ROOT/<build key>/`` is the ``TORCH_EXTENSIONS_DIR`` of one kernel's build. The key hashes the kernel
source with everything that changes the binary (torch, CUDA, Python, GPU architecture), so the same
kernel is never compiled twice: another run, or another machine sharing ROOT (NFS) or receiving the
folder (the Ray executor ships it as a tar archive), loads it in about half a second. ``BUILT.json``
marks a finished build and records the environment the build used, which the check must repeat:
torch rebuilds when the flags differ. An exclusive lock on ``<key>.lock`` keeps two processes from
building one key at once. Standard library only.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.atomic import replace_file
from ..core.decode import from_doc
from . import lightbuild

MARKER = "BUILT.json"
# Measured before trusting them (benchmarks/validate_throughput.py prints the build CPU time):
# nvcc's dependency file is only needed to rebuild after a header edit, and our sources never change
# under one key. The GPU is hidden from compiles so fifteen builds do not open fifteen CUDA contexts
# on the device being timed (the architecture comes from TORCH_CUDA_ARCH_LIST instead). Light headers
# (lightbuild.py) halve what every build parses (benchmarks/build_cost.py).
ACCELERATIONS: dict[str, str] = {"TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES": "1", "CUDA_VISIBLE_DEVICES": "",
                                 lightbuild.ENV: "1"}
# Compiles yield the CPU to checks (see forkserver._child); not an acceleration, both attempts use it.
COMPILE_NICE = "10"
# Priors for sizing the compile pool until this machine has measured its own builds (H200 host,
# one load_inline build alone: 58 s wall, 80 CPU-seconds).
PRIOR_BUILD_WALL_S = 58.0
PRIOR_BUILD_CPU_S = 80.0


def default_root() -> Path:
    """Absolute: the worker runs in a folder of its own (`forkserver.own_folder`), where a relative path means another."""
    return Path(os.environ.get("REPORTER_BUILD_CACHE", Path.home() / ".cache" / "reporter" / "torch_extensions")).absolute()


def build_key(kernel_src: str, toolchain: dict[str, str | None]) -> str:
    blob = json.dumps([hashlib.sha256(kernel_src.encode()).hexdigest(), sorted(toolchain.items())])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def build_dir(root: Path, key: str) -> Path:
    return root / key


@dataclass(frozen=True)
class Marker:
    """`BUILT.json`: a finished build, the environment it used (which a check must repeat) and its cost."""

    env: Mapping[str, str | None]
    wall_s: float
    cpu_s: float

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Marker:
        return from_doc(cls, json.loads(text))


def _read_marker(path: Path) -> Marker | None:
    try:
        return Marker.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not finished, or not ours: built again
        return None


def built(root: Path, key: str) -> Marker | None:
    """The marker of a finished build, or None."""
    return _read_marker(build_dir(root, key) / MARKER)


def mark_built(root: Path, key: str, env: Mapping[str, str | None], wall_s: float, cpu_s: float) -> Marker:
    marker = Marker(dict(env), round(wall_s, 3), round(cpu_s, 3))
    build_dir(root, key).mkdir(parents=True, exist_ok=True)  # a pure-PyTorch kernel builds nothing
    replace_file(build_dir(root, key) / MARKER, marker.to_json())
    return marker


def clear(root: Path, key: str) -> None:
    shutil.rmtree(build_dir(root, key), ignore_errors=True)


@contextmanager
def locked(root: Path, key: str) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{key}.lock", "w", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def measured_cost(root: Path) -> tuple[float, float, int]:
    """(median wall s, median CPU s, builds seen) of the builds in this cache; priors when none."""
    walls, cpus = [], []
    if root.is_dir():
        for path in root.glob(f"*/{MARKER}"):
            marker = _read_marker(path)
            if marker is not None and marker.cpu_s > 1.0:  # builds that did no real work (pure-PyTorch kernels) say nothing
                walls.append(marker.wall_s)
                cpus.append(marker.cpu_s)
    if not cpus:
        return PRIOR_BUILD_WALL_S, PRIOR_BUILD_CPU_S, 0
    walls.sort()
    cpus.sort()
    return walls[len(walls) // 2], cpus[len(cpus) // 2], len(cpus)


def pool_size(cores: int, wall_s: float, cpu_s: float, builds: int | None = None) -> int:
    """Compiles to run at once so every core stays busy: cores / (cores one build keeps busy), plus one
    so a build in its single-threaded link step does not leave a core idle. Knowing how many builds
    there are, the pool grows so they run in even waves: a last wave of a few builds would leave most
    cores idle (one build keeps only about 1.4 busy)."""
    per_build = max(1.0, cpu_s / max(wall_s, 1e-6))
    base = max(1, int(cores / per_build + 0.5) + 1)
    if builds is None or builds <= base:
        return base if builds is None else max(1, builds)
    waves = builds // base
    return -(-builds // waves)


def pack(root: Path, key: str) -> bytes:
    """The finished build as a gzip'd tar, for a machine that does not share ROOT."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(build_dir(root, key), arcname=key)
    return buf.getvalue()


def unpack(root: Path, key: str, blob: bytes) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with locked(root, key):
        if built(root, key) is not None:
            return
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            names = tar.getnames()
            if any(not (n == key or n.startswith(key + "/")) for n in names):
                raise ValueError(f"build archive for {key} holds paths outside its folder")
            tar.extractall(root, filter="data")
