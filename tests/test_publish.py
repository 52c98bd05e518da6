"""Publishing into a real local git repository and a bare remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA
from reporter.cli import main
from reporter.errors import PublishError
from reporter.publish import publish_site, workflow_yaml


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    git(r, "config", "user.email", "t@example.org")
    git(r, "config", "user.name", "t")
    (r / "README").write_text("source\n")
    git(r, "add", "README")
    git(r, "commit", "-qm", "source")
    return r


@pytest.fixture
def site(tmp_path: Path) -> Path:
    out = tmp_path / "site"
    assert CliRunner().invoke(main, ["build", str(DATA), str(out), "--no-validate"]).exit_code == 0
    return out


def test_publish_commits_only_the_site(repo: Path, site: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "--short=12", "HEAD")
    first = publish_site(site, repo, cname="report.example.org")
    files = set(git(repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    expected = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    build_state = {f for f in expected if f.startswith((".reporter-status.json", ".reporter-cache/"))}
    assert ".reporter-status.json" in build_state  # kept beside the site for the next build, never published
    assert files == (expected - build_state) | {"CNAME"}
    assert ".nojekyll" in files and "README" not in files
    msg = git(repo, "log", "-1", "--format=%B", "gh-pages")
    assert head in msg and "reporter 0.1.0" in msg
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main" and git(repo, "status", "--porcelain") == ""
    second = publish_site(site, repo)
    assert git(repo, "rev-parse", "gh-pages^") == first and git(repo, "rev-list", "--count", "gh-pages") == "2"
    assert second != first


def test_push_to_bare_remote_and_check_out_the_same_site(repo: Path, site: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "remote", "add", "origin", str(bare))
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--push", "origin"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "-b", "gh-pages", str(bare), str(out)], check=True)
    for page in site.rglob("*"):
        rel = page.relative_to(site).as_posix()
        if page.is_file() and not rel.startswith((".reporter-status.json", ".reporter-cache/")):
            assert (out / rel).read_bytes() == page.read_bytes()
    assert not (out / ".reporter-status.json").exists()


@pytest.mark.parametrize("make", ["missing", "empty", "half"])
def test_refuses_incomplete_sites(repo: Path, tmp_path: Path, site: Path, make: str) -> None:
    target = tmp_path / "bad"
    if make == "empty":
        target.mkdir()
    elif make == "half":
        target.mkdir()
        (target / "index.html").write_text("<p>partial</p>")
    with pytest.raises(PublishError):
        publish_site(target, repo)
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "rev-parse", "--verify", "gh-pages")


def test_workflow_uses_official_pages_actions(tmp_path: Path) -> None:
    text = workflow_yaml("data")
    for needle in ("actions/upload-pages-artifact", "actions/deploy-pages", "pages: write", "id-token: write",
                   "reporter build data site --no-validate"):
        assert needle in text
    res = CliRunner().invoke(main, ["init-workflow", "--path", str(tmp_path / "w.yml")])
    assert res.exit_code == 0 and (tmp_path / "w.yml").read_text() == text
