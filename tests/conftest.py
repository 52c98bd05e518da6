"""Shared helpers: sample data, fixture kernels, hand-made traces, and sites built once per test run.

The suite runs in parallel (pytest-xdist, `-n auto`): tests must not depend on each other or on order.
What is expensive and read-only is built once and shared; what a test changes is its own copy.

Shared fixtures (session scope: built once per run, by whichever xdist worker asks first, the others wait):
- ``sample_site``: data/ built by `reporter build DATA SITE --no-validate`, the user's command. READ ONLY:
  at the end of the run its files are checked unchanged, and a change fails the run. A test that writes to
  a site takes ``site_copy`` (a private copy of it, file times kept, so the build sees its own site).
- ``rendered_site``: data/ built through the render stage (``collect`` + cached validations + ``build_site``),
  the site the page tests read. READ ONLY, checked the same way.
- ``shared_build(request, name, make)``: the helper behind both, for a new expensive read-only artefact;
  ``make(folder)`` fills an empty folder once per run.
Function scope: ``sample_data`` (a private copy of data/), ``site_copy``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Each xdist worker already has a core of its own: torch's intra-op threads (one per core, spinning between
# ops) would only compete with the other workers; one each halves the CPU of the in-process worker tests.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

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
    os.environ["REPORTER_BUILD_CACHE"] = str(tmp_path_factory.mktemp("build-cache"))


@pytest.fixture(autouse=True, scope="session")
def one_render_process_per_xdist_worker() -> None:
    """Under xdist every core already runs a test: a site build's own pool of render processes would only
    add forks and pickling (about a third more CPU per build here). Tests that exercise the pool pass
    jobs=2 themselves; REPORTER_JOBS set by the caller wins."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.setdefault("REPORTER_JOBS", "1")


_SESSION_AS = None


@pytest.fixture(autouse=True)
def address_space_restored(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that leaves this process's address-space limit lowered (a build's run budget sets RLIMIT_AS in-process,
    render/budget.py) makes every later child of the worker inherit it: Chromium then dies at launch (SIGTRAP), three
    full runs in a row, in whichever browser module the worker ran next. The limit is put back after each test and the
    test that left it is named in a warning."""
    import resource
    import warnings
    global _SESSION_AS
    if _SESSION_AS is None:
        _SESSION_AS = resource.getrlimit(resource.RLIMIT_AS)
    yield
    now = resource.getrlimit(resource.RLIMIT_AS)
    if now != _SESSION_AS:
        try:
            resource.setrlimit(resource.RLIMIT_AS, _SESSION_AS)
            words = f"put back to {_SESSION_AS}"
        except ValueError:  # a lowered hard limit cannot be raised without privilege
            words = "its hard limit cannot be raised again: later browser tests of this worker will fail"
        warnings.warn(f"{request.node.nodeid} left RLIMIT_AS at {now} ({words})", stacklevel=1)


@pytest.fixture(autouse=True)
def no_fulltext_index(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's own builds make no Pagefind index (about half a CPU-second each) unless it is marked `fulltext`: the
    index is the full-text tests' subject, and a build without the binary is a case the product handles (it says so).
    Sites shared by a module or session are built before this runs, with their index."""
    if request.node.get_closest_marker("fulltext") is None:
        from reporter.render import fulltext
        monkeypatch.setattr(fulltext, "binary", lambda: None)


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


# A run with kernel versions and a profile, a partial run, and a run with Nsight Compute counters.
SMALL_RUNS = ("seed-000-l2-p10", "seed-001-partial", "seed-003-l2-p8")


def small_copy(dest: Path) -> Path:
    """SMALL_RUNS of data/ and its whole validation cache, at `dest`: for tests of messages and rebuild rules,
    which need runs of each kind, not all 16 (a build of these costs ~1.4 CPU-s, of data/ ~3.3)."""
    dest.mkdir(parents=True)
    for name in (*SMALL_RUNS, "validation"):
        shutil.copytree(DATA / name, dest / name)
    return dest


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    """A private `small_copy` of data/ at tmp_path/data."""
    return small_copy(tmp_path / "data")


def without_charts(page: Any) -> None:
    """plotly.js served empty to a Playwright `page`, over http and file:// alike: for browser tests of tables,
    links and lazy text, which would otherwise wait while it is parsed (4.8 MB, ~3 s of a busy core on every
    page with charts)."""
    page.route("**/static/plotly.*", lambda route: route.fulfill(body="", content_type="text/javascript"))


