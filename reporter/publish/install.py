"""Which reporter a Pages workflow installs: the one that is running now, pinned, under our distribution's name.

A repository that holds only `data/` has nothing for `pip install .` to install, and an unpinned install
would build the site with whatever reporter is newest, not the one whose pages were checked locally. So the
workflow names a pinned requirement of our distribution (`core.DISTRIBUTION`: the package index's `reporter`
is an unrelated project): `kernel-reporter @ git+https://HOST/OWNER/REPO@COMMIT`, from

- pip's record of how this reporter was installed (PEP 610's `direct_url.json`): a `pip install git+URL@REV`
  names the URL and the commit it resolved to; a `pip install .` (or `-e .`) names the clone's folder, whose
  remote and commit are read with git (the reporter clone, never DATA, with no program its config names);
- else the git checkout this code runs from;
- or what the user passes with `--install`: an exact version (`kernel-reporter==1.2.0`) or a commit-pinned
  git URL that a runner can reach.

A commit that is on no branch of the remote is refused, with the push that fixes it: a runner could not fetch it.
"""

from __future__ import annotations

import json
import re
import subprocess
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..core import DISTRIBUTION
from ..core.errors import ConfigError
from .gitenv import git_environment

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SSH = re.compile(r"^(?:ssh://)?git@([^:/]+)[:/](.+)$")
# NAME[extras] == VERSION, or NAME[extras] @ git+URL@REV (PEP 508 and pip's VCS form), NAME as written
_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[\w,.\s-]+\])?\s*"
                          r"(?:(?P<op>===|==|~=|>=|<=|!=|>|<)\s*(?P<version>\S+)|@\s*(?P<url>\S+))?$")
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")  # an exact version: no wildcard, no range
EXAMPLES = f"--install '{DISTRIBUTION} @ git+https://github.com/OWNER/REPO@COMMIT' or --install '{DISTRIBUTION}==VERSION'"


