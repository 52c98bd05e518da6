"""Validation results cached by content, in a folder that is committed next to the data.

Layout: ``DATA/validation/<content key>/<measurement key>.json``. The content key hashes the kernel and
the reference; the measurement key hashes the validator settings with GPU, driver, torch and CUDA. A GPU
machine looks up exactly its own settings and environment; a machine without a GPU (or a build that
does not know which settings were used) shows the newest result for the content.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..records import VALIDATION_FORMAT, Environment, ValidationResult, ValidationSettings, sha256_text

CACHE_DIR = "validation"
# Salts the content key. It stays at 3 when VALIDATION_FORMAT moves on, so results measured by an older
# harness stay findable for a build without a GPU (shown with a note); a GPU machine re-measures them.
CONTENT_KEY_VERSION = 3


def content_key(kernel_src: str, reference_src: str) -> str:
    blob = json.dumps([CONTENT_KEY_VERSION, sha256_text(kernel_src), sha256_text(reference_src)])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def env_key(env: Environment, settings: ValidationSettings) -> str:
    blob = json.dumps([env.model_dump(mode="json", exclude={"host"}), settings.model_dump(mode="json")], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def entry_dir(data: Path, key: str) -> Path:
    return data / CACHE_DIR / key


def store(data: Path, key: str, result: ValidationResult, extra_files: dict[str, Path] | None = None) -> Path:
    folder = entry_dir(data, key)
    folder.mkdir(parents=True, exist_ok=True)
    ek = env_key(result.environment, result.settings)
    names: dict[str, str] = {}
    for role, src in (extra_files or {}).items():
        name = f"{ek}.{role}.ncu{''.join(src.suffixes[-1:])}"
        (folder / name).write_bytes(src.read_bytes())
        names[role] = name
    path = folder / f"{ek}.json"
    if not names and path.is_file():
        # A re-measure without --ncu keeps the counters already profiled for this same content and machine.
        try:
            old = ValidationResult.model_validate_json(path.read_text(encoding="utf-8"))
            names = {role: n for role, n in old.ncu_files.items() if (folder / n).is_file()}
        except ValueError:
            names = {}
    if names:
        result = result.model_copy(update={"ncu_files": names})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def lookup(data: Path, key: str, env: Environment | None = None,
           settings: ValidationSettings | None = None) -> tuple[ValidationResult, Path] | None:
    """The result for this environment and settings, or (either None) the newest result for the content."""
    folder = entry_dir(data, key)
    if not folder.is_dir():
        return None
    if env is not None and settings is not None:
        candidates = [folder / f"{env_key(env, settings)}.json"]
    else:
        candidates = sorted(folder.glob("*.json"))
    found = []
    for path in candidates:
        if path.is_file():
            try:
                result = ValidationResult.model_validate_json(path.read_text(encoding="utf-8"))
            except ValueError:
                continue  # unreadable: simply not a hit
            if env is None or result.format == VALIDATION_FORMAT:
                found.append((result, path))
    if not found:
        return None
    return max(found, key=lambda rp: (rp[0].measured_at or "", rp[1].name))
