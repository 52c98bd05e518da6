"""The environment every git that publishing starts runs in (publishing a site, reading the reporter clone
for a workflow's pin): no program that a repository's config names runs.

A repository's config (`.git/config`, `config.worktree` and every file they include) can name programs that git
runs: hooks (files in core.hooksPath, or since git 2.54 `hook.NAME.command`), a file-system monitor, an ssh
command, a credential helper, an askpass, a signing program, a transport (`ext::`, a remote helper, core.gitProxy
for git://), the receive-pack a push starts. Whoever wrote that config, none of them runs: the settings below are
passed as GIT_CONFIG_* variables, which outrank every config file. What a push needs from the user (a credential
helper, an ssh command, an askpass) comes from the user's own settings instead: the system and global config files
(~/.gitconfig and what it includes) and the environment, never the repository's (`push_settings`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

# Pinned for every git publishing starts, ghp-import's included (they read the environment). An empty
# core.fsmonitor is off for every git (before 2.36 a value was a hook's path, and "false" a program named false);
# an empty credential.helper empties the list of helpers read so far; an empty core.askPass is no askpass program.
_PINNED = (("core.fsmonitor", ""), ("core.hooksPath", os.devnull), ("push.gpgSign", "false"),
           ("credential.helper", ""), ("core.sshCommand", "ssh"), ("core.askPass", ""),
           # `git log` of a signed commit runs gpg.program (or gpg.ssh/x509's) when log.showSignature is on; a
           # commit's signing too. None is asked for, and the programs are git's defaults, not the config's.
           ("log.showSignature", "false"), ("commit.gpgSign", "false"), ("tag.gpgSign", "false"),
           ("gpg.program", "gpg"), ("gpg.openpgp.program", "gpg"), ("gpg.ssh.program", "ssh-keygen"),
           ("gpg.x509.program", "gpgsm"), ("gpg.ssh.defaultKeyCommand", ""), ("diff.external", ""))
# Transports git may use (GIT_ALLOW_PROTOCOL overrides every protocol.*.allow setting): a local path or file://,
# ssh, http and https. Not ext:: (the URL names a program), remote helpers (`NAME::URL`, remote.NAME.vcs: a
# git-remote-NAME program), nor git://, which takes no pushes and whose core.gitProxy is a program.
PROTOCOLS = ("file", "ssh", "http", "https")
# No pager or editor, whatever core.pager, pager.CMD or core.editor say (these outrank them; ":" is no editor).
_NO_PAGER_OR_EDITOR = {"GIT_PAGER": "cat", "GIT_EDITOR": ":"}
# What a push may take from the user's own settings (keys as `git config` prints them).
_PUSH_SETTINGS = r"^credential\.(.+\.)?helper$|^core\.sshcommand$|^core\.askpass$"
_USERS_SCOPES = ("system", "global")
_REPOSITORY_SCOPES = ("local", "worktree")
REMOTE_RECEIVE_PACK = "git-receive-pack"  # the command an ssh server is asked to run: git's own, never the config's


def _config(folder: Path, env: dict[str, str], *args: str) -> list[str]:
    """`git -C folder config -z ARGS`'s NUL-separated fields; none when git fails or finds nothing."""
    proc = subprocess.run(["git", "-C", str(folder), "config", "-z", *args], capture_output=True, text=True, env=env)
    return proc.stdout.split("\0")[:-1] if proc.returncode == 0 else []


def hook_names(folder: Path, env: dict[str, str] | None = None) -> list[str]:
    """The NAMEs of the hooks configured as `hook.NAME.*` (git 2.54 and later runs `hook.NAME.command`, whatever
    core.hooksPath says; only `hook.NAME.enabled=false` turns one off), in every config git reads in `folder`."""
    keys = _config(folder, env or _pinned(dict(os.environ), ()), "--name-only", "--get-regexp", r"^hook\..+\.")
    return list(dict.fromkeys(key[len("hook."):key.rindex(".")] for key in keys))


def _pinned(env: dict[str, str], pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    n = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    pairs = (*_PINNED, *pairs)
    for i, (key, value) in enumerate(pairs, start=n):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(n + len(pairs))
    allowed = env.get("GIT_ALLOW_PROTOCOL")
    env["GIT_ALLOW_PROTOCOL"] = ":".join(p for p in PROTOCOLS if allowed is None or p in allowed.split(":"))
    env.update(_NO_PAGER_OR_EDITOR)
    return env


def git_environment(repo: Path | None = None, base: dict[str, str] | None = None,
                    settings: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    """`base` (default: this process's environment) with `_PINNED`, then every hook configured in `repo` turned off,
    then `settings`, appended to any GIT_CONFIG_* it has; the protocols narrowed to `PROTOCOLS` (and to those `base`
    allows); no pager or editor."""
    env = dict(os.environ if base is None else base)
    hooks = tuple((f"hook.{name}.enabled", "false") for name in hook_names(repo, _pinned(dict(env), ()))) if repo else ()
    return _pinned(env, (*hooks, *settings))


def push_settings(repo: Path, base: dict[str, str] | None = None) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The user's own credential helpers, ssh command and askpass, to pass over the pins for a push from `repo`:
    those of the system and global config files (with what they include, conditions evaluated in `repo`), then those
    given in the environment (GIT_CONFIG_KEY_n), in git's order; with no ssh command or askpass there, GIT_SSH and
    SSH_ASKPASS, which those settings would outrank. Also the keys of the same settings in `repo`'s own config,
    which are not used."""
    env = dict(os.environ if base is None else base)
    parts = _config(repo, _pinned(dict(env), ()), "--show-scope", "--get-regexp", _PUSH_SETTINGS)  # scope, key LF value
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
    ignored = tuple(dict.fromkeys(key for scope, key, _ in found if scope in _REPOSITORY_SCOPES))
    return tuple(settings), ignored


def local_path(url: str, repo: Path) -> Path | None:
    """The folder of a repository on this machine that a push to `url` starts receive-pack in (a path, relative to
    `repo`, or a file:// URL), as git's `url_is_local_not_ssh` tells it from `[user@]host:path`; None for a URL
    of another transport."""
    if m := re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url):
        return Path(url[len(m.group(0)):]) if m.group(1).lower() == "file" else None
    colon, slash = url.find(":"), url.find("/")
    return repo / url if colon < 0 or 0 <= slash < colon else None


def receive_pack(repo: Path, urls: list[str]) -> str:
    """The receive-pack a push to `urls` starts: git's own; on this machine (where it reads the receiving repository's
    config) with no hook of that repository (nor one it configures by name), no file-system monitor or alternate-refs
    command, and no checkout of the pushed branch there (receive.denyCurrentBranch=updateInstead would run that
    repository's filters)."""
    local = [path for url in urls if (path := local_path(url, repo)) is not None]
    if not local:
        return REMOTE_RECEIVE_PACK
    names = dict.fromkeys(name for path in local for name in hook_names(path))
    pins = [f"core.hooksPath={os.devnull}", "core.fsmonitor=", "core.alternateRefsCommand=true",
            "receive.denyCurrentBranch=refuse", *(f"hook.{name}.enabled=false" for name in names)]
    return shlex.join(["git", *(arg for pin in pins for arg in ("-c", pin)), "receive-pack"])
