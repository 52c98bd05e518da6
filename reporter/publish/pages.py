"""Stage 4: ship a built site. Publishing never re-renders or re-validates; it only commits what is there.

The gh-pages commit is made with git plumbing (a private index, write-tree, commit-tree), the same
technique as ghp-import: the branch holds only the site, one commit per publish, and the working tree
and index of the user's checkout are never touched.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from .. import __version__
from ..errors import PublishError

MARKER = ".reporter-site"


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, input=stdin)
    if proc.returncode != 0:
        raise PublishError(f"git {' '.join(args[:2])} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout.strip()


def check_site(site: Path) -> None:
    """Refuse what is not a complete reporter build."""
    if not site.is_dir():
        raise PublishError(f"{site} does not exist; run `reporter build DATA {site}` first")
    if not any(site.iterdir()):
        raise PublishError(f"{site} is empty; run `reporter build DATA {site}` first")
    if not (site / MARKER).is_file() or not (site / "index.html").is_file():
        raise PublishError(f"{site} is not a finished reporter build (no {MARKER} or index.html): "
                           "it may be half-written; build it again")


def publish_site(site: Path, repo: Path, branch: str = "gh-pages", cname: str | None = None,
                 remote: str | None = None, message: str | None = None) -> str:
    """Commit `site` as the whole content of `branch` in `repo`; returns the new commit's sha."""
    site = site.resolve()
    check_site(site)
    try:
        _git(repo, "rev-parse", "--git-dir")
    except PublishError as exc:
        raise PublishError(f"{repo} is not a git repository: {exc}") from exc
    try:
        source = _git(repo, "rev-parse", "--short=12", "HEAD")
    except PublishError:
        source = "an uncommitted tree"
    parent = None
    try:
        parent = _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    except PublishError:
        parent = None
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "--work-tree", str(site), "add", "--all", "--force", ".", env=env)
        # The build status and caches serve the next build on this machine, not the site's readers.
        _git(repo, "--work-tree", str(site), "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--",
             ".reporter-status.json", ".reporter-cache", env=env)
        extras = {".nojekyll": ""}
        if cname:
            extras["CNAME"] = cname.strip() + "\n"
        for name, content in extras.items():
            blob = _git(repo, "hash-object", "-w", "--stdin", stdin=content)
            _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", env=env)
        tree = _git(repo, "write-tree", env=env)
    msg = message or f"Publish site built from {source} with reporter {__version__}"
    args = ["commit-tree", tree, "-m", msg] + (["-p", parent] if parent else [])
    commit = _git(repo, *args)
    _git(repo, "update-ref", f"refs/heads/{branch}", commit, *([parent] if parent else []))
    if remote:
        _git(repo, "push", remote, f"refs/heads/{branch}:refs/heads/{branch}")
    return commit


def workflow_yaml(data: str = "data") -> str:
    """A GitHub Actions workflow: build from committed data and validation results (no GPU), deploy to Pages."""
    return f"""# Written by `reporter init-workflow`. Builds the site from the committed runs and cached
# re-validation results (GitHub's runners have no GPU, so nothing is re-measured here) and deploys it
# with the official GitHub Pages actions. Enable Pages with "Source: GitHub Actions" in the settings.
name: report
on:
  push:
    branches: [main]
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
      - run: pip install .
      - run: reporter build {data} site --no-validate --strict
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
