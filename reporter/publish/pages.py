"""Stage 4: ship a built site. Publishing never re-renders or re-validates; it only commits what is there.

The commit is made by ghp-import (what mkdocs uses): the branch holds only the site, one commit per
publish, and the working tree and index of the user's checkout are never touched. Around it, this module
keeps what ghp-import does not: the refusal to publish anything but a finished reporter build, the
branch's existing CNAME, the commit the site was built from, and no commit when nothing changed.

Only what the build wrote is published: the files its status lists, copied as regular files (a link is
never followed, a file someone added to SITE is left out and named). The branch may not be checked out
in any worktree (ghp-import would move it under that working tree), nor, unless `force`, be the current or
the default branch or any branch that a publish did not write (its tip holds no `.reporter-site`). No
git started here runs a program that a repository's config names (`git_environment`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import ghp_import

from ..core import __version__
from ..core.errors import ConfigError, PublishError
from ..core.marker import MARKER, SOURCE_PREFIX
from ..core.sitefiles import foreign_files, owned_files, published_paths
from .gitenv import PROTOCOLS, git_environment, push_settings, receive_pack


def _changed(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if os.environ.get(k) != v}


def _run_git(repo: Path, args: tuple[str, ...], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env or git_environment(repo))


def _git_or_none(repo: Path, *args: str) -> str | None:
    """`git -C repo ARGS`'s output, or None when git fails or prints nothing. `repo` is the user's own publishing
    repository, never DATA (the build reads DATA's commit without git: `core.gitread`)."""
    proc = _run_git(repo, args)
    return (proc.stdout.strip() or None) if proc.returncode == 0 else None


def _git(repo: Path, *args: str) -> str:
    proc = _run_git(repo, args)
    if proc.returncode != 0:
        raise PublishError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout.strip()


def check_site(site: Path) -> None:
    """Refuse what is not a complete reporter build."""
    if not site.is_dir():
        raise PublishError(f"{site} does not exist; run `reporter build DATA {site}` first")
    if not any(site.iterdir()):
        raise PublishError(f"{site} is empty; run `reporter build DATA {site}` first")
    if owned_files(site) is None and _holds_runs(site):
        raise PublishError(f"{site} holds runs (a data folder), not a built site: build it, then publish what the build "
                           f"wrote: reporter build {site} site/ && reporter publish site/")
    if owned_files(site) is None or not (site / "index.html").is_file():
        raise PublishError(f"{site} is not a finished reporter build (no {MARKER} naming its status file, or no "
                           "index.html): it may be half-written, or built by an older reporter; build it again")


def _holds_runs(folder: Path) -> bool:
    """A data folder's marks at its top (only names are looked at): cached results, a problem set, a run's trace."""
    if (folder / "validation").is_dir() or (folder / "kernelbench-problems.json").is_file():
        return True
    with os.scandir(folder) as entries:
        return any(e.name.endswith("trace.json") or (e.is_dir(follow_symlinks=False) and (Path(e.path) / "trace.json").is_file())
                   for e in entries)


def _built_from(site: Path, repo: Path) -> str:
    for line in (site / MARKER).read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(SOURCE_PREFIX) and line[len(SOURCE_PREFIX):].strip():
            return line[len(SOURCE_PREFIX):].strip()
    # A site built before the marker recorded its source: say what is known, not a guess.
    head = _git_or_none(repo, "rev-parse", "--short=12", "HEAD")
    return f"an unrecorded commit (published from {head})" if head else "an unrecorded commit"


@contextlib.contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    before = {key: os.environ.get(key) for key in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# Every commit a publish makes carries this trailer, so a later publish tells its own commits from those someone
# added on top of the branch (a hand edit on GitHub). Commits of older reporters carry the default message's start.
PUBLISHED_BY = "Published-by: reporter"
_LEGACY_SUBJECT = "Publish site built from "
_MAX_WALK = 500  # commits looked back along the branch for the last one a publish wrote


@dataclass(frozen=True)
class Replaced:
    """Commits on the branch's tip that no publish wrote, newest first, and the files they changed: the next publish
    replaces the branch's content with the site, so their changes leave the tip (the history keeps them)."""

    commits: tuple[tuple[str, str], ...]  # (hash, subject)
    files: tuple[str, ...]
    since: str | None  # the last commit a publish wrote, None when none was found

    def sentence(self, branch: str) -> str:
        shown = "; ".join(f"{c[:12]} {subject!r}" for c, subject in self.commits[:5])
        more = f" and {len(self.commits) - 5} more" if len(self.commits) > 5 else ""
        files = ", ".join(self.files[:10]) + (f" and {len(self.files) - 10} more" if len(self.files) > 10 else "")
        return (f"{branch} holds {len(self.commits)} commit(s) that reporter publish did not write ({shown}{more}); "
                f"publishing replaces what they changed ({files or 'no file'}) with the site. They stay in the branch's "
                f"history{f' (git diff {self.since[:12]} {self.commits[0][0][:12]})' if self.since else ''}.")


@dataclass(frozen=True)
class Published:
    commit: str  # the branch's tip afterwards (before, for a dry run)
    changed: bool  # False: the branch already held exactly this site, so nothing was committed
    left_out: tuple[str, ...] = ()  # paths in SITE the build did not write (or no longer plain files): not published
    replaced: Replaced | None = None  # commits of someone else's that this publish replaced (would replace)
    dry_run: bool = False


def replaced_commits(repo: Path, ref: str) -> Replaced | None:
    """The commits on `ref` since the last one a publish wrote, when there are any (`Replaced`)."""
    tip = _git_or_none(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if tip is None:
        return None
    log = _git(repo, "log", "--no-show-signature", "--first-parent", f"--max-count={_MAX_WALK}", "--format=%H%x00%B%x01", tip)
    foreign: list[tuple[str, str]] = []
    since = None
    for entry in log.split("\x01"):
        if not (entry := entry.strip("\n")):
            continue
        commit, _, body = entry.partition("\x00")
        lines = body.splitlines()
        if any(line.startswith(PUBLISHED_BY) for line in lines) or (lines and lines[0].startswith(_LEGACY_SUBJECT)):
            since = commit
            break
        foreign.append((commit, lines[0] if lines else ""))
    if not foreign:
        return None
    names = _git(repo, "diff", "--no-ext-diff", "--no-textconv", "--name-only", "--no-renames", since, tip) if since else \
        _git(repo, "ls-tree", "-r", "--name-only", tip)
    return Replaced(tuple(foreign), tuple(sorted(n for n in names.splitlines() if n)), since)


@contextlib.contextmanager
def _published_files(site: Path) -> Iterator[tuple[Path, list[str]]]:
    """A copy beside `site` of what its build wrote there (regular files only, never through a link), and
    the paths left out: files someone else put in SITE, links, hard-linked files, and anything that is no
    longer a plain file."""
    written = owned_files(site) or frozenset()
    left_out = foreign_files(site, written)
    real = os.path.realpath(site)
    with tempfile.TemporaryDirectory(prefix=f".{site.name}.publish-", dir=site.parent) as tmp:
        tree = Path(tmp) / "site"
        tree.mkdir()
        for rel in published_paths(written):
            src = site / rel
            try:
                st = os.lstat(src)
                # A second hard link means the same bytes also live elsewhere: maybe a file outside SITE
                # linked in, whose content the build never wrote.
                plain = stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and os.path.realpath(src) == os.path.join(real, rel)
            except OSError:
                plain = False
            if not plain:  # a link (here or in a folder on the way), a hard link, a FIFO, or gone
                left_out.append(rel)
                continue
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            os.link(src, tree / rel, follow_symlinks=False)
        yield tree, sorted(left_out)


def _checked_out(repo: Path) -> dict[str, str]:
    """Branch -> the worktree it is checked out in, over the main worktree and every `git worktree`."""
    out: dict[str, str] = {}
    where = ""
    for line in _git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            where = line.removeprefix("worktree ")
        elif line.startswith("branch refs/heads/"):
            out[line.removeprefix("branch refs/heads/")] = where
    return out


def check_branch(repo: Path, branch: str, force: bool = False, remote: str | None = None) -> None:
    """Refuse a branch that is checked out anywhere, or (without `force`) the current or the default branch, or
    one that exists here or on `remote` (ghp-import builds on the remote's) and was not written by a publish."""
    checked_out = _checked_out(repo)
    if branch in checked_out:
        raise PublishError(f"{branch} is checked out in {checked_out[branch]}: publishing would replace the branch under "
                           "that working tree. Check out another branch there, or publish to another --branch")
    if not force and branch in {_git_or_none(repo, "symbolic-ref", "--quiet", "--short", "HEAD"), default_branch(repo)}:
        raise PublishError(f"{branch} is this repository's current or default branch: publishing replaces its whole "
                           "content with the site. Choose another --branch (e.g. gh-pages), or pass --force")
    for ref in (f"refs/heads/{branch}", f"refs/remotes/{remote or 'origin'}/{branch}"):
        tip = _git_or_none(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if tip and not force and _git_or_none(repo, "cat-file", "-t", f"{tip}:{MARKER}") != "blob":
            detached = "" if _git_or_none(repo, "symbolic-ref", "--quiet", "HEAD") else " (HEAD is detached, so it is no one's current branch)"
            raise PublishError(f"{branch} exists ({ref}) and holds no {MARKER}, so `reporter publish` did not write it{detached}: "
                               "publishing would replace its whole content with the site. Choose another --branch (e.g. "
                               "gh-pages), or pass --force to publish over it")


def publish_site(site: Path, repo: Path, branch: str = "gh-pages", cname: str | None = None,
                 remote: str | None = None, message: str | None = None, force: bool = False,
                 dry_run: bool = False) -> Published:
    """Commit what the build wrote into `site` as the whole content of `branch` in `repo` (and push it to `remote`).
    With `dry_run`, every check is made and nothing is committed: the result says what would be replaced."""
    site, repo = site.resolve(), repo.resolve()
    check_site(site)
    if _git_or_none(repo, "rev-parse", "--git-dir") is None:
        raise PublishError(f"{repo} is not a git repository")
    check_branch(repo, branch, force, remote)
    ref = f"refs/heads/{branch}"
    parent = _git_or_none(repo, "rev-parse", "--verify", "--quiet", ref)
    replaced = replaced_commits(repo, ref)
    if dry_run:
        with _published_files(site) as (_, left_out):
            return Published(parent or "", changed=False, left_out=tuple(left_out), replaced=replaced, dry_run=True)
    if cname is None and parent is not None:
        cname = _git_or_none(repo, "cat-file", "blob", f"{parent}:CNAME")  # keep the custom domain set earlier
    msg = (message or f"Publish site built from {_built_from(site, repo)} with reporter {__version__}") + \
        f"\n\n{PUBLISHED_BY} {__version__}"
    # ghp-import takes the committer from the environment or git's config; without either, name the tool.
    who = {k: v for k, v in (("GIT_COMMITTER_NAME", "reporter"), ("GIT_COMMITTER_EMAIL", "reporter@localhost"))
           if k not in os.environ and not _git_or_none(repo, "config", "user." + k.rsplit("_", 1)[1].lower())}
    try:
        with contextlib.chdir(repo), _environ({**who, **_changed(git_environment(repo))}), _published_files(site) as (tree, left_out):  # ghp-import runs git in the cwd
            ghp_import.ghp_import(str(tree), mesg=msg, branch=branch, nojekyll=True,
                                  cname=cname.strip() if cname else None, remote=remote or "origin")
    except ghp_import.GhpError as exc:
        raise PublishError(f"ghp-import failed: {exc.message}") from exc
    except (OSError, subprocess.SubprocessError, TypeError) as exc:  # TypeError: its failure message is bytes
        raise PublishError(f"ghp-import failed to commit {site} to {branch}: {exc}") from exc
    commit = _git_or_none(repo, "rev-parse", "--verify", "--quiet", ref)
    base = _git_or_none(repo, "rev-parse", "--verify", "--quiet", f"{commit}^") if commit else None
    if commit is None or commit == parent:
        raise PublishError(f"ghp-import did not commit {site} to {branch} (see git's message above)")
    done = Published(commit, changed=True, left_out=tuple(left_out), replaced=replaced)
    if base is not None and _git(repo, "rev-parse", f"{commit}^{{tree}}") == _git(repo, "rev-parse", f"{base}^{{tree}}"):
        _git(repo, "update-ref", ref, base, commit)  # the same tree again: drop the empty commit
        done = Published(base, changed=False, left_out=tuple(left_out))
    if remote:
        try:
            push(repo, remote, ref)
        except PublishError as exc:
            raise PublishError(f"{exc}; {_undo(repo, ref, branch, parent, done.commit)}") from exc
    return done


def _undo(repo: Path, ref: str, branch: str, parent: str | None, commit: str) -> str:
    """Put the local branch back where it was before a publish whose push failed (a retry makes the commit again),
    and say so: a branch left one commit ahead of its remote, or one the user never had, only puzzles."""
    if commit == parent:
        return f"the local {branch} is unchanged"
    if parent is None:
        _git(repo, "update-ref", "-d", ref, commit)
        return f"the local {branch} was not kept (it did not exist before)"
    _git(repo, "update-ref", ref, parent, commit)
    return f"the local {branch} is back at {parent[:12]}"


_ANONYMOUS = "reporter-push-url"  # a name to ask git which URLs a push to a URL (not a remote's name) goes to


def push(repo: Path, remote: str, ref: str) -> None:
    """`git push REMOTE REF:REF` with the user's own credential helpers, ssh command and askpass, never those of the
    repository's config (`gitenv.push_settings`), and git's own receive-pack, which on this machine runs none of the
    receiving repository's hooks (`gitenv.receive_pack`): the repository's config chose that repository."""
    settings, ignored = push_settings(repo)
    urls = (_git_or_none(repo, "remote", "get-url", "--push", "--all", remote)  # insteadOf and pushInsteadOf applied
            or _git_or_none(repo, "-c", f"remote.{_ANONYMOUS}.url={remote}", "remote", "get-url", "--push", "--all", _ANONYMOUS))
    command = receive_pack(repo, (urls or remote).splitlines())
    proc = _run_git(repo, ("push", f"--receive-pack={command}", "--", remote, f"{ref}:{ref}"), git_environment(repo, settings=settings))
    if proc.returncode == 0:
        return
    said = proc.stderr.strip() or proc.stdout.strip()
    why = []
    if "not allowed" in said:
        why.append(f"publishing pushes only over {', '.join(PROTOCOLS)}: a transport that is a program (ext::, a remote "
                   "helper, git:// through core.gitProxy) is refused")
    if ignored:
        why.append(f"this repository's own {', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} not used (no program "
                   "a repository's config names runs): set yours in ~/.gitconfig (git config --global ...) or in the "
                   "environment (GIT_SSH_COMMAND, GIT_ASKPASS)")
    raise PublishError(f"git push {remote} failed: {said}" + "".join(f"; {w}" for w in why))


def default_branch(repo: Path) -> str | None:
    """The branch pushes to deploy from: origin's HEAD, else the only one of main/master, else the current one."""
    remote_head = _git_or_none(repo, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    if remote_head:
        return remote_head.split("/", 1)[-1]
    usual = [b for b in ("main", "master") if _git_or_none(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{b}")]
    if len(usual) == 1:
        return usual[0]
    return _git_or_none(repo, "symbolic-ref", "--quiet", "--short", "HEAD")


def write_workflow(path: Path, data: str = "data", branch: str | None = None, *, force: bool = False,
                   install: str | None = None) -> tuple[str, str]:
    """Write the workflow to `path` (never over an existing file unless `force`); returns the branch and the
    pinned requirement it installs (`install`, else the running reporter's, see `publish.install`)."""
    from .install import install_spec
    branch = branch or default_branch(Path.cwd())
    if not branch:
        raise ConfigError("cannot tell this repository's default branch; pass --branch NAME")
    _refuse_links(path)
    if path.exists() and not force:
        raise ConfigError(f"{path} already exists; pass --force to overwrite it")
    spec = install_spec(install)
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_NOFOLLOW: a link put there since the check is refused too, never written through.
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError as exc:
        raise ConfigError(f"{path} already exists; pass --force to overwrite it") from exc
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(workflow_yaml(data, branch, spec))
    return branch, spec


def _refuse_links(path: Path) -> None:
    """No write follows a link: not `path` itself, nor a folder on its way below the current one (`.github`)."""
    here = Path.cwd()
    full = path if path.is_absolute() else here / path
    inside = [p for p in full.parents if here in p.parents]
    for p in (full, *inside):
        if p.is_symlink():
            raise ConfigError(f"{p} is a link (to {os.readlink(p)}): reporter writes no file through a link, --force "
                              "or not. Remove the link, or pass another --path")


def workflow_yaml(data: str, branch: str, install: str) -> str:
    """A GitHub Actions workflow: build from committed data and validation results (no GPU), deploy to Pages.
    It installs `install` (a pinned requirement), so it works in a repository that holds only the data."""
    return f"""# Written by `reporter init-workflow`. Builds the site from the committed runs and cached
# re-validation results (GitHub's runners have no GPU, so nothing is re-measured here) and deploys it
# with the official GitHub Pages actions. Enable Pages with "Source: GitHub Actions" in the settings.
# It installs the reporter that wrote this file (pinned below); run `reporter init-workflow --force`
# after upgrading reporter to move the pin.
name: report
on:
  push:
    branches: [{json.dumps(branch)}]
  workflow_dispatch:
permissions:
  contents: read
  pages: write
  id-token: write
concurrency:
  group: pages
  cancel-in-progress: false
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: {json.dumps("pip install " + shlex.quote(install))}
      - run: {json.dumps("reporter build " + shlex.quote(data) + " site --no-validate --strict")}
      - uses: actions/configure-pages@v5
      - uses: actions/upload-pages-artifact@v3
        with:
          path: site
  deploy:
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{{{ steps.deployment.outputs.page_url }}}}
    steps:
      - id: deployment
        uses: actions/deploy-pages@v4
"""
