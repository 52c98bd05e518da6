"""Every size bound on input, named once; error messages quote the name so a user can find it here.

Traces and their files are written by harnesses we do not control, so nothing is read unbounded: a
trace linked to /dev/zero, JSON nested a thousand deep or an integer of 5,000 digits must become one
message naming the file, never a traceback or an exhausted machine.
"""

from __future__ import annotations

MAX_TRACE_BYTES = 64 * 1024 * 1024  # a trace.json; the largest real ones are a few MB of reasoning
MAX_ATTACHMENT_BYTES = 256 * 1024 * 1024  # an ncu CSV/report or a torch.profiler trace beside a trace
MAX_CACHE_FILE_BYTES = 16 * 1024 * 1024  # one cached validation result (DATA/validation/*/*.json)
MAX_CONFIG_FILE_BYTES = 1024 * 1024  # DATA/reviews.toml, DATA/redact-allow.txt, a KernelBench generation_config.yaml
MAX_INDEX_BYTES = 512 * 1024 * 1024  # SITE/.reporter-status.json, DATA/validation/manifest.json (KB per run)
MAX_JSON_DEPTH = 64  # nesting of objects and arrays; real traces stay under 10
MAX_INT_DIGITS = 40  # digits of one JSON integer; int64 needs 19
MAX_CSV_FIELD_CHARS = 131_072  # one CSV field (Python's csv default, named so the message can say it)
NCU_REPORT_TIMEOUT_S = 600.0  # reading a .ncu-rep through NVIDIA's module in a child process


def describe(name: str) -> str:
    """`NAME (value)` for an error message, e.g. `MAX_TRACE_BYTES (67,108,864 bytes)`."""
    value = globals()[name]
    unit = " bytes" if name.endswith("_BYTES") else " s" if name.endswith("_S") else ""
    return f"{name} ({value:,}{unit})"
