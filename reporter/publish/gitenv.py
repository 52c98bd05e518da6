"""The environment every git that publishing starts runs in (publishing a site, reading the reporter clone
for a workflow's pin): no program a repository's config names runs."""

from __future__ import annotations

import os

# Git settings that run a program (a file-system monitor, hooks) are turned off for every git publishing
# starts, ghp-import's included (they read the environment): publishing runs no program a repository's
# config names, whoever wrote that config. Passed as GIT_CONFIG_* variables, which outrank every config file.
_NO_PROGRAMS = (("core.fsmonitor", "false"), ("core.hooksPath", os.devnull))


def git_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with `_NO_PROGRAMS` appended to any GIT_CONFIG_* it has."""
    env = dict(os.environ if base is None else base)
    n = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    for i, (key, value) in enumerate(_NO_PROGRAMS, start=n):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(n + len(_NO_PROGRAMS))
    return env
