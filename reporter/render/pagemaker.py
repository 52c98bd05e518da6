"""Per-run work of a streaming build, done in worker processes: a run's digest, and its page files.

A digest (`digest.RunDigest`) is what every page above the run pages needs of a run; the page files are
the run page, its lazy chunk and the downloadable sources. Both are made from a run the
worker loads itself, so the parent never holds a trace. Everything one run needs is inside the worker's
guard: no value of one run may cost the others (or the site).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import escape

from ..collect.traces import RunRecord
from ..collect.validation import CachedValidation
from ..core import sitefiles
from ..core.cache import work_file
from ..core.errors import CollectError
from ..core.records import sha256_text
from . import compare, fulltext, lazy, parallel, status, verify
from .budget import OverBudget, run_budget
from .digest import RunDigest, make
from .findings import KERNEL_LINE
from .highlight import HighlightCache, numbered
from .runpage import run_page
from .summary import title
from .urls import Urls
from .writer import render_page, template_env, write_new


@dataclass(frozen=True)
class Scanned:
    """A worker's answer for one run: its digest and the signatures of its inputs, or why it is skipped."""

    run_id: str
    digest: RunDigest | None
    inputs: tuple[tuple[str, status.Signature], ...] = ()
    folders: tuple[str, ...] = ()
    error: tuple[str, str, str] | None = None  # (path, field, message)
    files: tuple[str, ...] | None = None  # the page files written while reading it, links still placeholders
    page_error: str | None = None  # why its page could not be made (the digest is still good)


def _env() -> Environment:
    return template_env()


@lru_cache(maxsize=1)
def redactor(data: Path, redact: bool, allow: str | None) -> tuple[Any, list[CollectError]]:
    """The secret redactor (DATA/redact-allow.txt is part of the global hash), once per process."""
    if not redact:
        return None, []
    from ..collect.redact import Redactor, load_allow_list
    allowed, errors = load_allow_list(data)
    return Redactor(allowed), errors


def shown_text(shared: dict[str, Any]) -> Callable[[str], str]:
    """The redactor as a filter of text (none with --no-redact): every string that leaves for the site
    passes it, file by file in the writer, on top of the redaction of each field where it is read."""
    red = redactor(Path(shared["data"]), shared["redact"], shared["allow"])[0]
    return str if red is None else (lambda text: red.text(text, Counter()))


def shown_error(e: CollectError, shared: dict[str, Any]) -> CollectError:
    clean = shown_text(shared)
    return CollectError(clean(e.path), clean(e.field), clean(e.message))


@lru_cache(maxsize=1)
def reviews(data: Path, content: str | None) -> Any:
    """DATA/reviews.toml, read once per process and content (its hash is part of the global hash)."""
    from ..collect.reviews import load_reviews
    return load_reviews(data)


def _load(data: Path, rel: str, run_id: str, slug: str) -> RunRecord:
    from ..collect.traces import load_run
    st = parallel.state()
    return load_run(data, data / rel, run_id, slug, reviews(data, st["reviews"]), redactor(data, st["redact"], st["allow"])[0],
                    st.get("rules"))


def _lookup(data: Path, r: RunRecord, problems: list[Any]) -> CachedValidation | None:
    from ..collect.validation import load_validation
    return load_validation(data, r, problems, redactor(data, parallel.state()["redact"], parallel.state()["allow"])[0])


def _validation_folders(data: Path, r: RunRecord) -> list[Path]:
    from ..core import cache
    fk, ref = r.trace.final_kernel, r.trace.reference_source
    return [cache.entry_dir(data, key) for key in cache.content_keys(fk.source, ref)] if fk and ref is not None else []


