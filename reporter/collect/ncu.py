"""Read Nsight Compute exports (raw or details CSV, or a `.ncu-rep` through NVIDIA's module) into
`NcuKernel`s; `figures` derives what a run page shows from them (re-exported here with the profiler's
reader, so callers know one module for GPU exports). Values are kept as exported: nothing here rescales a
`.pct` metric (ncu's percentages are already 0-100; the previous viewer's x100 gave "L2 hit 279.3%").
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..core import interpreter, limits
from ..core.errors import CollectError, excerpt
from ..core.safeio import checked_path, parse_json, read_bounded
from .figures import Figure, KernelFigures, Metric, NcuKernel, derive, summarize
from .profiler import ProfilerSummary, parse_chrome_trace

# Re-exported: callers know one module for GPU exports and what is derived from them.
__all__ = ["Figure", "KernelFigures", "Metric", "NcuKernel", "ProfilerSummary", "derive", "parse_chrome_trace", "summarize"]

HEADER_PREFIX = '"ID","Process ID"'
ID_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Kernel Time"}



def parse_value(text: str) -> float | str | None:
    text = text.strip()
    if text.lower() in ("", "n/a", "no data", "nan"):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def _csv_rows(path: Path, root: Path | None = None) -> list[dict[str, str]]:
    """The rows of an ncu CSV export; `root` (default: the file's folder) is where it must resolve."""
    raw = read_bounded(path, root or path.parent, "(file)", "MAX_ATTACHMENT_BYTES")
    text = raw.decode("utf-8", errors="replace").replace("\0", "\ufffd")
    start = text.find(HEADER_PREFIX)
    if start < 0:
        raise CollectError(path, "header", f"no ncu CSV header (a line starting with {HEADER_PREFIX}) found")
    csv.field_size_limit(limits.MAX_CSV_FIELD_CHARS)  # the same as Python's default, set so the message is true
    reader = csv.DictReader(io.StringIO(text[start:]))
    try:
        return list(reader)
    except csv.Error as exc:
        where = f"line {reader.line_num} after the header"
        if "field larger" in str(exc):
            raise CollectError(path, where, f"a field is over the limit {limits.describe('MAX_CSV_FIELD_CHARS')} characters") from exc
        raise CollectError(path, where, f"not a readable CSV: {exc}") from exc


def parse_ncu_raw(path: Path, rows: list[dict[str, str]] | None = None) -> list[NcuKernel]:
    """`ncu --page raw --csv`: one column per metric, a units row, then one row per launch."""
    rows = _csv_rows(path) if rows is None else rows
    if not rows:
        return []
    units = rows[0] if not (rows[0].get("ID") or "").strip() else {}
    kernels = []
    for row in rows[1 if units else 0:]:
        metrics = {
            k: Metric(parse_value(v or ""), (units.get(k) or "").strip())
            for k, v in row.items()
            if k is not None and k not in ID_COLUMNS and not k.startswith(("thread Domain", "Id:Domain"))
        }
        kernels.append(_kernel(path, row, metrics))
    return kernels


def parse_ncu_details(path: Path, rows: list[dict[str, str]] | None = None) -> list[NcuKernel]:
    """`ncu --page details --csv --print-metric-name name`: one row per (launch, metric); rule rows skipped."""
    by_id: dict[str, tuple[dict[str, str], dict[str, Metric]]] = {}
    for row in _csv_rows(path) if rows is None else rows:
        name = (row.get("Metric Name") or "").strip()
        entry = by_id.setdefault(row.get("ID", ""), (row, {}))
        if name:
            entry[1].setdefault(name, Metric(parse_value(row.get("Metric Value") or ""), (row.get("Metric Unit") or "").strip()))
    return [_kernel(path, row, metrics) for row, metrics in by_id.values()]


def _launch_id(path: Path, text: str) -> int:
    value = parse_value(text or "0")
    if value is None:
        return 0
    if not isinstance(value, float) or not value.is_integer():
        raise CollectError(path, "ID", f"{excerpt(text, 80)!r} is not a launch number")
    return int(value)


def _kernel(path: Path, row: dict[str, str], metrics: dict[str, Metric]) -> NcuKernel:
    return NcuKernel(
        launch_id=_launch_id(path, row.get("ID") or "0"),
        name=(row.get("Kernel Name") or "").strip(),
        block=(row.get("Block Size") or "").strip(),
        grid=(row.get("Grid Size") or "").strip(),
        metrics=metrics,
    )


def ncu_python_dir() -> Path | None:
    """Where NVIDIA's ncu_report module lives: <ncu install dir>/extras/python.

    `ncu` on PATH is often a wrapper under the CUDA toolkit, so besides its own folders the usual
    install roots are searched; NCU_PYTHON_DIR overrides everything.
    """
    import glob
    import os
    import shutil
    if os.environ.get("NCU_PYTHON_DIR"):
        return Path(os.environ["NCU_PYTHON_DIR"])
    candidates: list[Path] = []
    ncu = shutil.which("ncu")
    if ncu is not None:
        for p in (Path(ncu), Path(ncu).resolve()):
            candidates += [base / "extras" / "python" for base in p.parents]
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python",
                    "/usr/local/NVIDIA-Nsight-Compute*/extras/python"):
        candidates += [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]
    return next((c for c in candidates if (c / "ncu_report.py").is_file()), None)


