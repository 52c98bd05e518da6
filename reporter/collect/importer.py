"""Importers: another harness's results turned into traces under DATA, each behind one small interface.

An importer is an object with a `name` (`reporter import NAME`), a one-line `summary`, a `help` text, what its
positional arguments are (`sources`), the `options` it takes and `run(request, progress)`. Importers are found
through the `reporter.importers` entry point group, and the CLI makes `reporter import NAME` from each: a new
harness format is one module and one entry point in its package's metadata, with no edit to the CLI.

```toml
[project.entry-points."reporter.importers"]
myharness = "my_package.importer:IMPORTER"
```

Every importer writes into one data folder (`--out`, `Request.out`). Its other options are plain records (no
click here): the CLI turns each into a command-line option and hands the values back in `Request.options`,
keyed by the option's `key`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from ..core.errors import LOGGER, ConfigError

GROUP = "reporter.importers"
# Importers this package ships, found even when the installed metadata is older than the checkout that runs
# (a source tree run without reinstalling has no entry points of its own yet); the entry points win.
BUILTIN = {"kernelbench": "reporter.collect.kbimport:KERNELBENCH"}

OptionKind = Literal["folder", "file", "out", "text", "flag"]  # an existing folder or file, a folder to write, text, on/off
Value = str | Path | bool | None
Progress = Callable[[str, int, int], None]  # (phase, done, total), as the CLI's progress bar takes it


@dataclass(frozen=True)
class Option:
    """One option of an importer: `--name`, what it is and whether it must be given."""

    name: str  # as typed, without the dashes: "problems", "baseline-compile"
    help: str
    kind: OptionKind = "text"
    required: bool = False

    @property
    def key(self) -> str:
        """The key of its value in `Request.options`: the name with "-" as "_"."""
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class Request:
    """What the user asked one importer for: the run folders or files, the data folder to write into, options."""

    sources: tuple[Path, ...]
    out: Path
    options: Mapping[str, Value] = field(default_factory=dict)

    def path(self, key: str) -> Path | None:
        value = self.options.get(key)
        return value if isinstance(value, Path) else None

    def text(self, key: str) -> str | None:
        value = self.options.get(key)
        return value if isinstance(value, str) else None

    def flag(self, key: str) -> bool:
        return self.options.get(key) is True


@dataclass(frozen=True)
class Imported:
    """What an import did: traces written, from how many run folders, and one message per thing worth a look."""

    written: int
    folders: int
    messages: tuple[str, ...] = ()


@runtime_checkable
class Importer(Protocol):
    name: str
    summary: str  # one line, for `reporter import --help`
    help: str  # the command's help text
    sources: str  # what the positional arguments are, e.g. "RUN_DIR..."
    options: tuple[Option, ...]

    def run(self, request: Request, progress: Progress) -> Imported:
        """Write traces under `request.out`; a ReporterError (exit code and message) when nothing can be done."""
        ...


def _targets() -> dict[str, str]:
    """Importer name -> "module:attribute", the installed entry points over the built-in ones."""
    found = dict(BUILTIN)
    for ep in metadata.entry_points(group=GROUP):
        found[ep.name] = ep.value
    return dict(sorted(found.items()))


def names() -> list[str]:
    """Every importer's name, without importing any of them (`reporter --help` stays quick)."""
    return list(_targets())


def load(name: str) -> Importer:
    """The importer registered as `name`; a ConfigError naming the entry point when it cannot be loaded."""
    target = _targets().get(name)
    if target is None:
        raise ConfigError(f"no importer named {name!r}; installed: {', '.join(names()) or 'none'}")
    try:
        obj = metadata.EntryPoint(name, target, GROUP).load()
    except Exception as exc:  # a plug-in's own failure (any kind), named with where it is registered
        raise ConfigError(f"the importer {name!r} ({target}, entry point group {GROUP}) could not be loaded: "
                          f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, Importer) or obj.name != name:
        raise ConfigError(f"{target} (entry point {name!r} in {GROUP}) is not an importer named {name!r}: it needs name, "
                          "summary, help, sources, options and run(request, progress) (reporter/collect/importer.py)")
    logging.getLogger(LOGGER).debug("importer %s from %s", name, target)
    return obj
