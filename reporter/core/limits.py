"""Every size bound on input, named once; error messages quote the name so a user can find it here.

Traces and their files are written by harnesses we do not control, so nothing is read unbounded: a
trace linked to /dev/zero, JSON nested a thousand deep or an integer of 5,000 digits must become one
message naming the file, never a traceback or an exhausted machine.
"""

from __future__ import annotations

import os

MAX_TRACE_BYTES = 64 * 1024 * 1024  # a trace.json; the largest real ones are a few MB of reasoning
MAX_ATTACHMENT_BYTES = 256 * 1024 * 1024  # an ncu CSV/report or a torch.profiler trace beside a trace
MAX_CACHE_FILE_BYTES = 16 * 1024 * 1024  # one cached validation result (DATA/validation/*/*.json)
MAX_CONFIG_FILE_BYTES = 1024 * 1024  # DATA/reviews.toml, DATA/redact-allow.txt, a KernelBench generation_config.yaml
MAX_INDEX_BYTES = 512 * 1024 * 1024  # SITE/.reporter-status.json, DATA/validation/manifest.json (KB per run)
MAX_JSON_DEPTH = 64  # nesting of objects and arrays; real traces stay under 10
MAX_INT_DIGITS = 40  # digits of one JSON integer; int64 needs 19
MAX_CSV_FIELD_CHARS = 131_072  # one CSV field (Python's csv default, named so the message can say it)
NCU_REPORT_TIMEOUT_S = 600.0  # reading a .ncu-rep through NVIDIA's module in a child process
# One run's read, redaction and rendering in a build (a seed-sized run takes ~0.1 CPU s and ~100 MB): past
# either, the run becomes one message naming the budget and the rest of the site builds. Raise them for one
# build with the environment variables named beside them.
RUN_CPU_S = 60.0  # REPORTER_RUN_CPU_S
RUN_MEMORY_BYTES = 2 * 1024 * 1024 * 1024  # REPORTER_RUN_MEMORY_MB (in MiB): what one run may add to its process
RUN_BUDGET_ENV = {"RUN_CPU_S": "REPORTER_RUN_CPU_S", "RUN_MEMORY_BYTES": "REPORTER_RUN_MEMORY_MB"}


def run_budget() -> tuple[float, int]:
    """(CPU seconds, bytes) one run may take: the environment's override where one is set, else the default."""
    cpu = _positive(RUN_BUDGET_ENV["RUN_CPU_S"], RUN_CPU_S)
    memory = _positive(RUN_BUDGET_ENV["RUN_MEMORY_BYTES"], RUN_MEMORY_BYTES / 2**20) * 2**20
    return cpu, int(memory)


def _positive(env: str, default: float) -> float:
    try:
        value = float(os.environ.get(env, ""))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


def describe(name: str) -> str:
    """`NAME (value)` for an error message, e.g. `MAX_TRACE_BYTES (67,108,864 bytes)`."""
    value = globals()[name]
    unit = " bytes" if name.endswith("_BYTES") else " s" if name.endswith("_S") else ""
    return f"{name} ({value:,}{unit})"