_NCU_DUMP = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import ncu_report
out = []
for rng in ncu_report.load_report(sys.argv[2]):
    for act in rng:
        try:
            name = act.name(ncu_report.IAction.NameBase_DEMANGLED)
        except (AttributeError, TypeError):
            name = act.name()
        metrics = {}
        for m_name in act.metric_names():
            m = act.metric_by_name(m_name)
            if m is None:
                continue
            try:
                v = m.value()
            except Exception:
                v = None
            metrics[m_name] = [v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None, m.unit() or ""]
        out.append({"name": str(name), "metrics": metrics})
json.dump(out, sys.stdout)
"""


def load_ncu_report(path: Path, python_dir: Path | None = None, root: Path | None = None) -> list[NcuKernel]:
    """`.ncu-rep` through NVIDIA's `ncu_report` module (ships with ncu under extras/python).

    The module is loaded in a child process: in a process that already holds torch it was seen to
    crash the interpreter (a native-library clash), and a parser must not take the build down.
    """
    import subprocess
    real = checked_path(path, root or path.parent, "(file)", "MAX_ATTACHMENT_BYTES")
    python_dir = python_dir or ncu_python_dir()
    if python_dir is None:
        raise CollectError(path, "ncu_report", "NVIDIA's ncu_report module was not found (set NCU_PYTHON_DIR); "
                           "export CSVs with `ncu -i FILE --page raw --csv --print-units base` instead")
    try:
        # isolated (-I): `python -c` would import from the working directory first, DATA's json.py among them
        proc = subprocess.run(interpreter.script(_NCU_DUMP, str(python_dir), str(real)), capture_output=True,
                              text=True, errors="replace", timeout=limits.NCU_REPORT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise CollectError(path, "ncu_report", f"reading the report took longer than {limits.describe('NCU_REPORT_TIMEOUT_S')}") from exc
    if proc.returncode != 0:
        raise CollectError(path, "ncu_report", f"reading the report failed (exit {proc.returncode}): "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1][:300]}")
    try:
        kernels = []
        for i, act in enumerate(parse_json(proc.stdout, path, "ncu_report")):
            metrics = {n: Metric(float(v) if isinstance(v, (int, float)) else v, u) for n, (v, u) in act["metrics"].items()}
            kernels.append(NcuKernel(i, str(act["name"]), "", "", metrics))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CollectError(path, "ncu_report", f"the report's contents are not in the expected shape ({type(exc).__name__})") from exc
    return kernels


def load_ncu(path: Path, root: Path | None = None) -> list[NcuKernel]:
    """Kernels from an ncu CSV export or report; the file must resolve inside `root` (default: its own folder)."""
    if path.suffix == ".ncu-rep":
        return load_ncu_report(path, root=root)
    rows = _csv_rows(path, root)  # read once; the header tells the long details page from the wide raw page
    if rows and "Metric Name" in rows[0]:
        return parse_ncu_details(path, rows)
    return parse_ncu_raw(path, rows)