def digest_job(item: tuple[str, str, str]) -> Scanned:
    """Worker: a run's digest and the signatures of its inputs, or why the run is skipped. In a build (the
    state names the new site's folder) the same read also writes the run's page files, their links to other
    pages as placeholders (`Placeholders`), so a changed trace is read and parsed once per build."""
    rel, run_id, slug = item
    st = parallel.state()
    data = Path(st["data"])
    try:
        with run_budget():
            scanned, r, cached = _digest(data, rel, run_id, slug)
            if "tmp" not in st or scanned.digest is None:
                return scanned
            try:
                files = _write_run(r, cached, *Placeholders(st["nonce"]).urls_nav(scanned.digest))
            except OverBudget:
                raise
            except Exception as exc:  # noqa: BLE001 - one run's bad data must not cost the rest of the site
                return replace(scanned, page_error=f"run page not built: {type(exc).__name__}: {exc}")
            return replace(scanned, files=tuple(files))
    except CollectError as exc:
        return Scanned(run_id, None, error=(exc.path, exc.field, exc.message))
    except OverBudget as exc:
        return Scanned(run_id, None, error=(str(data / rel), "(budget)", str(exc)))
    except Exception as exc:  # noqa: BLE001 - the guard: one file must never stop the others
        return Scanned(run_id, None, error=(str(data / rel), "(internal)", f"reporter failed on this file ({type(exc).__name__}: "
                                            f"{str(exc)[:200]}); the run is skipped. Please report this as a bug."))


def _digest(data: Path, rel: str, run_id: str, slug: str) -> tuple[Scanned, RunRecord, CachedValidation | None]:
    trace_sig = status.signature(data / rel, None, data)  # signed before reading, so a later edit shows
    r = _load(data, rel, run_id, slug)
    files = [r.trace_path.parent / a.path for a in r.source.attachments]  # the files as named, not as published
    # The reference's work count (`reporter work`) is an input too: a build after counting draws the new floor.
    work = [work_file(data, sha256_text(r.source.reference_source)).parent] if r.source.reference_source is not None else []
    inputs, folders = status.inputs_of(data, files, _validation_folders(data, r) + work, {})
    if trace_sig is not None:
        inputs[rel] = trace_sig
    problems = [e.problem("attachment") for e in r.attachment_errors]
    cached = _lookup(data, r, problems)
    d = make(r, rel, cached, problems, shown_text(parallel.state()))
    return Scanned(run_id, d, tuple(inputs.items()), tuple(folders)), r, cached


class Placeholders:
    """What a run page links above itself (its group, model and problem pages, the previous and next run) is
    known only once every run is read; a page made while reading names them by placeholders the parent
    replaces (`fill`). Each holds a random token of the build, so no trace text can spell one."""

    NAMES = ("group", "model", "problem", "prev", "next")

    def __init__(self, nonce: str) -> None:
        self.tokens = {name: f"\ue000{nonce}:{name}\ue001" for name in self.NAMES}

    def urls_nav(self, d: RunDigest) -> tuple[Urls, dict[str, Any]]:
        t = self.tokens
        urls = Urls(runs={d.run_id: d.slug}, groups={d.key: t["group"]}, models={(d.key, d.model): t["model"]},
                    problems={d.problem: t["problem"]} if d.problem else {})
        return urls, {"slug": d.slug, "prev": t["prev"], "next": t["next"]}

    def fill(self, page: str, d: RunDigest, urls: Urls, nav: dict[str, Any], clean: Callable[[str], str]) -> str:
        """`page` (made with `urls_nav`'s stand-ins) with the site's links, escaped and redacted as the page was."""
        t = self.tokens
        real = {t["group"]: urls.groups[d.key], t["model"]: urls.models[(d.key, d.model)],
                t["problem"]: urls.problems[d.problem] if d.problem else "", t["prev"]: _href(nav.get("prev")),
                t["next"]: _href(nav.get("next"))}
        for token, value in real.items():
            page = page.replace(token, str(escape(clean(value))))
        return page


def _href(url: str | None) -> str:
    return f"../{url}" if url else ""  # a link between run pages, which all live in runs/


