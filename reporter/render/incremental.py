"""A streaming, parallel, incremental build of the site.

1. Find the traces. A run whose input files (trace, attachments, cached validation results) match the
   previous build's status keeps its digest; the others are loaded by worker processes, which send
   back digests (≈1 KB each). The parent never holds a full trace.
2. Order the digests, and give each run page its context from other runs (previous and next run).
   A page is re-rendered when its inputs, its context or the global hash (templates, static files,
   settings, reporter version) changed; workers load those runs again and write their files.
3. When anything changed, listing pages and the run index are re-rendered from the digests.

The new site is built in a temporary folder seeded with hard links to the kept files of the previous
site, and swapped in whole. Every file written is a new inode, so the live site is never written through.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core import __version__
from ..core.errors import CollectError
from ..core.names import unique_slugs
from . import parallel, status
from .assets import asset_dir

log = logging.getLogger(__name__)
Progress = Any  # reporter.progress.ProgressFn: (phase, done, total) -> None


@dataclass(frozen=True)
class IncrementalReport:
    runs: int
    rendered: int  # run pages written in this build
    pages: int  # pages written by this build (0 when the site was up to date)
    errors: tuple[CollectError, ...] = ()
    config_errors: tuple[CollectError, ...] = ()  # DATA/reviews.toml
    digests: tuple[dict[str, Any], ...] = ()  # JSON documents (also kept in the build status)
    page_problems: tuple[tuple[str, str], ...] = ()  # (trace, why) for run pages not made
    up_to_date: bool = False
    committed: bool = True


@lru_cache(maxsize=1)
def _env() -> Any:
    from .writer import template_env
    return template_env()


def _lookup(data: Path, r: Any, problems: list[Any]) -> Any:
    from ..collect.validation import load_validation
    return load_validation(data, r, problems, _redactor(data, parallel.state()["redact"], parallel.state()["allow"])[0])


@lru_cache(maxsize=1)
def _redactor(data: Path, redact: bool, allow: str | None) -> tuple[Any, list[CollectError]]:
    """The secret redactor (DATA/redact-allow.txt is part of the global hash), once per process."""
    if not redact:
        return None, []
    from ..collect.redact import Redactor, load_allow_list
    allowed, errors = load_allow_list(data)
    return Redactor(allowed), errors


def shown_text(shared: dict[str, Any]) -> Callable[[str], str]:
    """The redactor as a filter of text (none with --no-redact): every string that leaves for the site
    passes it, file by file in the writer, on top of the redaction of each field where it is read."""
    red = _redactor(Path(shared["data"]), shared["redact"], shared["allow"])[0]
    return str if red is None else (lambda text: red.text(text, Counter()))


def _shown_error(e: CollectError, shared: dict[str, Any]) -> CollectError:
    clean = shown_text(shared)
    return CollectError(clean(e.path), clean(e.field), clean(e.message))


def _load(data: Path, rel: str, run_id: str, slug: str) -> Any:
    from ..collect.traces import load_run
    st = parallel.state()
    return load_run(data, data / rel, run_id, slug, _reviews(data, st["reviews"]), _redactor(data, st["redact"], st["allow"])[0])


@lru_cache(maxsize=1)
def _reviews(data: Path, content: str | None) -> Any:
    """DATA/reviews.toml, read once per process and content (its hash is part of the global hash)."""
    from ..collect.reviews import load_reviews
    return load_reviews(data)


def _validation_folder(data: Path, r: Any) -> list[Path]:
    from ..core import cache as vcache
    fk, ref = r.trace.final_kernel, r.trace.reference_source
    return [vcache.entry_dir(data, key) for key in vcache.content_keys(fk.source, ref)] if fk and ref is not None else []


def _digest_job(item: tuple[str, str, str]) -> dict[str, Any]:
    """Worker: a run's digest and the signatures of its inputs, or why the run is skipped. Everything done
    for one run is inside the guard: no value of one run may cost the others (or the site)."""
    rel, run_id, slug = item
    data = Path(parallel.state()["data"])
    path = data / rel
    try:
        return _digest(data, rel, run_id, slug)
    except CollectError as exc:
        return {"run_id": run_id, "error": [exc.path, exc.field, exc.message]}
    except Exception as exc:  # noqa: BLE001 - the guard: one file must never stop the others
        return {"run_id": run_id, "error": [str(path), "(internal)", f"reporter failed on this file ({type(exc).__name__}: "
                                            f"{str(exc)[:200]}); the run is skipped. Please report this as a bug."]}


def _digest(data: Path, rel: str, run_id: str, slug: str) -> dict[str, Any]:
    from . import pagemaker
    trace_sig = status.signature(data / rel, None, data)  # signed before reading, so a later edit shows
    r = _load(data, rel, run_id, slug)
    files = [r.trace_path.parent / a.path for a in r.source.attachments]  # the files as named, not as published
    inputs, folders = status.inputs_of(data, files, _validation_folder(data, r), {})
    if trace_sig is not None:
        inputs[rel] = trace_sig
    problems = [e.problem("attachment") for e in r.attachment_errors]
    from ..collect.validation import redactions
    cached = _lookup(data, r, problems)
    d = pagemaker.digest(r, cached)
    d["path"], d["redactions"] = rel, redactions(r, cached)
    d["cached"] = cached.shown_path if cached is not None else None  # for -v: which runs had a cached result
    clean = shown_text(parallel.state())
    d["problems"] = [[clean(p.path), clean(p.field), clean(p.message), p.kind] for p in problems]
    return {"digest": d, "inputs": inputs, "folders": folders}


def _render_job(item: tuple[str, str, dict[str, Any]]) -> list[str] | str:
    """Worker: load one run again and write its page files into the new site; their paths, or why not."""
    from . import pagemaker
    from .highlight import HighlightCache
    from .writer import write_new
    rel, run_id, nav = item
    st = parallel.state()
    data, tmp = Path(st["data"]), Path(st["tmp"])
    try:
        r = _load(data, rel, run_id, nav["slug"])
        files = pagemaker.run_files(r, _lookup(data, r, []), st["urls"], nav, _env(), st["generated"], st["assets"],
                                    HighlightCache(tmp / status.CACHE_DIR / "code"))
    except Exception as exc:  # noqa: BLE001 - one run's bad data must not cost the rest of the site
        return f"run page not built: {type(exc).__name__}: {exc}"
    clean = shown_text(st)
    for path, content in files.items():
        write_new(tmp, path, clean(content))
    return sorted(files)


def _navigation(digests: list[dict[str, Any]], urls: Any) -> dict[str, dict[str, Any]]:
    """Each run page's links to other pages: the previous and next run of the same model in the same
    group, and every URL the page names (they change when another run's name collides with its own)."""
    nav: dict[str, dict[str, Any]] = {}
    for i, d in enumerate(digests):
        def same(j: int, d: dict[str, Any] = d) -> bool:
            return 0 <= j < len(digests) and (digests[j]["key"], digests[j]["model"]) == (d["key"], d["model"])
        key = tuple(d["key"])
        nav[d["run_id"]] = {"slug": d["slug"], "self": urls.run(d["run_id"]),
                            "prev": urls.run(digests[i - 1]["run_id"]) if same(i - 1) else None,
                            "next": urls.run(digests[i + 1]["run_id"]) if same(i + 1) else None,
                            "group": urls.group(key), "model": urls.model(key, d["model"]),
                            "problem": urls.problem(tuple(d["problem"])) if d["problem"] else None,
                            "downloads": [urls.download(d["run_id"], w) for w in ("kernel", "reference")]}
    return nav


def _urls(digests: list[dict[str, Any]]) -> Any:
    from .urls import Urls
    return Urls.build((d["run_id"] for d in digests), (tuple(d["key"]) for d in digests),
                      ((tuple(d["key"]), d["model"]) for d in digests),
                      (tuple(d["problem"]) for d in digests if d["problem"]))


def _scan(data: Path, prev: status.BuildStatus, jobs: int | None, shared: dict[str, Any],
          progress: Progress | None = None) -> tuple[dict[str, status.RunStatus], list[CollectError], set[str]]:
    """Every run's status: kept from the previous build when its inputs are unchanged, else from a worker
    (those run ids are returned too)."""
    from ..collect.read import find_traces, run_ids
    runs: dict[str, status.RunStatus] = {}
    todo: list[tuple[str, str, str]] = []
    errors: list[CollectError] = []
    paths = find_traces(data, errors)
    ids = run_ids(data, paths, _redactor(data, shared["redact"], shared["allow"])[0])
    slugs = unique_slugs(ids.values())  # over every trace found, so a slug does not move when a trace breaks
    for path in paths:
        rel, run_id = path.relative_to(data).as_posix(), ids[path]
        old_run = prev.runs.get(run_id)
        if (old_run is not None and old_run.digest["path"] == rel and old_run.digest["slug"] == slugs[run_id]
                and status.unchanged(data, old_run)):
            runs[run_id] = old_run
        else:
            todo.append((rel, run_id, slugs[run_id]))
    log.debug("collect: %d traces under %s; %d unchanged since the last build, %d to read", len(paths), data,
              len(runs), len(todo))
    for i, res in enumerate(parallel.run_all(_digest_job, todo, shared, jobs), 1):
        if "error" in res:
            errors.append(CollectError(*res["error"]))
        else:
            d = res["digest"]
            runs[d["run_id"]] = status.RunStatus(res["inputs"], res["folders"], d)
            log.debug("run %s: read (%s); %s", d["run_id"], "changed" if d["run_id"] in prev.runs else "new",
                      f"cached re-validation result {d['cached']}" if d.get("cached") else "no cached re-validation result")
        if progress is not None:
            progress("reading runs", i, len(todo))
    return runs, [_shown_error(e, shared) for e in errors], {item[1] for item in todo}


def _listing_pages(digests: list[dict[str, Any]], frame: Any, urls: Any, errors: Sequence[CollectError], data: Path,
                   boards: dict[Any, list[tuple[str, str]]] | None = None) -> list[Any]:
    """Every page above the run pages, from digests (stand-in records) and the runs table, plus the search page."""
    from . import pagemaker
    from .pages import listed, listing_pages
    from .runpage import HOME, Page
    stubs = [pagemaker.stub(d, data) for d in digests]
    rows = {r.run_id: listed(r, pagemaker.summary_of(d), urls) for r, d in zip(stubs, digests)}
    search = Page("search.html", "search.html", {"title": "All runs · search", "crumbs": [HOME], "runs": len(digests)})
    return [*listing_pages(stubs, rows, frame, urls, errors, boards), search]


def build_incremental(data: Path, site: Path, jobs: int | None = None, settings: dict[str, Any] | None = None,
                      strict: bool = False, upstream_problems: int = 0, redact: bool = True,
                      progress: Progress | None = None) -> IncrementalReport:
    """Bring SITE up to date with DATA, re-rendering only what changed; see the module's docstring.
    With `strict`, any problem leaves the previous SITE exactly as it was."""
    from ..collect.redact import ALLOW_FILE
    from ..collect.reviews import REVIEWS_FILE
    site = site.absolute()
    prev = status.BuildStatus.load(site) if status.owned_files(site) is not None else status.BuildStatus()
    # Clearances and the redaction allow-list can change any run's page: their contents are global inputs.
    reviews, allow = ((status.signature(data / name, None, data) or [None] * 3)[2] for name in (REVIEWS_FILE, ALLOW_FILE))
    g = status.global_hash([asset_dir("templates"), asset_dir("static")],
                           {**(settings or {}), "reviews": reviews, "allow": allow, "redact": redact})
    shared = {"data": str(data), "reviews": reviews, "redact": redact, "allow": allow}
    runs, errors, read = _scan(data, prev, jobs, shared, progress)
    digests = sorted((r.digest for r in runs.values()), key=_order)
    urls = _urls(digests)
    nav = _navigation(digests, urls)
    todo: list[tuple[str, str, dict[str, Any]]] = []
    keep: list[str] = []
    for d in digests:
        rs = runs[d["run_id"]]
        key = status.context_hash([rs.inputs, g, nav[d["run_id"]]])
        if key == rs.page and rs.files and all((site / f).is_file() for f in rs.files):
            keep.extend(rs.files)
        else:
            why = _why(rs, d["run_id"] in read, d["run_id"] not in prev.runs, g != prev.globals)
            log.debug("run page %s: re-rendered, %s", d["run_id"], why)
            rs.page = key
            todo.append((d["path"], d["run_id"], nav[d["run_id"]]))
    from ..collect.traces import unknown_clearances
    rv = _reviews(data, reviews)
    config_errors = [_shown_error(e, shared) for e in
                     (*rv.errors, *unknown_clearances(rv, set(runs)), *_redactor(data, redact, allow)[1])]
    aggregates = status.context_hash([g, digests, [str(e) for e in errors + config_errors]])
    report = IncrementalReport(len(digests), len(todo), 0, tuple(errors), tuple(config_errors), tuple(digests))
    if (not todo and aggregates == prev.aggregates and set(runs) == set(prev.runs)
            and prev.tree == status.tree_hash(site)):
        # Nothing to write, so the site stays as it was: under --strict that is what a failure leaves too.
        log.debug("render: nothing changed since the last build; %s is up to date", site)
        return replace(report, up_to_date=True, committed=not (strict and _failed(report, upstream_problems)))
    log.debug("render: %d run pages to render, %d kept; listing pages re-rendered, because %s", len(todo),
              len(digests) - len(todo), "a run's digest, the run order or a global input changed" if aggregates != prev.aggregates
              else "run pages changed" if todo else "the site's files differ from the last build's")
    return _write(site, data, report, runs, (keep, todo, urls, aggregates, g), jobs, strict, upstream_problems, shared, progress)


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


def _shared_outputs(paths: list[str]) -> None:
    """One warning naming every output file two inputs would write (ids and slugs are unique by
    construction, so this is a bug to report, never a silent overwrite)."""
    twice = sorted(p for p, n in Counter(paths).items() if n > 1)
    if twice:
        log.warning("%d output file(s) would be written for two different inputs: %s; please report this as a bug",
                    len(twice), ", ".join(twice[:10]))


def _failed(report: IncrementalReport, upstream_problems: int) -> bool:
    return bool(upstream_problems or report.errors or report.config_errors or report.page_problems
                or any(d["problems"] for d in report.digests))


def _order(d: dict[str, Any]) -> list[Any]:
    from .pagemaker import order
    return order(d)


def _write(site: Path, data: Path, report: IncrementalReport, runs: dict[str, status.RunStatus], plan: tuple[Any, ...],
           jobs: int | None, strict: bool, upstream_problems: int, shared: dict[str, Any],
           progress: Progress | None = None) -> IncrementalReport:
    """Render what changed into a folder seeded from the live site, then swap it in; `report` completed."""
    from . import pagemaker
    from .search import index_js
    from .writer import NOJEKYLL, SiteWriter
    keep, todo, urls, aggregates, g = plan
    generated = status.generated_at()
    with SiteWriter(site, data, generated, shown_text(shared)) as writer:
        assert writer.tmp is not None
        writer.seed(keep, [status.CACHE_DIR])
        shared = {**shared, "tmp": str(writer.tmp), "generated": generated, "assets": writer.assets, "urls": urls}
        problems: list[tuple[str, str]] = []
        for i, (item, files) in enumerate(zip(todo, parallel.run_all(_render_job, todo, shared, jobs)), 1):
            if progress is not None:
                progress("rendering run pages", i, len(todo))
            if isinstance(files, str):
                problems.append((shown_text(shared)(str(data / item[0])), shown_text(shared)(files)))
                del runs[item[1]]  # left out of the site and of the status, so the next build tries again
            else:
                runs[item[1]].files = files
        digests = [d for d in report.digests if d["run_id"] in runs]
        # Leaderboards, grids, problem pages and runs.csv come from the runs table (reporter.frames /
        # reporter.aggregates) of the built runs.
        from ..frames import export_bytes, load
        from .boards import leaderboards
        frame = load(data, shared["redact"])
        frame = frame[frame["run_id"].isin(list(runs))].reset_index(drop=True)
        boards, board_files, links = leaderboards(frame, urls)
        board_files["runs.csv"] = export_bytes(frame, "csv")
        pages = _listing_pages(digests, frame, urls, report.errors, data, links) + boards
        _shared_outputs([p.path for p in pages] + list(board_files) + [f for rs in runs.values() for f in rs.files])
        n = writer.render(pages, (lambda done, total: progress("writing listing pages", done, total)) if progress else None)
        for path, blob in sorted(board_files.items()):
            writer.write_text(path, blob.decode("utf-8"))
        writer.write_text("search-index.js", index_js([pagemaker.index_row(d, urls) for d in digests]))
        writer.write_text("build-info.json", json.dumps({"generated": generated, "pages": n + report.rendered,
                                                          "version": __version__}) + "\n")
        report = replace(report, pages=n + report.rendered - len(problems), page_problems=tuple(problems))
        report = replace(report, committed=not (strict and _failed(report, upstream_problems)))
        if report.committed:
            written = writer.written | {f for rs in runs.values() for f in rs.files} | {NOJEKYLL}
            writer.keep_foreign(written)
            writer.commit(status.BuildStatus(__version__, g, runs, aggregates).save(writer.tmp, sorted(written), writer.clean))
            log.debug("write: %d pages written, the new site swapped in at %s", report.pages, site)
    return report
