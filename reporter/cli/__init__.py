"""Command line: thin wrappers over the stages, a module per command (or group of commands).

`main` is the `reporter` group (`app`); each module defines its commands and this one puts them on it.
"""

from __future__ import annotations

from .app import main, with_verbosity
from .build import build
from .cache import cache_group
from .export import export, schema
from .importing import import_group
from .publish import init_workflow, publish
from .review import review
from .validate import result_line, validate
from .work import work

for _command in (build, validate, work, cache_group, import_group, export, schema, publish, init_workflow, review):
    with_verbosity(_command)
    main.add_command(_command)

__all__ = ["main", "result_line", "run"]


def run() -> None:
    main()
