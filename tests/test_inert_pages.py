"""Issue 32, item 5: every string a run folder holds is shown as text on every page kind, never as markup.

Three runs of data/ (kernel versions and a profile, a partial run, Nsight counters) get a distinct marker
appended to every string of their traces (every field the schema accepts it in, free-form keys too), of
their profiler and Nsight attachments (kernel names) and of their cached validation results (logs,
reasons, findings, environment). Each marker is a quote-breaking attribute and an element:
`"'><xss-N data-xss="N">`. The site is built once; every page (run, problem, model, grid, leaderboards,
variants, search, index, 404) and every lazily inserted turn chunk is parsed, and any `xss-*` element or
`data-xss` attribute there means some escape is broken (a `|safe` in a macro, a Markup() around data).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import SMALL_RUNS, small_copy
from reporter.cli import main
from reporter.core import cache
from reporter.core.records import Trace, ValidationResult, sha256_text


def _kept(path: tuple[str, ...]) -> bool:
    """Strings that name files (an attachment's path, a result's ncu files): they must still be found."""
    return (path[:1] == ("attachments",) and path[-1:] == ("path",)) or "ncu_files" in path


def marker(n: int) -> str:
    return f"q\"x'><xss-{n} data-xss=\"{n}\">m{n}</xss-{n}>"


class Live(HTMLParser):
    """Elements and attributes that came from a marker, as live markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag.startswith("xss"):
            self.found.append(f"<{tag}>")
        self.found += [f"{tag}[{name}]" for name, _ in attrs if name.startswith(("data-xss", "xss"))]


def live(html: str) -> list[str]:
    p = Live()
    p.feed(html)
    p.close()
    return p.found


class Marks:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return marker(self.n)


def _marked(node: Any, marks: Marks, path: tuple[str, ...], free: bool) -> Any:
    """`node` with a marker after every string (and after every key of a free-form object)."""
    if isinstance(node, str):
        return node if _kept(path) else node + marks.next()
    if isinstance(node, list):
        return [_marked(v, marks, (*path, "[]"), free) for v in node]
    if isinstance(node, dict):
        inner_free = free or path[-1:] in (("harness_metadata",), ("arguments",), ("extra",))
        return {(k + marks.next() if free and isinstance(k, str) else k): _marked(v, marks, (*path, str(k)), inner_free)
                for k, v in node.items()}
    return node


def _valid(doc: dict[str, Any], original: dict[str, Any], model: Any) -> dict[str, Any]:
    """`doc`, with every field the schema refuses a marked string in (an enum, a date) put back as it was."""
    from pydantic import ValidationError
    for _ in range(50):
        try:
            model.model_validate(doc)
            return doc
        except ValidationError as exc:
            for err in exc.errors():
                _restore(doc, original, list(err["loc"]))
    raise AssertionError("could not make a valid marked document")


def _restore(doc: Any, original: Any, loc: list[Any]) -> None:
    for i in range(len(loc), 0, -1):  # the deepest part of the path that both documents have
        d, o = doc, original
        try:
            for part in loc[:i - 1]:
                d, o = d[part], o[part]
            d[loc[i - 1]] = json.loads(json.dumps(o[loc[i - 1]]))
            return
        except (KeyError, IndexError, TypeError):
            continue


def _mark_attachments(folder: Path, marks: Marks) -> None:
    for raw in folder.glob("*_raw.csv"):
        rows = list(csv.reader(io.StringIO(raw.read_text(encoding="utf-8"))))
        col = rows[0].index("Kernel Name")
        for row in rows[2:]:
            row[col] += marks.next()
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
        raw.write_text(out.getvalue(), encoding="utf-8")
    for prof in folder.glob("*_trace.json"):
        doc = json.loads(prof.read_text(encoding="utf-8"))
        for e in doc.get("traceEvents", doc if isinstance(doc, list) else []):
            if isinstance(e, dict) and isinstance(e.get("name"), str) and e.get("cat") == "kernel":  # what pages name
                e["name"] += marks.next()
        prof.write_text(json.dumps(doc), encoding="utf-8")


