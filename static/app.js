// Small, dependency-free behaviour: charts, sortable/filterable tables (state in the URL), shortcuts.
(function () {
  'use strict';

  function drawCharts() {
    if (typeof window.Plotly === 'undefined') return;
    document.querySelectorAll('[data-plotly]').forEach(function (el) {
      var data = document.getElementById('fig-' + el.getAttribute('data-plotly'));
      if (!data) return;
      var fig = JSON.parse(data.textContent);
      var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
      fig.layout = fig.layout || {};
      if (dark) fig.layout.font = Object.assign({}, fig.layout.font, { color: '#e6e6e8' });
      window.Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false });
      // Points whose customdata is a page of this site (the runtime scatter) open that page on click.
      el.on('plotly_click', function (ev) {
        var href = ev.points && ev.points[0] && ev.points[0].customdata;
        if (typeof href === 'string' && /^[\w./-]+\.html$/.test(href)) location.href = href;
      });
    });
  }

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
      var table = next.tagName === 'TABLE' ? next : next.querySelector('table');
      var apply = function () {
        var q = input.value.toLowerCase();
        Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
          r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
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

  document.addEventListener('DOMContentLoaded', function () { setupBasis(); drawCharts(); setupTables(); setupKeys(); });
})();
