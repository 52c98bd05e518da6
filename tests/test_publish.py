"""Publishing into a real local git repository and a bare remote."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import small_copy
from reporter.cli import main
from reporter.core.errors import ConfigError, PublishError
from reporter.publish import MARKER, publish_site, workflow_yaml
from reporter.publish.pages import default_branch


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
def site(site_copy: Path) -> Path:
    return site_copy  # `reporter build DATA SITE --no-validate`, built once per run and copied (conftest)


def test_publish_commits_only_the_site(repo: Path, site: Path, tmp_path: Path) -> None:
    first = publish_site(site, repo, cname="report.example.org")
    assert first.changed and first.commit == git(repo, "rev-parse", "gh-pages")
    files = set(git(repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    expected = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    build_state = {f for f in expected if f.startswith((".reporter-status.json", ".reporter-cache/"))}
    assert ".reporter-status.json" in build_state  # kept beside the site for the next build, never published
    assert files == (expected - build_state) | {"CNAME"}
    assert ".nojekyll" in files and "README" not in files
    assert "reporter 0.1.0" in git(repo, "log", "-1", "--format=%B", "gh-pages")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main" and git(repo, "status", "--porcelain") == ""
    (site / "index.html").write_text((site / "index.html").read_text() + "<!-- rebuilt -->")
    second = publish_site(site, repo)
    assert second.changed and second.commit != first.commit
    assert git(repo, "rev-parse", "gh-pages^") == first.commit and git(repo, "rev-list", "--count", "gh-pages") == "2"


def test_an_unchanged_site_makes_no_commit(repo: Path, site: Path) -> None:
    first = publish_site(site, repo)
    again = publish_site(site, repo)
    assert not again.changed and again.commit == first.commit
    assert git(repo, "rev-list", "--count", "gh-pages") == "1"
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo)])
    assert res.exit_code == 0 and "nothing to commit" in res.output


def test_an_earlier_cname_is_kept(repo: Path, site: Path) -> None:
    publish_site(site, repo, cname="report.example.org")
    (site / "index.html").write_text("<p>new</p>")
    publish_site(site, repo)
    assert git(repo, "show", "gh-pages:CNAME").strip() == "report.example.org"
    publish_site(site, repo, cname="other.example.org")
    assert git(repo, "show", "gh-pages:CNAME").strip() == "other.example.org"


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_records_the_commit_the_site_was_built_from(repo: Path, site: Path, tmp_path: Path) -> None:
    # The data is a repository of its own, built at one commit; publishing happens later, after HEAD moved on.
    data = small_copy(tmp_path / "data")
    git(data, "init", "-q", "-b", "main")
    git(data, "add", ".")
    git(data, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-qm", "data")
    built_at = git(data, "rev-parse", "--short=12", "HEAD")
    out = tmp_path / "built"
    assert CliRunner().invoke(main, ["build", str(data), str(out), "--no-validate"]).exit_code == 0
    assert f"source: {built_at}\n" in (out / MARKER).read_text()
    (repo / "README").write_text("moved on\n")
    git(repo, "commit", "-qam", "later")
    publish_site(out, repo)
    msg = git(repo, "log", "-1", "--format=%B", "gh-pages")
    assert f"built from {built_at} " in msg and git(repo, "rev-parse", "--short=12", "HEAD") not in msg
    # Uncommitted changes to the data are said, not hidden: a new run the build reads, then an edited trace.
    shutil.copytree(data / "seed-001-partial", data / "seed-009-partial")
    assert CliRunner().invoke(main, ["build", str(data), str(tmp_path / "new"), "--no-validate"]).exit_code == 0
    assert f"source: {built_at}+changes\n" in (tmp_path / "new" / MARKER).read_text()
    shutil.rmtree(data / "seed-009-partial")
    trace = data / "seed-000-l2-p10" / "trace.json"
    trace.write_text(trace.read_text().replace("\"turns\"", "\"turns\" ", 1))
    assert CliRunner().invoke(main, ["build", str(data), str(tmp_path / "dirty"), "--no-validate"]).exit_code == 0
    assert f"source: {built_at}+changes\n" in (tmp_path / "dirty" / MARKER).read_text()


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


def test_a_failed_push_leaves_the_local_branch_as_it_was(repo: Path, site: Path, tmp_path: Path) -> None:
    git(repo, "remote", "add", "origin", str(tmp_path / "no-such-remote.git"))
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--push", "origin"])
    assert res.exit_code == 4 and "git push origin failed" in res.output
    assert "gh-pages was not kept" in res.output
    # No branch was there before, so none is left behind for the next `git branch` to puzzle over.
    assert git(repo, "branch", "--list", "gh-pages") == ""
    first = publish_site(site, repo)  # a branch that was there goes back to its tip
    (site / "index.html").write_text((site / "index.html").read_text() + "<!-- rebuilt -->")
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--push", "origin"])
    assert res.exit_code == 4 and f"gh-pages is back at {first.commit[:12]}" in res.output
    assert git(repo, "rev-parse", "gh-pages") == first.commit


@pytest.mark.parametrize("make", ["missing", "empty", "half"])
def test_refuses_incomplete_sites(repo: Path, tmp_path: Path, make: str) -> None:
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


PIN = "kernel-reporter @ git+https://github.com/acme/kernel-reporter@" + "0123456789abcdef" * 2 + "01234567"


def test_workflow_uses_official_pages_actions(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = workflow_yaml("data", "trunk", PIN)
    doc = yaml.safe_load(text)
    assert doc[True]["push"]["branches"] == ["trunk"]  # YAML 1.1 reads the key `on` as True
    for needle in ("actions/upload-pages-artifact", "actions/deploy-pages", "pages: write", "id-token: write",
                   "reporter build data site --no-validate"):
        assert needle in text
    monkeypatch.chdir(repo)
    git(repo, "branch", "-m", "main", "develop")
    res = CliRunner().invoke(main, ["init-workflow", "--path", "w.yml", "--install", PIN])
    assert res.exit_code == 0, res.output
    assert (repo / "w.yml").read_text() == workflow_yaml("data", "develop", PIN)


def test_workflow_never_overwrites_without_force(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    (repo / "w.yml").write_text("mine\n")
    res = CliRunner().invoke(main, ["init-workflow", "--path", "w.yml", "--branch", "release", "--install", PIN])
    assert res.exit_code == 2 and "already exists; pass --force" in res.output
    assert (repo / "w.yml").read_text() == "mine\n"
    res = CliRunner().invoke(main, ["init-workflow", "--path", "w.yml", "--branch", "release", "--force", "--install", PIN])
    assert res.exit_code == 0 and yaml.safe_load((repo / "w.yml").read_text())[True]["push"]["branches"] == ["release"]


def _build_steps(path: Path) -> list[str]:
    return [step["run"] for step in yaml.safe_load(path.read_text())["jobs"]["build"]["steps"] if "run" in step]


def test_workflow_pins_the_reporter_that_wrote_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # where the pin comes from is tests/test_workflow.py's; here, what init-workflow does with it
    from reporter.publish import install

    def unknown() -> str:
        raise ConfigError("cannot tell where this reporter was installed from ...: pass --install ...")
    monkeypatch.setattr(install, "current_spec", unknown)
    monkeypatch.chdir(repo)
    res = CliRunner().invoke(main, ["init-workflow", "--path", "w.yml"])
    assert res.exit_code == 2 and "pass --install" in res.output and not (repo / "w.yml").exists()
    monkeypatch.setattr(install, "current_spec", lambda: PIN)
    res = CliRunner().invoke(main, ["init-workflow", "--path", "w.yml"])
    assert res.exit_code == 0 and f"installs {PIN}" in res.output
    assert _build_steps(repo / "w.yml")[0] == f"pip install '{PIN}'"


def test_default_branch_prefers_the_remote_head(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    git(clone, "checkout", "-q", "-b", "feature")
    assert default_branch(clone) == "main"
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "branch", "-q", "master")
    assert default_branch(repo) == "feature"  # main and master both exist: the current branch


def test_a_machine_without_a_git_identity_still_publishes(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.gitconfig
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    bare = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    done = publish_site(site, bare)
    assert git(bare, "log", "-1", "--format=%cn <%ce>", done.commit) == "reporter <reporter@localhost>"
    assert "GIT_COMMITTER_NAME" not in os.environ  # set for the commit only


def test_only_the_files_the_build_wrote_are_published(repo: Path, site: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("never published")
    (site / "leak.txt").symlink_to(outside)
    (site / "runs" / "mine.txt").write_text("a user's note")
    (site / "404.html").unlink()
    (site / "404.html").symlink_to(outside)  # a file the build wrote, now a link: left out too
    done = publish_site(site, repo)
    files = set(git(repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    assert "index.html" in files and not {"leak.txt", "runs/mine.txt", "404.html"} & files
    assert set(done.left_out) == {"leak.txt", "runs/mine.txt", "404.html"}
    assert subprocess.run(["git", "-C", str(repo), "grep", "-q", "never published", "gh-pages"]).returncode == 1


def test_refuses_the_current_default_or_a_checked_out_branch(repo: Path, site: Path, tmp_path: Path) -> None:
    main_tip = git(repo, "rev-parse", "main")
    with pytest.raises(PublishError, match="checked out"):
        publish_site(site, repo, branch="main", force=True)  # the current branch: never, not even with --force
    git(repo, "checkout", "-q", "-b", "work")
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--branch", "main"])
    assert res.exit_code == 4 and "default branch" in res.output
    assert git(repo, "rev-parse", "main") == main_tip
    publish_site(site, repo)  # gh-pages
    git(repo, "worktree", "add", "-q", str(tmp_path / "pages"), "gh-pages")
    tip = git(repo, "rev-parse", "gh-pages")
    (site / "index.html").write_text("<p>changed</p>")
    with pytest.raises(PublishError, match=f"checked out in {tmp_path / 'pages'}"):
        publish_site(site, repo)
    assert git(repo, "rev-parse", "gh-pages") == tip and git(tmp_path / "pages", "status", "--porcelain") == ""
    git(repo, "worktree", "remove", "--force", str(tmp_path / "pages"))
    done = publish_site(site, repo, branch="main", force=True)  # asked for, and not checked out: allowed
    assert done.changed and git(repo, "rev-parse", "main") == done.commit


def test_a_file_reached_through_a_linked_folder_is_not_published(repo: Path, site: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-runs"
    shutil.copytree(site / "runs", outside)
    page = next(outside.glob("*.html"))
    page.write_text("<p>swapped in through a link</p>")
    shutil.rmtree(site / "runs")
    (site / "runs").symlink_to(outside, target_is_directory=True)  # every run page is now reached through a link
    done = publish_site(site, repo)
    files = set(git(repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines())
    assert "index.html" in files and not {f for f in files if f.startswith("runs/")}
    assert f"runs/{page.name}" in done.left_out
    assert subprocess.run(["git", "-C", str(repo), "grep", "-q", "swapped in", "gh-pages"]).returncode == 1


# Issue 32, item 4: nothing of the user's replaced, and no program from a repository's config ------------

def test_a_branch_that_publish_did_not_write_is_refused_without_force(repo: Path, site: Path, tmp_path: Path) -> None:
    git(repo, "branch", "feature")  # a user's branch: neither current nor default
    tip = git(repo, "rev-parse", "feature")
    res = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--branch", "feature"])
    assert res.exit_code == 4 and "holds no .reporter-site" in res.output and "--force" in res.output, res.output
    assert git(repo, "rev-parse", "feature") == tip
    git(repo, "checkout", "-q", "--detach")  # detached HEAD: no branch is current, `trunk` is still the user's
    git(repo, "branch", "trunk")
    with pytest.raises(PublishError, match="HEAD is detached"):
        publish_site(site, repo, branch="trunk")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "feature:shared")  # only on the remote: ghp-import would build on origin/shared
    git(repo, "fetch", "-q", "origin")
    with pytest.raises(PublishError, match="refs/remotes/origin/shared"):
        publish_site(site, repo, branch="shared")
    first = publish_site(site, repo)  # gh-pages, new: created, and then recognised by its marker
    (site / "index.html").write_text("<p>rebuilt</p>")
    assert publish_site(site, repo).changed and git(repo, "rev-parse", "gh-pages^") == first.commit
    done = publish_site(site, repo, branch="feature", force=True)  # asked for
    assert git(repo, "rev-parse", "feature") == done.commit


def test_no_program_named_by_the_repositorys_config_runs(repo: Path, site: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    script = tmp_path / "payload.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {ran}\n")
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "pre-push", "post-commit", "pre-commit", "post-checkout"):
        (hooks / hook).symlink_to(script)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.hooksPath", str(hooks))
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "pages", str(remote))
    publish_site(site, repo, remote="pages")
    publish_site(site, repo, remote="pages")  # unchanged: the empty commit is dropped with update-ref
    assert git(remote, "rev-parse", "gh-pages") == git(repo, "rev-parse", "gh-pages")
    assert not ran.exists(), ran.read_text()


def test_a_hard_linked_file_in_site_is_not_published(repo: Path, site: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.html"
    outside.write_text("<p>an outside file, hard-linked in</p>")
    (site / "404.html").unlink()
    os.link(outside, site / "404.html")
    done = publish_site(site, repo)
    assert "404.html" in done.left_out and "index.html" not in done.left_out
    assert subprocess.run(["git", "-C", str(repo), "grep", "-q", "hard-linked in", "gh-pages"]).returncode == 1


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_init_workflow_never_writes_through_a_link(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: str) -> None:
    monkeypatch.chdir(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pages.yml").write_text("a user's file\n")
    (repo / ".github").mkdir()
    if linked == "file":
        (repo / ".github" / "workflows").mkdir()
        (repo / ".github" / "workflows" / "pages.yml").symlink_to(outside / "pages.yml")
    else:
        (repo / ".github" / "workflows").symlink_to(outside, target_is_directory=True)
    res = CliRunner().invoke(main, ["init-workflow", "--force", "--branch", "main", "--install", "kernel-reporter==0.1.0"])
    assert res.exit_code == 2 and "is a link" in res.output, res.output
    assert (outside / "pages.yml").read_text() == "a user's file\n"


def test_a_commit_someone_added_on_the_branch_is_named_before_it_is_replaced(repo: Path, site: Path, tmp_path: Path) -> None:
    # Issue 49, item 3: a hand edit committed on top of gh-pages was replaced by the next publish without a word.
    first = publish_site(site, repo, message="my own words")  # a message of the user's: still known as a publish
    work = tmp_path / "pages-checkout"
    git(repo, "worktree", "add", "-q", str(work), "gh-pages")
    (work / "index.html").write_text("<p>fixed a typo by hand</p>")
    (work / "notes.txt").write_text("mine")
    git(work, "add", "index.html", "notes.txt")
    git(work, "commit", "-qm", "Fix a typo on the front page")
    hand = git(work, "rev-parse", "HEAD")
    git(repo, "worktree", "remove", str(work))
    (site / "index.html").write_text("<p>rebuilt</p>")

    dry = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert git(repo, "rev-parse", "gh-pages") == hand  # nothing committed
    assert f"{hand[:12]} 'Fix a typo on the front page'" in dry.output and "would replace" in dry.output
    assert "(index.html, notes.txt)" in dry.output and f"git diff {first.commit[:12]} {hand[:12]}" in dry.output
    assert dry.output.strip().endswith("nothing was committed")

    real = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo)])
    assert real.exit_code == 0, real.output
    assert "this publish replaced what they changed (index.html, notes.txt)" in real.output
    assert git(repo, "rev-parse", "gh-pages^") == hand  # the history keeps the hand edit
    (site / "index.html").write_text("<p>rebuilt again</p>")
    again = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo)])
    assert again.exit_code == 0 and "did not write" not in again.output, again.output
    clean = CliRunner().invoke(main, ["publish", str(site), "--repo", str(repo), "--dry-run"])
    assert "nothing of anyone else's is replaced" in clean.output, clean.output
