"""Static hosts' published-site limits, named once: `reporter build` warns when a site would pass one.

Documented limits as of 2026-12 (each host's own pages; the docs/publishing.md table cites them):
GitHub Pages: a published site may be no larger than 1 GB, and GitHub refuses a pushed file over 100 MiB.
GitLab.com Pages: 1 GB and 200,000 file entries a site. Cloudflare Pages (Free plan): 20,000 files a site, 25 MiB a
file (paid plans: 100,000 files).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1_000_000_000
MIB = 1024 * 1024


@dataclass(frozen=True)
class Host:
    name: str
    max_bytes: int | None
    max_files: int | None
    max_file_bytes: int | None


HOSTS: tuple[Host, ...] = (
    Host("GitHub Pages", 1 * GB, None, 100 * MIB),
    Host("GitLab.com Pages", 1 * GB, 200_000, None),
    Host("Cloudflare Pages (Free plan)", None, 20_000, 25 * MIB),
)


@dataclass(frozen=True)
class SiteSize:
    """What `reporter publish` would commit: its bytes, its files and the largest of them."""

    bytes: int
    files: int
    largest_bytes: int
    largest: str


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def over_limits(size: SiteSize, hosts: tuple[Host, ...] | None = None) -> tuple[str, ...]:
    """One sentence per host whose limit the site passes, naming the host, the limit and the site's figure."""
    out = []
    for h in HOSTS if hosts is None else hosts:
        why = []
        if h.max_bytes is not None and size.bytes > h.max_bytes:
            why.append(f"{_mb(size.bytes)} published, over its {_mb(h.max_bytes)}")
        if h.max_files is not None and size.files > h.max_files:
            why.append(f"{size.files:,} files, over its {h.max_files:,}")
        if h.max_file_bytes is not None and size.largest_bytes > h.max_file_bytes:
            why.append(f"{size.largest} is {_mb(size.largest_bytes)}, over its {_mb(h.max_file_bytes)} a file")
        if why:
            out.append(f"this site would not fit {h.name}: " + "; ".join(why))
    return tuple(out)