def render_job(item: tuple[str, str, dict[str, Any]]) -> list[str] | str:
    """Worker: load one run and write its page files into the new site; their paths, or why not."""
    rel, run_id, nav = item
    st = parallel.state()
    data = Path(st["data"])
    try:
        with run_budget():
            r = _load(data, rel, run_id, nav["slug"])
            return _write_run(r, _lookup(data, r, []), st["urls"], {**nav, "prev": _href(nav["prev"]), "next": _href(nav["next"])})
    except OverBudget as exc:
        return f"run page not built: {exc}"
    except Exception as exc:  # noqa: BLE001 - one run's bad data must not cost the rest of the site
        return f"run page not built: {type(exc).__name__}: {exc}"


def _write_run(r: RunRecord, cached: CachedValidation | None, urls: Urls, nav: dict[str, Any]) -> list[str]:
    """Render a run's page files and write them into the new site; their paths. `nav`'s prev and next are the
    links as the page writes them. The page, which draws on the run's files, its cached result and the site,
    passes the redactor whole; the turns chunk and the sources are made of the published trace's own strings
    alone, each redacted as the trace was read, so each text is redacted once (the chunk again was a fifth
    of a run's redaction)."""
    st = parallel.state()
    tmp = Path(st["tmp"])
    files = run_files(r, cached, urls, nav, _env(), st["generated"], st["assets"], HighlightCache(tmp / sitefiles.CACHE_DIR / "code"))
    clean = shown_text(st)
    # The search document goes to the site's cache (never published), which keeps it for a kept run: no page file.
    write_new(tmp, (doc := fulltext.doc_path(urls.runs[r.run_id])), verify.check(doc, files.pop(doc), clean))
    written: list[str] = []
    try:
        for path, content in files.items():
            write_new(tmp, path, verify.check(path, content, clean))
            written.append(path)
    except BaseException:  # over budget, or a disk error: no file of a page that is not made is left to publish
        for path in written:
            (tmp / path).unlink(missing_ok=True)
        raise
    return sorted(files)


def run_files(r: RunRecord, cached: CachedValidation | None, urls: Urls, nav: dict[str, Any], env: Environment,
              generated: str, assets: dict[str, str], cache: HighlightCache) -> dict[str, str]:
    """The site files of one run page: page, lazy chunk and downloads, by path in the site; `nav`'s prev and
    next are the links as the page writes them."""
    page = run_page(r, cached, urls, nav.get("prev"), nav.get("next"))
    fk, ref = r.trace.final_kernel, r.trace.reference_source
    base = urls.run(r.run_id).removesuffix(".html")
    final_html = numbered(cache.code(fk.source), KERNEL_LINE, page.context["kernel_marks"]) if fk else None
    doc, cut = fulltext.document(r.trace, _facets(r, page.context["summary"]))
    page = page.with_context(chunk=f"{Path(base).name}.turns.js", final_html=final_html, reference_html=cache.code(ref) if ref else None,
                             search_cut=cut.sentence())
    files = {page.path: render_page(env, page, assets, generated), f"{base}.turns.js": lazy.chunk_js(r.trace)}
    if fk:
        files[urls.download(r.run_id, "kernel")] = fk.source
        files[urls.kernel_chunk(r.run_id)] = compare.kernel_chunk_js(urls.runs[r.run_id], fk.source)
    if ref:
        files[urls.download(r.run_id, "reference")] = ref
    files[fulltext.doc_path(urls.runs[r.run_id])] = doc
    return files


def _facets(r: RunRecord, summary: Any) -> fulltext.Facets:
    """What a full-text result is filtered by: as the run's pages show it."""
    run = r.trace.run
    flags = sorted({f.check for f in r.findings} | ({"flagged value"} if r.flags else set()) | set(summary.caveats))
    return fulltext.Facets(f"{title(r)} · {run.model or 'model not recorded'}", run.model or "", run.benchmark or "", str(run.level) if run.level is not None else "",
                           run.problem_file or run.title or "", str(summary.verdict), tuple(flags))
