"""Plan a build: which runs' digests are kept from the previous build's status, which are read again,
and which run pages must be rendered.

A run whose input files (trace, attachments, cached validation results) match the previous status keeps
its digest: its trace is not opened. The others are read by worker processes (`pagemaker.digest_job`).
A run page is rendered again when its inputs, its links to other pages or the global hash (templates,
static files, settings, reporter version) changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.errors import CollectError
from ..core.names import unique_slugs
from . import pagemaker, parallel, status
from .digest import RunDigest
from .urls import Urls

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]  # reporter.progress.ProgressFn: (phase, done, total) -> None
Nav = dict[str, Any]  # a run page's links to other pages (JSON: part of the page's context hash)


@dataclass(frozen=True)
class Scan:
    runs: dict[str, status.RunStatus]
    errors: list[CollectError]
    read: set[str]  # the run ids whose traces were read in this build
    staged: dict[str, tuple[str, ...]] = field(default_factory=dict)  # run id -> page files written as it was read
    page_errors: dict[str, str] = field(default_factory=dict)  # run id -> why its page could not be made


def scan(data: Path, prev: status.BuildStatus, jobs: int | None, shared: dict[str, Any],
         progress: Progress | None = None) -> Scan:
    """Every run's status: kept from the previous build when its inputs are unchanged, else from a worker,
    which in a build (`shared` names the new site's folder) also writes the run's page files."""
    from ..collect.read import find_traces, run_ids
    runs: dict[str, status.RunStatus] = {}
    todo: list[tuple[str, str, str]] = []
    errors: list[CollectError] = []
    paths = find_traces(data, errors)
    ids = run_ids(data, paths, pagemaker.redactor(data, shared["redact"], shared["allow"])[0])
    slugs = unique_slugs(ids.values())  # over every trace found, so a slug does not move when a trace breaks
    for path in paths:
        rel, run_id = path.relative_to(data).as_posix(), ids[path]
        old_run = prev.runs.get(run_id)
        if (old_run is not None and old_run.digest.path == rel and old_run.digest.slug == slugs[run_id]
                and status.unchanged(data, old_run)):
            runs[run_id] = old_run
        else:
            todo.append((rel, run_id, slugs[run_id]))
    log.debug("collect: %d traces under %s; %d unchanged since the last build, %d to read", len(paths), data,
              len(runs), len(todo))
    staged, page_errors = {}, {}
    for i, res in enumerate(parallel.run_all(pagemaker.digest_job, todo, shared, jobs), 1):
        if res.digest is None:
            errors.append(CollectError(*(res.error or ("", "", ""))))
        else:
            d = res.digest
            runs[d.run_id] = status.RunStatus(dict(res.inputs), list(res.folders), d)
            if res.files is not None:
                staged[d.run_id] = res.files
            if res.page_error is not None:
                page_errors[d.run_id] = res.page_error
            log.debug("run %s: read (%s); %s", d.run_id, "changed" if d.run_id in prev.runs else "new",
                      f"cached re-validation result {d.cached}" if d.cached else "no cached re-validation result")
        if progress is not None:
            progress("reading runs", i, len(todo))
    return Scan(runs, [pagemaker.shown_error(e, shared) for e in errors], {item[1] for item in todo}, staged, page_errors)


def urls_of(digests: list[RunDigest]) -> Urls:
    """The site's URLs; a run's page is named by the slug its digest was read with (unique among every trace
    found), which is where the worker that read it wrote its page."""
    urls = Urls.build((), (d.key for d in digests), ((d.key, d.model) for d in digests), (d.problem for d in digests if d.problem))
    return replace(urls, runs=dict(sorted((d.run_id, d.slug) for d in digests)))


def navigation(digests: list[RunDigest], urls: Urls) -> dict[str, Nav]:
    """Each run page's links to other pages: the previous and next run of the same model in the same
    group, and every URL the page names (they change when another run's name collides with its own)."""
    nav: dict[str, Nav] = {}
    for i, d in enumerate(digests):
        def same(j: int, d: RunDigest = d) -> bool:
            return 0 <= j < len(digests) and (digests[j].key, digests[j].model) == (d.key, d.model)
        nav[d.run_id] = {"slug": d.slug, "self": urls.run(d.run_id),
                         "prev": urls.run(digests[i - 1].run_id) if same(i - 1) else None,
                         "next": urls.run(digests[i + 1].run_id) if same(i + 1) else None,
                         "group": urls.group(d.key), "model": urls.model(d.key, d.model),
                         "problem": urls.problem(d.problem) if d.problem else None,
                         "downloads": [urls.download(d.run_id, w) for w in ("kernel", "reference")]}
    return nav


def pages_to_render(site: Path, found: Scan, digests: list[RunDigest], nav: dict[str, Nav], g: str,
                    prev: status.BuildStatus) -> tuple[list[str], list[tuple[str, str, Nav]]]:
    """The page files kept as they are, and the run pages to render (trace, run id, links)."""
    todo: list[tuple[str, str, Nav]] = []
    keep: list[str] = []
    for d in digests:
        rs = found.runs[d.run_id]
        key = status.context_hash([rs.inputs, g, nav[d.run_id]])
        if key == rs.page and rs.files and all((site / f).is_file() for f in rs.files):
            keep.extend(rs.files)
        else:
            log.debug("run page %s: re-rendered, %s", d.run_id,
                      _why(rs, d.run_id in found.read, d.run_id not in prev.runs, g != prev.globals))
            rs.page = key
            todo.append((d.path, d.run_id, nav[d.run_id]))
    return keep, todo


def _why(rs: status.RunStatus, read: bool, new: bool, global_changed: bool) -> str:
    """Why a run page is rendered again, for -v."""
    if new:
        return "it was not in the last build"
    if read:
        return "its trace, attachments or cached result changed"
    if global_changed:
        return "templates, static files, settings, reviews.toml or redact-allow.txt changed"
    if not rs.files:
        return "the last build could not make it"
    return "its links changed (a neighbouring run was added, removed or renamed) or one of its files is missing"
