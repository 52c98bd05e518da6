"""The environment every git that publishing starts runs in (publishing a site, reading the reporter clone
for a workflow's pin): no program that a repository's own config names runs.

A repository's config (`.git/config`, `config.worktree` and every file they include) can name programs that git
runs: hooks, a file-system monitor, an ssh command, a credential helper, an askpass, a signing program, a
transport (`ext::`, a remote helper, `core.gitProxy` for git://), the receive-pack a push starts. Whoever wrote
that config, none of them runs: the settings below are passed as GIT_CONFIG_* variables, which outrank every
config file. What a push legitimately needs (a credential helper, an ssh command, an askpass) is taken from the
user's own settings instead: the system and global config files (`~/.gitconfig` and what it includes) and the
environment, never the repository's (`push_environment`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

# Pinned for every git publishing starts, ghp-import's included (they read the environment). An empty
# credential.helper empties the list of helpers read so far; an empty core.askPass means no askpass program.
_PINNED = (("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("push.gpgSign", "false"),
           ("credential.helper", ""), ("core.sshCommand", "ssh"), ("core.askPass", ""))
# Transports git may use (GIT_ALLOW_PROTOCOL overrides every protocol.*.allow setting): a local path or file://,
# ssh, http and https. Not ext:: (the URL names a program), remote helpers (`NAME::URL`, remote.NAME.vcs: a
# git-remote-NAME program), nor git://, whose only program-free use is an unauthenticated read (core.gitProxy).
PROTOCOLS = ("file", "ssh", "http", "https")
# No pager or editor, whatever core.pager, pager.CMD or core.editor say (these outrank them; ":" is no editor).
_NO_PAGER_OR_EDITOR = {"GIT_PAGER": "cat", "GIT_EDITOR": ":"}
# What pushing may take from the user's own settings (keys as `git config` prints them).
_PUSH_SETTINGS = r"^credential\.(.+\.)?helper$|^core\.sshcommand$|^core\.askpass$"
_USERS_SCOPES = ("system", "global")
# A push to a repository on this machine starts its receive-pack here, which reads that repository's config:
# no hooks (a post-receive included), no file-system monitor or alternate-refs command, and no checkout of a
# pushed branch (receive.denyCurrentBranch=updateInstead would run that repository's filters).
LOCAL_RECEIVE_PACK = shlex.join(["git", "-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false",
                                 "-c", "core.alternateRefsCommand=true", "-c", "receive.denyCurrentBranch=refuse",
                                 "receive-pack"])
REMOTE_RECEIVE_PACK = "git-receive-pack"  # the command an ssh server is asked to run: git's own, never the config's


def git_environment(base: dict[str, str] | None = None, settings: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """`base` (default: this process's environment) with `_PINNED`, then `settings`, appended to any GIT_CONFIG_*
    it has; the protocols narrowed to `PROTOCOLS` (and to those `base` allows); no pager or editor."""
    env = dict(os.environ if base is None else base)
    n = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    pairs = (*_PINNED, *settings)
    for i, (key, value) in enumerate(pairs, start=n):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(n + len(pairs))
    allowed = env.get("GIT_ALLOW_PROTOCOL")
    env["GIT_ALLOW_PROTOCOL"] = ":".join(p for p in PROTOCOLS if allowed is None or p in allowed.split(":"))
    env.update(_NO_PAGER_OR_EDITOR)
    return env


def push_settings(repo: Path, base: dict[str, str] | None = None) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The user's own credential helpers, ssh command and askpass, to pass over the pins for a push from `repo`:
    those of the system and global config files (with what they include, conditions evaluated in `repo`), then those
    given in the environment (GIT_CONFIG_KEY_n), in git's order. With no ssh command or askpass there, GIT_SSH and
    SSH_ASKPASS, which those settings outrank. Also the same settings in `repo`'s own config, which are not used."""
    env = dict(os.environ if base is None else base)
    proc = subprocess.run(["git", "-C", str(repo), "config", "-z", "--show-scope", "--get-regexp", _PUSH_SETTINGS],
                          capture_output=True, text=True, env=git_environment(env))
    parts = proc.stdout.split("\0")[:-1] if proc.returncode == 0 else []  # scope NUL key [LF value] NUL, each
    found = [(scope, *entry.partition("\n")[::2]) for scope, entry in zip(parts[::2], parts[1::2], strict=True)]
    settings = [(key, value) for scope, key, value in found if scope in _USERS_SCOPES]
    for i in range(int(env.get("GIT_CONFIG_COUNT", "0") or 0)):  # the user's own, set in the environment
        key, value = env.get(f"GIT_CONFIG_KEY_{i}", ""), env.get(f"GIT_CONFIG_VALUE_{i}", "")
        if re.match(_PUSH_SETTINGS, key, re.IGNORECASE):
            settings.append((key, value))
    keys = {key.lower() for key, _ in settings}
    if "core.sshcommand" not in keys and env.get("GIT_SSH"):
        settings.append(("core.sshCommand", shlex.quote(env["GIT_SSH"])))
    if "core.askpass" not in keys and env.get("SSH_ASKPASS"):
        settings.append(("core.askPass", env["SSH_ASKPASS"]))
    ignored = tuple(dict.fromkeys(key for scope, key, _ in found if scope in ("local", "worktree")))
    return tuple(settings), ignored


def is_local(url: str) -> bool:
    """Whether git pushes to `url` by starting its receive-pack on this machine (a path or a file:// URL), as
    git's `url_is_local_not_ssh` tells a path from `[user@]host:path`."""
    if m := re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url):
        return m.group(1).lower() == "file"
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or 0 <= slash < colon
