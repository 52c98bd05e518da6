"""Shared helpers: sample data, fixture kernels and hand-made traces."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
KERNELS = Path(__file__).resolve().parent / "fixtures" / "kernels"
# A second reference for correct.py's kernel, which is wrong for it (sigmoid, not relu); no jitter hook.
SIGMOID_NO_JITTER = (KERNELS / "reference.py").read_text().replace("torch.relu(self.lin(x))", "torch.sigmoid(self.lin(x))") \
    .replace("p.jitter_int(batch)", "batch").replace("p.jitter_int(seq, align=4)", "seq")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-gold", action="store_true", help="Rewrite tests/gold from the current output.")


@pytest.fixture(autouse=True, scope="session")
def private_build_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds of the test kernels go to a folder of this session, never the user's shared build cache."""
    import os
    os.environ["REPORTER_BUILD_CACHE"] = str(tmp_path_factory.mktemp("build-cache"))


@pytest.fixture
def update_gold(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-gold"))


def minimal_trace(**run: Any) -> dict[str, Any]:
    base = {"configuration": "cfg", "benchmark": "var", "model": "model-a", "level": 1, "problem_id": 1,
            "problem_file": "1_Test.py", "recorded_verdict": "correct"}
    base.update(run)
    return {"schema_version": 2, "run": base, "turns": []}


def write_trace(data: Path, name: str, doc: dict[str, Any] | str) -> Path:
    folder = data / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trace.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return path


def kernel_run(data: Path, name: str, kernel: str, reference: str | None = None) -> Path:
    doc = minimal_trace(problem_file=f"{name}.py")
    doc["reference_source"] = reference if reference is not None else (KERNELS / "reference.py").read_text()
    doc["final_kernel"] = {"source": kernel}
    return write_trace(data, name, doc)


@pytest.fixture
def sample_data(tmp_path: Path) -> Path:
    """A private copy of data/ (tests may add runs or caches to it)."""
    dest = tmp_path / "data"
    shutil.copytree(DATA, dest)
    return dest


@contextlib.contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """A read that blocks (a FIFO, /dev/zero) fails the test after `seconds` instead of hanging the suite;
    generous, so a busy machine never trips it."""
    def fail(*_: object) -> None:
        raise TimeoutError(f"blocked for {seconds} s")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


FORMAT4 = Path(__file__).parent / "fixtures" / "validation-format4"  # the H200 results of seeds 000 and 003 at format 4


def format4_copy(dest: Path) -> Path:
    """A copy of data/ at `dest` whose seed 000 and 003 results are the format-4 ones measured before
    issue 20 (what a repository that has not re-validated since holds). Tests that pin measured figures
    use it, so a re-validation of data/ does not move their expected values."""
    from reporter.validate.manifest import write_manifest
    shutil.copytree(DATA, dest)
    old = {json.loads((d / "16af62a31a1c.json").read_text())["kernel_sha256"] for d in FORMAT4.iterdir()}
    for entry in (dest / "validation").iterdir():
        result = entry / "16af62a31a1c.json"
        if result.is_file() and json.loads(result.read_text())["kernel_sha256"] in old:
            shutil.rmtree(entry)
    for d in FORMAT4.iterdir():
        shutil.copytree(d, dest / "validation" / d.name)
    write_manifest(dest)
    return dest


@pytest.fixture
def format4_data(tmp_path: Path) -> Path:
    return format4_copy(tmp_path / "data")
