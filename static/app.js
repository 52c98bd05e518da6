// Small, dependency-free behaviour: charts, sortable/filterable tables (state in the URL), shortcuts.
(function () {
  'use strict';

  // Plotly draws titles inside the chart, where they cannot wrap and its legend and toolbar sit over them:
  // the title becomes a caption above the chart instead, and touch screens get no toolbar.
  function caption(el, fig) {
    var t = fig.layout.title && (typeof fig.layout.title === 'string' ? fig.layout.title : fig.layout.title.text);
    if (!t) return;
    var cap = document.createElement('p');
    cap.className = 'chart-title';
    cap.textContent = new DOMParser().parseFromString(String(t).replace(/<br\s*\/?>/gi, ' '), 'text/html').body.textContent;
    el.parentNode.insertBefore(cap, el);
    fig.layout.title = { text: '' };
  }

  // A chart point's page: a relative path of this site ending in .html, never a scheme (`javascript:...x.html`).
  function siteHref(href) { return typeof href === 'string' && /^[\w./-]+\.html$/.test(href); }

  // A table filter keeps the rows whose text holds the query anywhere, its start included.
  function rowMatches(text, q) { return q === '' || text.toLowerCase().indexOf(q) >= 0; }

  function drawCharts() {
    if (typeof window.Plotly === 'undefined') return;
    var touch = window.matchMedia && window.matchMedia('(hover: none), (pointer: coarse)').matches;
    document.querySelectorAll('[data-plotly]').forEach(function (el) {
      var data = document.getElementById('fig-' + el.getAttribute('data-plotly'));
      if (!data) return;
      var fig = JSON.parse(data.textContent);
      var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
      fig.layout = fig.layout || {};
      if (dark) fig.layout.font = Object.assign({}, fig.layout.font, { color: '#e6e6e8' });
      caption(el, fig);
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false, displayModeBar: touch ? false : 'hover' });
      // Points whose customdata is a page of this site (the runtime scatter) open that page on click.
      el.on('plotly_click', function (ev) {
        var href = ev.points && ev.points[0] && ev.points[0].customdata;
        if (siteHref(href)) location.href = href;
      });
    });
  }

  // Data tables: each cell labelled with its column's header (phones show rows as label/value cards), and
  // a table wider than its box scrolls inside it with its first column pinned and a line that says so.
  function headerLabel(th) {
    if (th.hasAttribute('data-label')) return th.getAttribute('data-label');
    var copy = th.cloneNode(true);
    copy.querySelectorAll('.src, .sub').forEach(function (e) { e.remove(); });
    return copy.textContent.replace(/\s+/g, ' ').trim();
  }

  function labelCells(table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head) return;
    var labels = [];
    Array.prototype.forEach.call(head.cells, function (th) {
      labels.push(headerLabel(th));
      for (var k = 1; k < th.colSpan; k++) labels.push('');
    });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (tr) {
        var col = 0;
        Array.prototype.forEach.call(tr.cells, function (td) {
          // the first cell names the row (a card's title on phones); the others carry their column's name
          if (col > 0 && td.colSpan === 1 && labels[col]) td.setAttribute('data-label', labels[col]);
          col += td.colSpan;
        });
      });
    });
  }

  function setupWideTables() {
    document.querySelectorAll('main table').forEach(function (table) {
      if (table.classList.contains('hltable') || table.closest('.hl')) return;
      table.classList.add('stack');
      labelCells(table);
      if (table.tBodies[0]) new MutationObserver(function () { labelCells(table); }).observe(table.tBodies[0], { childList: true });
      var box = table.parentElement;
      if (!box.classList.contains('scroll')) {
        box = document.createElement('div'); box.className = 'scroll';
        table.parentNode.insertBefore(box, table); box.appendChild(table);
      }
      var hint = document.createElement('p');
      box.parentNode.insertBefore(hint, box);
      watchOverflow(box, box, hint, 'wide table: scroll sideways for more columns →');
    });
  }

  // `scroller` scrolls sideways: `marked` gets "overflowing" (and "at-end" once scrolled to the end), and the
  // `hint` line says so while there is more to see. Re-checked on scroll and whenever the scroller is resized.
  function watchOverflow(scroller, marked, hint, words) {
    hint.className = 'scroll-hint'; hint.hidden = true; hint.textContent = words;
    var check = function () {
      var over = scroller.scrollWidth > scroller.clientWidth + 1;
      marked.classList.toggle('overflowing', over);
      marked.classList.toggle('at-end', scroller.scrollLeft + scroller.clientWidth >= scroller.scrollWidth - 1);
      hint.hidden = !over;
    };
    scroller.addEventListener('scroll', check, { passive: true });
    if (window.ResizeObserver) new ResizeObserver(check).observe(scroller); else window.addEventListener('resize', check);
    check();
  }

  // Code whose long lines go past its box (a diff on a phone) scrolls sideways inside its <pre>: while there
  // is more to the right, the code's right edge fades and a line above it says so, as for wide tables. Blocks
  // drawn later (diff.js, lazy turns) call this too; a ResizeObserver measures them once they are laid out.
  function sideways(box) {
    var pre = box.querySelector('pre');
    if (!pre || box.dataset.sideways) return;
    box.dataset.sideways = '1';
    var hint = document.createElement('p');
    box.insertBefore(hint, pre);
    watchOverflow(pre, box, hint, 'long lines: scroll the code sideways →');
    hint.classList.add('code-hint');
  }
  window.reporterSideways = sideways;

  function cellValue(row, idx, kind) {
    var cell = row.children[idx];
    if (!cell) return '';
    var raw = cell.hasAttribute('data-value') ? cell.getAttribute('data-value') : cell.textContent.trim();
    if (kind === 'num') {
      var n = parseFloat(String(raw).replace(/,/g, ''));
      return isNaN(n) ? -Infinity : n;
    }
    return String(raw).toLowerCase();
  }

  function params() { return new URLSearchParams(location.hash.slice(1)); }
  function saveParams(p) { history.replaceState(null, '', '#' + p.toString()); }

  function sortTable(table, idx, dir) {
    var th = table.tHead.rows[0].children[idx];
    var kind = th.getAttribute('data-sort');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, idx, kind), y = cellValue(b, idx, kind);
      var c = kind === 'num' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return dir === 'ascending' ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].children, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
  }

  function setupTables() {
    var p = params();
    document.querySelectorAll('table.sortable').forEach(function (table, t) {
      Array.prototype.forEach.call(table.tHead.rows[0].children, function (th, idx) {
        if (!th.hasAttribute('data-sort')) return;
        th.tabIndex = 0;
        var go = function () {
          var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
          sortTable(table, idx, dir);
          var q = params(); q.set('sort' + t, idx + (dir === 'ascending' ? 'a' : 'd')); saveParams(q);
        };
        th.addEventListener('click', go);
        th.addEventListener('keydown', function (e) { if (e.key === 'Enter') go(); });
      });
      var s = p.get('sort' + t);
      if (s) sortTable(table, parseInt(s, 10), s.slice(-1) === 'a' ? 'ascending' : 'descending');
    });
    document.querySelectorAll('[data-filter]').forEach(function (input, f) {
      var next = input.closest('.filter').nextElementSibling;
      while (next && next.tagName !== 'TABLE' && !next.querySelector('table')) next = next.nextElementSibling;
      if (!next) return;
      var table = next.tagName === 'TABLE' ? next : next.querySelector('table');
      var apply = function () {
        var q = input.value.toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
          r.hidden = !rowMatches(r.textContent, q);
        });
        var ps = params(); if (q) ps.set('q' + f, q); else ps.delete('q' + f); saveParams(ps);
      };
      input.value = p.get('q' + f) || '';
      input.addEventListener('input', apply);
      apply();
    });
  }

  // The timing basis of leaderboards and grids: one view per basis in the page, the choice kept in the URL.
  function setupBasis() {
    var switches = document.querySelectorAll('[data-basis-switch]');
    if (!switches.length) return;
    var show = function (basis) {
      document.querySelectorAll('[data-basis]').forEach(function (el) {
        el.hidden = el.getAttribute('data-basis') !== basis;
        // a chart drawn while hidden has no size: fit it to its box now that it shows
        if (!el.hidden && window.Plotly) el.querySelectorAll('.js-plotly-plot').forEach(function (c) { window.Plotly.Plots.resize(c); });
      });
      switches.forEach(function (a) {
        if (a.getAttribute('data-basis-switch') === basis) a.setAttribute('aria-current', 'true');
        else a.removeAttribute('aria-current');
      });
      // links to the same view of another page (re-validated only, per level) carry the choice along
      document.querySelectorAll('a[data-keep-basis]').forEach(function (a) {
        a.setAttribute('href', a.getAttribute('href').split('#')[0] + '#basis=' + basis);
      });
    };
    switches.forEach(function (a) {
      a.addEventListener('click', function (e) {
        e.preventDefault();
        var b = a.getAttribute('data-basis-switch');
        show(b);
        var q = params(); q.set('basis', b); saveParams(q);
      });
    });
    var chosen = params().get('basis');
    if (chosen && document.querySelector('[data-basis-switch="' + chosen.replace(/[^a-z]/g, '') + '"]')) show(chosen);
  }

  function setupKeys() {
    var run = document.querySelector('article.run');
    document.addEventListener('keydown', function (e) {
      if (e.target.closest('input, textarea, select') || e.metaKey || e.ctrlKey || e.altKey) return;
      var crumbs = document.querySelectorAll('.crumbs a');
      if (e.key === 'j' && run && run.dataset.next) location.href = run.dataset.next;
      else if (e.key === 'k' && run && run.dataset.prev) location.href = run.dataset.prev;
      else if (e.key === 'u' && crumbs.length) location.href = crumbs[crumbs.length - 1].href;
    });
  }

  // plotly.js is 4.8 MB, seconds of parsing on a phone: it loads async, so tables, filters and keys work at
  // once and the charts are drawn when it has run (an async script may also run before this handler does).
  function whenPlotly(fn) {
    if (window.Plotly) { fn(); return; }
    var s = document.getElementById('plotly-js');
    if (s) s.addEventListener('load', fn);
  }

  window.reporterApp = { siteHref: siteHref, rowMatches: rowMatches };  // for tests/test_js_rules.py
  document.addEventListener('DOMContentLoaded', function () { setupBasis(); whenPlotly(drawCharts); setupTables(); setupWideTables(); setupKeys();
    document.querySelectorAll('main .hl').forEach(sideways); });
})();
