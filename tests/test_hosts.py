"""A site's published size against static hosts' limits (issue 46, items 1 and 4): counted as `reporter publish`
commits it, and `reporter build` warns, naming the host and the figure, before anyone publishes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from reporter.cli import main
from reporter.core import hosts
from reporter.core.hosts import GB, MIB, Host, SiteSize, over_limits
from reporter.core.sitefiles import published_size
from reporter.publish import publish_site


def test_each_limit_a_site_passes_is_named_with_its_figure() -> None:
    ok = SiteSize(bytes=900_000_000, files=19_000, largest_bytes=20 * MIB, largest="search/a.js")
    assert over_limits(ok) == ()
    big = SiteSize(bytes=1_200_000_000, files=250_000, largest_bytes=30 * MIB, largest="runs/x.turns.js")
    said = over_limits(big)
    assert said[0] == "this site would not fit GitHub Pages: 1,200.0 MB published, over its 1,000.0 MB"
    assert said[1] == ("this site would not fit GitLab.com Pages: 1,200.0 MB published, over its 1,000.0 MB; "
                       "250,000 files, over its 200,000")
    assert said[2] == ("this site would not fit Cloudflare Pages (Free plan): 250,000 files, over its 20,000; "
                       "runs/x.turns.js is 31.5 MB, over its 26.2 MB a file")
    assert len(said) == 3 and hosts.HOSTS[0].max_bytes == 1 * GB


def test_the_size_is_what_publish_commits(site_copy: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    publish_site(site_copy, repo)
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "-l", "gh-pages"], check=True, capture_output=True,
                             text=True).stdout.splitlines()
    committed = {line.split("\t")[1]: int(line.split()[3]) for line in listing}
    size = published_size(site_copy)
    assert size is not None and size.files == len(committed) and size.bytes == sum(committed.values())
    assert size.largest_bytes == max(committed.values()) and committed[size.largest] == size.largest_bytes
    assert published_size(tmp_path) is None  # not a build of ours


def test_build_warns_before_a_site_passes_a_host_s_limit(small_data: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(hosts, "HOSTS", (Host("Tiny Pages", None, 5, None),))
    res = CliRunner().invoke(main, ["build", str(small_data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    assert "warning: this site would not fit Tiny Pages:" in res.output and "files, over its 5" in res.output
    res = CliRunner().invoke(main, ["build", str(small_data), str(tmp_path / "site2"), "--no-validate", "--strict"])
    assert res.exit_code == 3
