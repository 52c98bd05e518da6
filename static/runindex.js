// The all-runs page: search (MiniSearch, prebuilt index), sort and filter over the compact run index,
// shown a page at a time; and paging for any long server-rendered table (table.sortable).
(function () {
  'use strict';
  var PAGE = 100;

  function pager(el, count, page, go) {
    el.replaceChildren();
    var pages = Math.max(1, Math.ceil(count / PAGE));
    var info = document.createElement('span');
    info.textContent = count + ' row' + (count === 1 ? '' : 's') + (pages > 1 ? ' · page ' + (page + 1) + ' of ' + pages : '');
    el.appendChild(info);
    [['← previous', page - 1], ['next →', page + 1]].forEach(function (p) {
      if (pages < 2) return;
      var b = document.createElement('button');
      b.type = 'button'; b.textContent = p[0]; b.disabled = p[1] < 0 || p[1] >= pages;
      b.addEventListener('click', function () { go(p[1]); });
      el.appendChild(b);
    });
  }

  // Long server-rendered tables: every row stays in the DOM (sort and filter see them all), a page shows.
  function pageTables() {
    document.querySelectorAll('table.sortable').forEach(function (table) {
      var body = table.tBodies[0];
      if (!body || body.rows.length <= PAGE) return;
      var nav = document.createElement('nav'); nav.className = 'pager';
      table.parentNode.insertBefore(nav, table.nextSibling);
      var page = 0;
      function show(p) {
        var rows = Array.prototype.filter.call(body.rows, function (r) { return !r.hidden; });
        page = Math.max(0, Math.min(p, Math.ceil(rows.length / PAGE) - 1));
        Array.prototype.forEach.call(body.rows, function (r) { r.classList.add('paged-out'); });
        rows.slice(page * PAGE, (page + 1) * PAGE).forEach(function (r) { r.classList.remove('paged-out'); });
        pager(nav, rows.length, page, show);
      }
      new MutationObserver(function () { show(page); }).observe(body, { childList: true, subtree: true, attributes: true, attributeFilter: ['hidden'] });
      show(0);
    });
  }

  var data = null;
  window.reporterIndex = function (d) { data = d; runIndex(); };

  function cell(tr, text, href) {
    var td = document.createElement('td');
    if (href) { var a = document.createElement('a'); a.href = href; a.textContent = text; td.appendChild(a); }
    else td.textContent = text;
    tr.appendChild(td);
  }

  function runIndex() {
    var root = document.getElementById('runindex');
    if (!root || !data) return;
    var F = {}; data.fields.forEach(function (f, i) { F[f] = i; });
    var ms = window.MiniSearch ? window.MiniSearch.loadJS(data.index, { fields: data.search }) : null;
    var input = root.querySelector('input[type=search]'), body = root.querySelector('tbody');
    var nav = root.querySelector('nav.pager'), sortKey = null, dir = 1, page = 0;
    function matches() {
      var q = input.value.trim();
      if (!q) return data.rows.map(function (_, i) { return i; });
      if (!ms) return [];
      return ms.search(q, { prefix: true, combineWith: 'AND' }).map(function (r) { return r.id; });
    }
    function render(p) {
      var ids = matches();
      if (sortKey !== null) {
        var k = F[sortKey];
        ids.sort(function (a, b) {
          var x = data.rows[a][k], y = data.rows[b][k];
          if (x === y) return 0; if (x === null) return 1; if (y === null) return -1;
          return (typeof x === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true })) * dir;
        });
      }
      page = Math.max(0, Math.min(p, Math.ceil(ids.length / PAGE) - 1));
      body.replaceChildren();
      ids.slice(page * PAGE, (page + 1) * PAGE).forEach(function (i) {
        var r = data.rows[i], tr = document.createElement('tr');
        cell(tr, r[F.title], r[F.href]); cell(tr, r[F.problem]); cell(tr, r[F.model]); cell(tr, r[F.group]);
        cell(tr, r[F.verdict].replace(/_/g, ' ') + ' (' + r[F.source] + ')');
        cell(tr, r[F.speedup] === null ? '—' : r[F.speedup].toFixed(2) + 'x'); cell(tr, String(r[F.flags])); cell(tr, r[F.kernels]);
        body.appendChild(tr);
      });
      pager(nav, ids.length, page, render);
      var q = input.value.trim();
      history.replaceState(null, '', q ? '#q=' + encodeURIComponent(q) : location.pathname + location.search);
    }
    root.querySelectorAll('th[data-key]').forEach(function (th) {
      th.tabIndex = 0;
      var go = function () {
        dir = sortKey === th.dataset.key ? -dir : 1; sortKey = th.dataset.key;
        root.querySelectorAll('th[data-key]').forEach(function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
        render(0);
      };
      th.addEventListener('click', go);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter') go(); });
    });
    var m = /^#q=(.*)$/.exec(location.hash);
    if (m) input.value = decodeURIComponent(m[1]);
    input.addEventListener('input', function () { render(0); });
    render(0);
  }

  document.addEventListener('DOMContentLoaded', function () {
    pageTables();
    var root = document.getElementById('runindex');
    if (root && root.dataset.index) {
      var s = document.createElement('script');
      s.src = root.dataset.index;
      document.head.appendChild(s);
    }
  });
})();
