"""`reporter publish` and `reporter init-workflow`: put a built site online."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from ..core import DISTRIBUTION
from ..core.errors import LOGGER
from .app import State, given


@click.command()
@click.argument("site", type=click.Path(exists=True, file_okay=False, path_type=Path), required=False)
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The git repository to commit into.")
@click.option("--branch", default=None, help="The branch that holds the site. [default: gh-pages]")
@click.option("--cname", default=None, help="Custom domain to write as CNAME (default: keep the branch's CNAME).")
@click.option("--push", "remote", default=None, metavar="REMOTE", help="Push the branch to REMOTE afterwards.")
@click.option("-m", "--message", default=None, help="Commit message (default records source commit and version).")
@click.option("--force", is_flag=True, help="Allow --branch to be the current or default branch (its content is replaced).")
@click.option("--dry-run", is_flag=True, help="Check everything and say what would be replaced; commit nothing.")
@click.pass_obj
def publish(state: State, site: Path | None, repo: Path, branch: str | None, cname: str | None, remote: str | None,
            message: str | None, force: bool, dry_run: bool) -> None:
    """Commit the built SITE to a branch that holds only the site (GitHub Pages)."""
    from ..publish import publish_site

    pc = state.config.publish
    site = given(site, state.config.site_dir, "SITE")
    branch = branch or pc.branch or "gh-pages"
    remote = remote or pc.remote
    done = publish_site(site, repo, branch=branch, cname=cname or pc.cname, remote=remote, message=message, force=force,
                        dry_run=dry_run)
    if done.replaced is not None:
        logging.getLogger(LOGGER).warning("%s", done.replaced.sentence(branch).replace(
            "publishing replaces", "publishing would replace" if dry_run else "this publish replaced"))
    if done.left_out:
        logging.getLogger(LOGGER).info("not published: %d path(s) in %s that the build did not write or that are not "
                                       "plain files (links, files with a second hard link): %s", len(done.left_out), site, ", ".join(done.left_out[:10]))
    if dry_run:
        click.echo(f"dry run: {site} would be published to {branch}" + (f" over {done.commit[:12]}" if done.commit else " (a new branch)")
                   + ("; nothing of anyone else's is replaced" if done.replaced is None else "") + "; nothing was committed")
        return
    what = f"published {site} to {branch} as {done.commit[:12]}" if done.changed else \
        f"{branch} already holds this site ({done.commit[:12]}): nothing to commit"
    click.echo(what + (f"; pushed to {remote}" if remote else ""))


@click.command("init-workflow")
@click.option("--path", type=click.Path(dir_okay=False, path_type=Path), default=Path(".github/workflows/pages.yml"),
              show_default=True, help="Where to write the workflow.")
@click.option("--data", default="data", show_default=True, help="The data folder the workflow builds from.")
@click.option("--branch", default=None, help="The branch whose pushes deploy (default: the repository's default branch).")
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
@click.option("--install", "install", default=None, metavar="REQUIREMENT",
              help=f"What the workflow installs: '{DISTRIBUTION}==VERSION' or '{DISTRIBUTION} @ git+https://HOST/REPO@COMMIT' "
                   "(default: this reporter, pinned to the pushed commit of the clone it was installed from).")
def init_workflow(path: Path, data: str, branch: str | None, force: bool, install: str | None) -> None:
    """Write a GitHub Actions workflow that builds the site (no GPU) and deploys it to Pages.

    It works in a repository that holds only DATA: it installs this reporter, pinned to its commit.
    """
    from ..publish import write_workflow

    used, spec = write_workflow(path, data, branch, force=force, install=install)
    click.echo(f"wrote {path} (deploys on pushes to {used}; installs {spec})")
