"""What `reporter import` wrote into OUT: the sha256 of every trace, so that an import replaces only its own
files as it left them. A trace someone edited by hand, or one no import wrote, is kept (one message)
unless the user passes --force; the log is OUT/.reporter-imports.json, read through the bounded reader.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..core.atomic import locked
from ..core.errors import CollectError
from ..core.safeio import read_bounded, write_inside

IMPORTS_FILE = ".reporter-imports.json"
LOCK_FILE = ".reporter-imports.lock"  # held while a trace and the log are written


def same_names(folders: list[Path]) -> str | None:
    """Run folders that would be imported into one output folder (`kernelbench-<name>`): the later would replace
    the earlier's traces, so they are refused together."""
    by_name: dict[str, list[Path]] = {}
    for f in dict.fromkeys(f.resolve() for f in folders):
        by_name.setdefault(f.name, []).append(f)
    clashes = [" and ".join(map(str, fs)) + f" would both be imported as kernelbench-{name}" for name, fs in by_name.items() if len(fs) > 1]
    return ("; ".join(clashes) + ": rename one of them, import them into different --out folders, or pass --force") if clashes else None


def _sha256(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


@dataclass
class ImportLog:
    """OUT's log of written traces (relative path -> sha256), loaded once per import and saved on each write."""

    out: Path
    force: bool = False
    written: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, out: Path, force: bool = False) -> ImportLog:
        return cls(out, force, _read_log(out))

    def write(self, parts: tuple[str, ...], text: str) -> Path:
        """Write OUT/parts (see `safeio.write_inside`) unless a file there is not the one an import left."""
        rel = "/".join(parts)
        target = self.out.joinpath(*parts)
        blob = text.encode("utf-8", "surrogatepass")
        # Another import into this OUT may be running: the log is read again and written under a lock, so each
        # trace's entry survives (two imports that each wrote back the log they had loaded lost the other's).
        with locked(self.out, LOCK_FILE):
            self.written = {**self.written, **_read_log(self.out)}
            path = self._write_checked(rel, parts, target, blob, text)
            write_inside(self.out, (IMPORTS_FILE,), json.dumps({"traces": dict(sorted(self.written.items()))}, indent=0) + "\n")
        return path

    def _write_checked(self, rel: str, parts: tuple[str, ...], target: Path, blob: bytes, text: str) -> Path:
        if (target.exists() or target.is_symlink()) and not self.force:
            try:
                current = _sha256(read_bounded(target, self.out, "(out)", "MAX_TRACE_BYTES"))
            except CollectError:
                current = ""
            if current not in (self.written.get(rel), _sha256(blob)):
                why = "was edited since the last import wrote it" if rel in self.written else "was not written by an import"
                raise CollectError(target, "(out)", f"{why}: not replaced (pass --force to replace it)")
        path = write_inside(self.out, parts, text)
        self.written[rel] = _sha256(blob)
        return path


def _read_log(out: Path) -> dict[str, str]:
    path = out / IMPORTS_FILE
    if not path.is_file() or path.is_symlink():
        return {}
    try:
        doc = json.loads(read_bounded(path, out, "(file)", "MAX_CONFIG_FILE_BYTES"))
    except (CollectError, ValueError):
        return {}  # unreadable: nothing counts as ours, so nothing is replaced without --force
    return {str(k): str(v) for k, v in doc["traces"].items()} if isinstance(doc, dict) and isinstance(doc.get("traces"), dict) else {}