def normalized(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def https_url(remote: str) -> str | None:
    """A git remote as a URL GitHub's runners can clone without keys; None for a local path or file:// URL."""
    remote = remote.strip()
    if m := _SSH.match(remote):
        return f"https://{m.group(1)}/{m.group(2)}"
    return remote if remote.startswith("https://") else None


def spec_from_vcs(url: str, commit: str) -> str:
    return f"{DISTRIBUTION} @ git+{url}@{commit}"


def from_direct_url(doc: dict[str, object]) -> str | None:
    """pip's direct_url.json of a `pip install git+URL@REV`: the URL and the commit it resolved to."""
    vcs, url = doc.get("vcs_info"), doc.get("url")
    if not isinstance(vcs, dict) or vcs.get("vcs") != "git" or not isinstance(url, str):
        return None
    commit, public = vcs.get("commit_id"), https_url(url)
    return spec_from_vcs(public, commit) if isinstance(commit, str) and _COMMIT.match(commit) and public else None


def installed_from(doc: dict[str, object]) -> Path | None:
    """The folder a `pip install .` or `pip install -e .` was made from (direct_url.json's `dir_info`)."""
    url = doc.get("url")
    if "dir_info" not in doc or not isinstance(url, str) or not url.startswith("file://"):
        return None
    return Path(unquote(urlparse(url).path))


def _git(folder: Path, *args: str) -> str | None:
    """git in the reporter clone (never in DATA), with no program its config names (`gitenv.git_environment`)."""
    try:
        proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30,
                              env=git_environment(folder))
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _remote(folder: Path) -> str | None:
    """The remote the clone's branch tracks, else `origin`, else its only remote."""
    upstream = _git(folder, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    remotes = (_git(folder, "remote") or "").split()
    if upstream and (name := upstream.split("/", 1)[0]) in remotes:
        return name
    return "origin" if "origin" in remotes else remotes[0] if len(remotes) == 1 else None


def from_clone(folder: Path) -> str:
    """`kernel-reporter @ git+URL@COMMIT` for the clone at `folder`: its remote as an https URL and the commit it is
    at, which must be on a branch of that remote (as far as the clone knows); a ConfigError says what to do."""
    commit = _git(folder, "rev-parse", "HEAD")
    if commit is None or not _COMMIT.match(commit):
        raise ConfigError(f"this reporter was installed from {folder}, which is not a git clone with a commit, so the "
                          f"workflow cannot pin it: install it from a clone of its repository, or pass {EXAMPLES}")
    remote = _remote(folder)
    url = _git(folder, "config", "--get", f"remote.{remote}.url") if remote else None  # as configured, before insteadOf
    public = https_url(url) if url else None
    if remote is None or public is None:
        where = f"its remote {remote} is {url}" if remote else "it has no remote (or several, and no origin)"
        raise ConfigError(f"this reporter was installed from {folder}, but {where}, which GitHub's runners cannot clone: "
                          f"push it to a repository on GitHub (git -C {folder} remote add origin https://github.com/OWNER/REPO), "
                          f"or pass {EXAMPLES}")
    if not _git(folder, "branch", "-r", "--contains", commit, "--list", f"{remote}/*"):
        raise ConfigError(f"{folder} is at commit {commit[:12]}, which is on no branch of {remote} ({public}) as far as "
                          f"this clone knows, so a runner could not fetch it. Push it first (git -C {folder} push {remote} "
                          f"HEAD:refs/heads/BRANCH; or git -C {folder} fetch {remote}, if it was pushed from elsewhere), then run "
                          f"reporter init-workflow again; or pass {EXAMPLES}")
    return spec_from_vcs(public, commit)


def current_spec() -> str:
    """How to install the running reporter elsewhere, pinned; a ConfigError saying why when that cannot be told."""
    try:
        raw = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        doc = json.loads(raw) if raw else {}
    except (metadata.PackageNotFoundError, ValueError):
        doc = {}
    if isinstance(doc, dict) and (spec := from_direct_url(doc)):
        return spec
    folder = installed_from(doc) if isinstance(doc, dict) else None
    checkout = Path(__file__).resolve().parents[2]
    if folder is None and (checkout / ".git").exists():
        folder = checkout  # run from a source tree that pip did not install
    if folder is None:
        raise ConfigError(f"cannot tell where this reporter was installed from (no pip record of a git or folder install, "
                          f"no git checkout), so the workflow cannot pin it: pass {EXAMPLES}")
    return from_clone(folder)


def checked(spec: str) -> str:
    """`spec` if it installs one exact build of our distribution that a runner can fetch; a ConfigError saying
    which part is wrong otherwise."""
    m = _REQUIREMENT.match(spec.strip())
    if m is None:
        raise ConfigError(f"--install {spec!r} is not a requirement pip understands: give {EXAMPLES}")
    name = m.group("name")
    if normalized(name) != normalized(DISTRIBUTION):
        other = (" (on the package index, 'reporter' is an unrelated project: pip would install that)"
                 if normalized(name) == "reporter" else "")
        raise ConfigError(f"--install {spec!r} names {name!r}, not this tool's distribution {DISTRIBUTION!r}{other}: give {EXAMPLES}")
    if m.group("url"):
        return _checked_url(spec, m.group("url"))
    if m.group("op") != "==" or not _VERSION.match(m.group("version") or ""):
        raise ConfigError(f"--install {spec!r} is not pinned to one version, so the site would be built by whichever "
                          f"reporter is newest, not the one you checked it with: give {EXAMPLES}")
    return spec.strip()


def _checked_url(spec: str, url: str) -> str:
    repo, at, rev = url.removeprefix("git+").rpartition("@")
    if not url.startswith("git+") or not at or "/" in rev:  # "/" in rev: the "@" was a user name's, no revision
        raise ConfigError(f"--install {spec!r}: {url} is not a git URL pinned to a commit (git+https://HOST/REPO@COMMIT): "
                          f"give {EXAMPLES}")
    if not repo.startswith("https://"):
        raise ConfigError(f"--install {spec!r}: GitHub's runners cannot reach {repo} (only an https:// URL of a repository "
                          f"they can clone without keys): give {EXAMPLES}")
    if not _COMMIT.match(rev):
        raise ConfigError(f"--install {spec!r}: {rev!r} is not a commit but a branch or tag, which moves: give the full "
                          f"40-character commit (git rev-parse HEAD), {EXAMPLES}")
    return spec.strip()


def install_spec(given: str | None) -> str:
    """The requirement the workflow installs: `given`, checked, else the running reporter's; never `.`."""
    return checked(given) if given else checked(current_spec())
