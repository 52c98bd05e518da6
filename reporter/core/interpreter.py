"""How reporter starts a Python interpreter of its own: never importing from the working directory (DATA, when a
build or a validation starts there) nor from the caller's PYTHON* settings (issue 43, item 4).

`python -c` and `python -m` put the working directory first on `sys.path`, and an empty or relative PYTHONPATH entry
means it too, before even `sitecustomize` is looked for: DATA/json.py, DATA/torch.py or DATA/sitecustomize.py would
run in the child. So every child runs in isolated mode (``-I``: no working directory, no PYTHON* variables, no user
site-packages); a child that imports reporter or torch is given, by the first line it runs, reporter's own
install and this process's import path (its absolute entries only, the working directory left out), which is
where this process found them. Standard library only: the GPU worker side imports it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The folder reporter's own package is in: put first, so a child imports this copy of reporter.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])

# `python -m NAME ARGS` in an interpreter already started with -I: its path set first (argv[1], JSON), then the
# module run as __main__ with sys.argv as -m gives it.
_BOOT = ("import json, runpy, sys; p = json.loads(sys.argv[1]); sys.path[:] = p + [e for e in sys.path if e not in p]; "
         "sys.argv[:] = sys.argv[2:]; runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)")


def _here() -> str | None:
    try:
        return os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        return None


def _absolute(entries: list[str]) -> list[str]:
    """reporter's own install, then `entries` without the empty and relative ones (the working directory, wherever
    that is) and without the working directory itself; duplicates dropped, order kept."""
    here = _here()
    out = [PACKAGE_ROOT]
    for entry in entries:
        if entry and os.path.isabs(entry) and os.path.realpath(entry) != here and entry not in out:
            out.append(entry)
    return out


def import_path() -> list[str]:
    """What a child imports from: reporter's own install, then this process's `sys.path` (absolute entries only,
    the working directory left out)."""
    return _absolute(sys.path)


def pythonpath(env: dict[str, str]) -> str:
    """A PYTHONPATH for the programs a child starts in turn: reporter's own install, then the absolute entries of
    `env`'s own PYTHONPATH (an empty entry, which a bare join of an unset one leaves, means the working directory)."""
    return os.pathsep.join(_absolute(env.get("PYTHONPATH", "").split(os.pathsep)))


def script(code: str, *args: str) -> list[str]:
    """The command that runs `code`, which needs only the standard library, in an isolated interpreter."""
    return [sys.executable, "-I", "-c", code, *args]


def module(name: str, *args: str) -> list[str]:
    """The command that runs module `name` as ``python -m NAME ARGS`` would, in an isolated, unbuffered interpreter
    whose path is `import_path`."""
    return [sys.executable, "-I", "-u", "-c", _BOOT, json.dumps(import_path()), name, *args]


def die_with_parent() -> None:
    """For `subprocess`'s `preexec_fn`: the child gets SIGKILL when the process that started it dies (Linux's
    PR_SET_PDEATHSIG), so a build killed while a helper binary runs leaves no process writing into its folders.
    Elsewhere a no-op."""
    import ctypes
    import ctypes.util
    import signal
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
