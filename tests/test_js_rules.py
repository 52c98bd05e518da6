"""The pages' scripts' rules, run in node (no browser): issue 32's surviving faults in the JS.

static/app.js and static/diff.js are loaded into a bare context (a `window` and a `document` that only
records listeners) and their exposed functions are called: which chart-point pages a click may open, which
rows a table filter keeps, and the old and new line numbers of a diff.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[1] / "static"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

RUN = """
const vm = require('vm'), fs = require('fs');
const ctx = {window: {}, document: {addEventListener() {}}, console};
vm.createContext(ctx);
for (const f of process.argv.slice(1, 3)) vm.runInContext(fs.readFileSync(f, 'utf8'), ctx, {filename: f});
const app = ctx.window.reporterApp, diff = ctx.window.reporterDiff;
const cases = JSON.parse(process.argv[3]);
console.log(JSON.stringify({
  href: cases.href.map(h => app.siteHref(h)),
  rows: cases.rows.map(([text, q]) => app.rowMatches(text, q)),
  hunks: diff.hunks(cases.diff, Infinity).flatMap(p => p.lines.map(l => [l.op, l.old, l.neu])),
}));
"""


def run_js(cases: dict[str, object]) -> dict[str, list]:
    out = subprocess.run([NODE or "node", "-e", RUN, str(STATIC / "app.js"), str(STATIC / "diff.js"), json.dumps(cases)],
                         capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def test_the_scripts_rules() -> None:
    got = run_js({
        "href": ["../runs/a-1.html", "runs/x.html", "javascript:alert(1)//x.html", "JavaScript:alert(1);x.html",
                 "https://evil.example/x.html", "data:text/html,x.html", "runs/x.html?q", 7],
        "rows": [["demo-alpha 1.2x", "demo"], ["xdemo", "demo"], ["Demo-Beta", "beta"], ["other", "demo"], ["anything", ""]],
        "diff": [[" ", "a"], ["-", "b"], ["-", "c"], ["+", "C"], [" ", "d"], ["+", "e"], [" ", "f"]],
    })
    # a chart click opens only a page of this site, by a relative path (a `javascript:` URL ending in .html is none)
    assert got["href"] == [True, True, False, False, False, False, False, False]
    # the filter keeps a row that starts with the query, as well as one that holds it later
    assert got["rows"] == [True, True, True, False, True]
    # deleted lines advance the old numbering, added lines the new one
    assert got["hunks"] == [[" ", 1, 1], ["-", 2, None], ["-", 3, None], ["+", None, 2], [" ", 4, 3], ["+", None, 4], [" ", 5, 5]]


PAGING = """
const vm = require('vm'), fs = require('fs');
const ctx = {window: {}, document: {addEventListener() {}}, console};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.argv[1], 'utf8'), ctx, {filename: process.argv[1]});
const paging = ctx.window.reporterPaging, list = Array.from({length: 250}, (_, i) => i);
console.log(JSON.stringify({size: paging.size,
  pages: [-1, 0, 1, 2, 3, 9].map(p => { const r = paging.pageOf(list, p); return [r.page, r.items[0], r.items.length]; }),
  empty: paging.pageOf([], 0).items.length,
  union: [0, 1, 2].flatMap(p => paging.pageOf(list, p).items)}));
"""


def test_the_run_index_pages_every_row_exactly_once() -> None:
    """Blind round 9's survivor: a page of 99 rows left one run in each hundred unseen, and the sample site has fewer
    than a hundred runs, so no browser test could see it. 250 rows in pages of 100: 100, 100, 50; a page asked for
    beyond either end is the nearest one."""
    out = json.loads(subprocess.run([NODE or "node", "-e", PAGING, str(STATIC / "runindex.js")], capture_output=True,
                                    text=True, timeout=30, check=True).stdout)
    assert out["size"] == 100
    assert out["pages"] == [[0, 0, 100], [0, 0, 100], [1, 100, 100], [2, 200, 50], [2, 200, 50], [2, 200, 50]]
    assert out["empty"] == 0 and out["union"] == list(range(250))