def validation_entry(data: Path, run: str) -> Path:
    """The cached result of `run`'s final kernel (against its reference) in DATA/validation."""
    from reporter.collect import read_trace
    from reporter.core import cache
    trace = read_trace(data / run / "trace.json")
    assert trace.final_kernel is not None and trace.reference_source is not None, run
    return next(cache.entry_dir(data, cache.content_key(trace.final_kernel.source, trace.reference_source)).glob("*.json"))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Each run's temporary files in a folder of its own. pytest keeps the last three runs' folders under
    /tmp/pytest-of-USER and deletes older ones when a run starts, so a second pytest on the machine (a targeted test,
    a mutation tool's many runs) deleted a running suite's files under it: 57 errors in one run of issue 50's loop.
    xdist's workers are given folders inside this one."""
    if config.option.basetemp is None and not os.environ.get("PYTEST_XDIST_WORKER"):
        config.option.basetemp = tempfile.mkdtemp(prefix="reporter-pytest-")
        config.stash[_OWN_BASETEMP] = config.option.basetemp


_OWN_BASETEMP = pytest.StashKey[str]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A passing run leaves nothing behind; a failing one keeps its files to look at (its folder is in the report)."""
    own = session.config.stash.get(_OWN_BASETEMP, None)
    if own is not None and exitstatus == 0:
        shutil.rmtree(own, ignore_errors=True)


def _run_root(factory: pytest.TempPathFactory) -> Path:
    """The folder shared by every xdist worker of this run (each worker's base temp is inside it)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    return [(p.relative_to(folder).as_posix(), p.lstat().st_size, p.lstat().st_mtime_ns) for p in sorted(folder.rglob("*"))]


def shared_build(request: pytest.FixtureRequest, name: str, make: Callable[[Path], None]) -> Path:
    """FOLDER/NAME filled by `make` once per run, under a lock, for every xdist worker; checked unchanged at
    the end of the session (a test that changed a shared artefact would make the others order-dependent)."""
    factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
    root = _run_root(factory)
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if `make` raises
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
            folder.mkdir()
            make(folder)
            done.write_text(json.dumps(_listing(folder)))
    expected = json.loads(done.read_text())

    def unchanged() -> None:
        now = [list(row) for row in _listing(folder)]
        assert now == expected, f"a test changed the shared {name} ({folder}): take a copy instead"
    request.addfinalizer(unchanged)
    return folder


@pytest.fixture(scope="session")
def sample_site(request: pytest.FixtureRequest) -> Path:
    """data/ built as a user builds it (`reporter build DATA SITE --no-validate`), once per run. Read only."""
    from click.testing import CliRunner

    from reporter.cli import main

    def make(folder: Path) -> None:
        res = CliRunner().invoke(main, ["build", str(DATA), str(folder / "site"), "--no-validate"])
        assert res.exit_code == 0, res.output
    return shared_build(request, "sample-site", make) / "site"


@pytest.fixture
def site_copy(sample_site: Path, tmp_path: Path) -> Path:
    """A private copy of `sample_site` (file times kept, so a later build still sees the site it wrote)."""
    dest = tmp_path / "site"
    shutil.copytree(sample_site, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def rendered_site(request: pytest.FixtureRequest) -> Path:
    """data/ through the render stage: collect, the cached validations, build_site. Read only."""
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.render import build_site

    def make(folder: Path) -> None:
        col = collect(DATA)
        build_site(col, load_validations(DATA, col.runs)[0], DATA, folder / "site")
    return shared_build(request, "rendered-site", make) / "site"


@pytest.fixture(scope="session")
def format4_site(request: pytest.FixtureRequest) -> Path:
    """`format4_copy` of data/ (beside it, as `../data`) through the render stage, once per run. Read only."""
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.render import build_site

    def make(folder: Path) -> None:
        data = format4_copy(folder / "data")
        col = collect(data)
        build_site(col, load_validations(data, col.runs)[0], data, folder / "site")
    return shared_build(request, "format4-site", make) / "site"


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


def launch_chromium(p: Any, path: str, args: list[str]) -> Any:
    """Debian's Chromium, launched again (up to three tries) if it dies while starting: seen under load on two cores,
    SIGTRAP before its first page, twice in a row once. A crash after launch still fails its test."""
    import time

    from playwright.sync_api import Error as PlaywrightError
    for attempt in range(3):
        try:
            return p.chromium.launch(executable_path=path, args=[*args, "--disable-dev-shm-usage"])
        except PlaywrightError:
            if attempt == 2:
                raise
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's headless Chromium, one per test module (the browser tests' modules each share one)."""
    playwright = pytest.importorskip("playwright.sync_api")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Debian's chromium is not installed")
    with playwright.sync_playwright() as p:
        b = launch_chromium(p, path, ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                      "--disable-component-update", "--no-first-run"])
        yield b
        b.close()
