"""Write a planned build: render the run pages that changed (in worker processes) and every listing page
into a folder seeded with hard links to the kept files of the live site, then swap it in whole.

Every file written is a new inode, so the live site is never written through.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import __version__, sitefiles
from ..core.audit import PageOptions
from ..core.errors import CollectError
from . import fulltext, pagemaker, parallel, status
from .digest import RunDigest
from .listings import Listings, fingerprint, listings
from .plan import Nav, Progress, Scan
from .runpage import Deferred
from .urls import Urls
from .writer import SiteWriter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncrementalReport:
    runs: int
    rendered: int  # run pages written in this build
    pages: int  # pages written by this build (0 when the site was up to date)
    errors: tuple[CollectError, ...] = ()
    config_errors: tuple[CollectError, ...] = ()  # DATA/reviews.toml
    digests: tuple[RunDigest, ...] = ()  # in page order (also kept in the build status)
    page_problems: tuple[tuple[str, str], ...] = ()  # (trace, why) for run pages not made
    up_to_date: bool = False
    committed: bool = True


@dataclass(frozen=True)
class Plan:
    keep: list[str]  # page files of the live site kept as they are
    todo: list[tuple[str, str, Nav]]  # run pages to render: (trace, run id, links)
    urls: Urls
    aggregates: str  # hash of every digest, the run order and the problems listed
    globals: str
    prev: status.BuildStatus  # the last build's: which listing pages and leaderboards can be kept


def relative_text(text: str, data: Path, site: Path) -> str:
    """`text` with DATA's and SITE's absolute paths written as `DATA` and `SITE` (resolved forms first: the longer);
    the folder a build stages SITE in (`.SITE.tmp-<token>` beside it) is SITE too."""
    for folder in {site.resolve(), site.absolute()}:
        staged = re.escape(str(folder.parent).rstrip("/") + "/." + folder.name) + r"\.(?:tmp|old)-[0-9a-f]{32}"
        text = re.sub(staged, lambda _: str(site.absolute()), text)
    for root, name in sorted({(str(p), n) for folder, n in ((data, "DATA"), (site, "SITE"))
                              for p in (folder.resolve(), folder.absolute())}, key=lambda t: -len(t[0])):
        if len(root) > 1:
            text = text.replace(root + "/", name + "/").replace(root, name)
    return text


def relative_error(e: CollectError, data: Path, site: Path) -> CollectError:
    path = relative_text(e.path, data, site)
    return CollectError(path.removeprefix("DATA/"), e.field, relative_text(e.message, data, site))


def failed(report: IncrementalReport, upstream_problems: int) -> bool:
    return bool(upstream_problems or report.errors or report.config_errors or report.page_problems
                or any(d.problems for d in report.digests))


def _shared_outputs(paths: list[str]) -> None:
    """One warning naming every output file two inputs would write (ids and slugs are unique by
    construction, so this is a bug to report, never a silent overwrite)."""
    twice = sorted(p for p, n in Counter(paths).items() if n > 1)
    if twice:
        log.warning("%d output file(s) would be written for two different inputs: %s; please report this as a bug",
                    len(twice), ", ".join(twice[:10]))


def _render_runs(data: Path, found: Scan, plan: Plan, shared: dict[str, Any], jobs: int | None,
                 progress: Progress | None) -> list[tuple[str, str]]:
    """Finish the run pages written as their runs were read (their links filled in) and render the other
    planned ones; the (trace, why) of each that could not be made, which leaves the site."""
    problems: list[tuple[str, str]] = []
    clean = pagemaker.shown_text(shared)
    runs, tmp, places = found.runs, Path(shared["tmp"]), pagemaker.Placeholders(shared["nonce"])

    def drop(item: tuple[str, str, Nav], why: str) -> None:
        problems.append((clean(item[0]), clean(why)))
        del runs[item[1]]  # left out of the site and of the status, so the next build tries again

    rest = []
    for item in plan.todo:
        run_id = item[1]
        if run_id in found.page_errors:
            drop(item, found.page_errors[run_id])
        elif run_id in found.staged:
            page = tmp / plan.urls.run(run_id)  # the worker's own new file: rewriting it writes through nothing
            page.write_text(places.fill(page.read_text(encoding="utf-8"), runs[run_id].digest, plan.urls, item[2], clean),
                            encoding="utf-8")
            runs[run_id].files = list(found.staged[run_id])
        else:
            rest.append(item)
    for i, (item, files) in enumerate(zip(rest, parallel.run_all(pagemaker.render_job, rest, shared, jobs)), 1):
        if progress is not None:
            progress("rendering run pages", i, len(rest))
        if isinstance(files, str):
            drop(item, files)
        else:
            runs[item[1]].files = files
    return problems


def _write_listings(writer: Any, site: Path, built: Listings, extra: list[Any], prev: dict[str, str],
                    progress: Progress | None) -> tuple[int, dict[str, str]]:
    """Render the listing pages and write the files whose fingerprint changed (a search shard's is its key,
    so a kept shard is never indexed again); keep the others (hard links to the live site's). Returns the
    pages rendered and every fingerprint, for the status."""
    marks: dict[str, str] = {}
    keep, todo = list(built.kept), []
    for item in built.pages:
        if isinstance(item, Deferred):
            # kept without making its data when its inputs are the last build's
            marks[item.path] = fingerprint(item, extra[:-1])
            if prev.get(item.path) == marks[item.path] and (site / item.path).is_file():
                keep.append(item.path)
            else:
                todo.append(item.make())
            continue
        page = item
        # The build time is on the index only: other pages stay kept across builds.
        fp = fingerprint(page, [*extra[:-1], extra[-1] if page.path == "index.html" else None])
        if fp is not None:
            marks[page.path] = fp
        (keep.append(page.path) if fp is not None and prev.get(page.path) == fp and (site / page.path).is_file()
         else todo.append(page))
    files = {}
    for path, text in built.files.items():
        marks[path] = sitefiles.sha256_bytes(text.encode("utf-8"))
        if not (prev.get(path) == marks[path] and (site / path).is_file()):
            files[path] = text
    keep += [path for path in built.files if path not in files]
    for shard in built.shards:
        marks[shard.path] = shard.key
        if prev.get(shard.path) == shard.key and (site / shard.path).is_file():
            keep.append(shard.path)
        else:
            files[shard.path] = shard.text()
    writer.seed(keep, [])
    n = writer.render(todo, (lambda done, total: progress("writing listing pages", done, total)) if progress else None)
    for path, text in files.items():
        writer.write_text(path, text)
    return n, marks


def _fulltext(writer: SiteWriter, slugs: list[str]) -> None:
    """The full-text index of these runs' documents, shard by shard: a shard whose documents are all unchanged is
    kept from the live site, the others are made again (`fulltext`); none without the Pagefind binary."""
    assert writer.tmp is not None
    old = fulltext.previous(writer.site)
    known, seen = fulltext.previous_docs(writer.site), fulltext.DocSigs()
    exe = fulltext.binary()
    made: fulltext.Shards = {}
    for name, members in fulltext.shards(slugs).items():
        key = fulltext.key_of(writer.tmp, members, known, seen)
        kept = old.get(name)
        if key is not None and kept is not None and kept[0] == key and all((writer.site / f).is_file() for f in kept[1]):
            writer.seed(kept[1], [])
            made[name] = kept
            continue
        new_key, files = fulltext.build_index(writer.tmp, members, exe, name, seen)
        writer.written.update(files)
        if new_key is not None and files:
            made[name] = (new_key, files)
    text = fulltext.manifest(made)
    if text is not None:
        writer.write_text(fulltext.MANIFEST, text)
    fulltext.save_state(writer.tmp, made, seen)


def write(writer: SiteWriter, data: Path, report: IncrementalReport, found: Scan, plan: Plan, jobs: int | None, strict: bool,
          upstream_problems: int, shared: dict[str, Any], progress: Progress | None = None) -> IncrementalReport:
    """Render what changed into the writer's folder, seeded from the live site, then swap it in; `report` completed."""
    from .writer import NOJEKYLL
    site, generated, runs = writer.site, writer.generated, found.runs
    assert writer.tmp is not None
    writer.seed(plan.keep, [sitefiles.CACHE_DIR])
    shared = {**shared, "urls": plan.urls}
    problems = _render_runs(data, found, plan, shared, jobs, progress)
    digests = [d for d in report.digests if d.run_id in runs]
    from ..collect.problemset import fingerprint
    from ..frames import load_universe
    sets = fingerprint(data)[0]  # the leaderboards' denominators: a changed problem set makes them again
    options = PageOptions.from_json(shared.get("options"))  # the audit rule and prices: the boards' inputs too
    # The index lists the traces that could not be read and the run pages that could not be made, by their place
    # in DATA: the builder's absolute paths (a user name, a home folder) are no business of the site's readers.
    shown = [relative_error(e, data, site) for e in report.errors]
    shown += [CollectError(rel, "(page)", relative_text(why, data, site)) for rel, why in problems]
    built = listings(digests, plan.urls, shown, f"{plan.globals} {sorted(writer.assets.items())} {sets} {options}",
                     plan.prev.boards, lambda path: (site / path).is_file(), load_universe(data), options)
    _shared_outputs([p.path for p in built.pages] + list(built.files) + built.kept + [s.path for s in built.shards]
                    + [f for rs in runs.values() for f in rs.files])
    n, listing = _write_listings(writer, site, built, [plan.globals, writer.assets, generated], plan.prev.listing, progress)
    _fulltext(writer, [plan.urls.runs[d.run_id] for d in digests if d.run_id in plan.urls.runs and runs[d.run_id].files])
    pages = sum(f.endswith(".html") for f in writer.written | {f for rs in runs.values() for f in rs.files})  # kept ones too
    writer.write_text("build-info.json", json.dumps({"generated": generated, "pages": pages, "version": __version__}) + "\n")
    report = replace(report, pages=n + report.rendered - len(problems), page_problems=tuple(problems))
    report = replace(report, committed=not (strict and failed(report, upstream_problems)))
    if report.committed:
        written = writer.written | {f for rs in runs.values() for f in rs.files} | {NOJEKYLL}
        writer.keep_foreign(written)
        state = status.BuildStatus(__version__, plan.globals, runs, plan.aggregates, sources=status.sources_hash(shared),
                                   listing=listing, boards=built.boards)
        writer.commit(state.save(writer.tmp, sorted(written), writer.clean), sorted({k for rs in runs.values() for k in rs.inputs}))
        log.debug("write: %d pages written, the new site swapped in at %s", report.pages, site)
    return report
