"""Which reporter a Pages workflow installs: the one that is running now, pinned.

A repository that holds only `data/` has nothing for `pip install .` to install, and an unpinned
install would build the site with whatever reporter is newest, not the one whose pages were checked
locally. So the workflow names a pinned requirement: `reporter @ git+URL@COMMIT` taken from where
this reporter came from (pip's record of a VCS install, or the git checkout it runs from), or what the
user passes with `--install`.
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import metadata
from pathlib import Path

from ..core.errors import ConfigError

PACKAGE = "reporter"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# A requirement pinned to one version: NAME==VERSION, NAME @ git+URL@REVISION, or NAME @ an archive's URL.
_PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[\w,.-]+\])?\s*(==\s*[\w.+!-]+|@\s*(git\+\S+@[\w.+/-]+|(?!git\+)\S+\.(whl|tar\.gz|zip)))$")
_SSH = re.compile(r"^(?:ssh://)?git@([^:/]+)[:/](.+)$")


def https_url(remote: str) -> str | None:
    """A git remote as a URL GitHub's runners can clone without keys; None for a local path."""
    remote = remote.strip()
    if m := _SSH.match(remote):
        return f"https://{m.group(1)}/{m.group(2)}"
    if remote.startswith(("https://", "http://")):
        return remote
    return None


def spec_from_vcs(url: str, commit: str) -> str:
    return f"{PACKAGE} @ git+{url}@{commit}"


def from_direct_url(doc: dict[str, object]) -> str | None:
    """pip's direct_url.json (PEP 610) of a `pip install git+URL@REV`: the URL and the commit it resolved to."""
    vcs, url = doc.get("vcs_info"), doc.get("url")
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not isinstance(url, str):
        return None
    commit, public = vcs.get("commit_id"), https_url(url)
    return spec_from_vcs(public, commit) if isinstance(commit, str) and _COMMIT.match(commit) and public else None


def _git(folder: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def from_checkout(source: Path) -> str | None:
    """The commit and public remote of the git checkout reporter runs from (an editable install)."""
    commit, remote = _git(source, "rev-parse", "HEAD"), _git(source, "remote", "get-url", "origin")
    public = https_url(remote) if remote else None
    return spec_from_vcs(public, commit) if commit and public and _COMMIT.match(commit) else None


def current_spec() -> str | None:
    """How to install the running reporter elsewhere, pinned; None when that cannot be told."""
    try:
        raw = metadata.distribution(PACKAGE).read_text("direct_url.json")
        spec = from_direct_url(json.loads(raw)) if raw else None
    except (metadata.PackageNotFoundError, ValueError):
        spec = None
    return spec or from_checkout(Path(__file__).resolve().parents[2])


def install_spec(given: str | None) -> str:
    """The requirement the workflow installs: `given` if pinned, else the running reporter's; never `.`."""
    spec = given.strip() if given else current_spec()
    if spec is None:
        raise ConfigError("cannot tell where this reporter was installed from (no git remote, no pip record of a git "
                          "install), so the workflow cannot pin it: pass --install 'reporter @ "
                          "git+https://github.com/OWNER/REPO@COMMIT' (or 'reporter==VERSION' from your package index)")
    if not _PINNED.match(spec) or spec.startswith("."):
        raise ConfigError(f"--install {spec!r} is not pinned to one version: give NAME==VERSION or "
                          "NAME @ git+URL@COMMIT, so the site is built by the reporter that you checked it with")
    return spec