def _mark_run(data: Path, run: str, marks: Marks) -> None:
    path = data / run / "trace.json"
    original = json.loads(path.read_text(encoding="utf-8"))
    doc = _valid(_marked(original, marks, (), False), original, Trace)
    old = cache.content_keys(original["final_kernel"]["source"], original["reference_source"]) \
        if original.get("final_kernel") and original.get("reference_source") else []
    path.write_text(json.dumps(doc), encoding="utf-8")
    _mark_attachments(data / run, marks)
    if not old:
        return
    new_key = cache.content_key(doc["final_kernel"]["source"], doc["reference_source"])
    for key in old:
        for result in sorted(cache.entry_dir(data, key).glob("*.json")):
            res = json.loads(result.read_text(encoding="utf-8"))
            marked = _valid(_marked(res, marks, (), False), res, ValidationResult)
            dest = cache.entry_dir(data, new_key)
            dest.mkdir(parents=True, exist_ok=True)
            (dest / result.name).write_text(json.dumps(marked), encoding="utf-8")
            for other in result.parent.iterdir():  # the ncu files a result names, beside it
                if other.suffix != ".json" and not (dest / other.name).exists():
                    shutil.copy(other, dest / other.name)


@pytest.fixture(scope="module")
def marked_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    root = tmp_path_factory.mktemp("inert")
    data = small_copy(root / "data")
    marks = Marks()
    for run in SMALL_RUNS:
        _mark_run(data, run, marks)
    kernel = json.loads((data / SMALL_RUNS[0] / "trace.json").read_text(encoding="utf-8"))["final_kernel"]["source"]
    review = {"run": SMALL_RUNS[0], "kernel_sha256": sha256_text(kernel), "reviewer": f"r{marks.next()}", "verdict": "clean",
              "quote": "kernel.py:1", "note": f"n{marks.next()}"}
    (data / "reviews.toml").write_text("[[review]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in review.items()), encoding="utf-8")
    res = CliRunner().invoke(main, ["build", str(data), str(root / "site"), "--no-validate"])
    assert res.exit_code in (0, 1), res.output
    return root / "site", marks.n


def _chunks(site: Path) -> list[tuple[str, str]]:
    """The HTML of every turn that a run page's script inserts from its lazily loaded chunk."""
    out = []
    for chunk in sorted(site.glob("runs/*.turns.js")):
        payload = json.loads(re.fullmatch(r"reporterChunk\((.*)\);\s*", chunk.read_text(encoding="utf-8"), re.S).group(1))
        out += [(f"{chunk.name}#turn{i}", html) for i, html in enumerate(payload.get("turns", []))]
    return out


def test_no_string_of_a_run_folder_becomes_markup_on_any_page(marked_site: tuple[Path, int]) -> None:
    site, n = marked_site
    pages = sorted(site.rglob("*.html"))
    kinds = {p.parent.name if p.parent != site else p.stem for p in pages}
    assert {"runs", "problems", "models", "grids", "leaderboards", "variants", "index", "search"} <= kinds, kinds
    found = {f"{p.relative_to(site)}": bad for p in pages if (bad := live(p.read_text(encoding="utf-8")))}
    found |= {name: bad for name, html in _chunks(site) if (bad := live(html))}
    assert not found, found
    # The markers were there to be escaped: most of them reach the site (pages, chunks, data for scripts).
    shown = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*") if p.suffix in (".html", ".js", ".csv"))
    seen = {int(m) for m in re.findall(r"xss-(\d+)", shown)}
    assert n > 200 and len(seen) > n // 2, (n, len(seen))


def test_the_check_finds_a_marker_made_live() -> None:
    """The detector itself: an escaped marker is text, an unescaped one (or one in a broken attribute) is live."""
    from markupsafe import escape
    assert live(f"<p>{escape(marker(1))}</p><a title=\"{escape(marker(2))}\">x</a>") == []
    assert live(f"<p>{marker(3)}</p>") == ["<xss-3>", "xss-3[data-xss]"]
    assert "<xss-4>" in live(f"<a title='{marker(4)}'>x</a>") and "<xss-5>" in live(f'<a title="{marker(5)}">x</a>')
    assert live('<a data-xss="1">x</a>') == ["a[data-xss]"]
