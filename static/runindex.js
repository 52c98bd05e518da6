// The all-runs page: search (MiniSearch, prebuilt indexes, one per model), sort and filter over the compact run index,
// shown a page at a time; and paging for any long server-rendered table (table.sortable).
(function () {
  'use strict';
  var PAGE = 100;

  // Page p of a list, p held within the pages there are (the one paging rule of both tables): {page, items}.
  function pageOf(list, p) {
    var page = Math.max(0, Math.min(p, Math.ceil(list.length / PAGE) - 1));
    return { page: page, items: list.slice(page * PAGE, (page + 1) * PAGE) };
  }
  window.reporterPaging = { pageOf: pageOf, size: PAGE };

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
        var shown = pageOf(rows, p);
        page = shown.page;
        Array.prototype.forEach.call(body.rows, function (r) { r.classList.add('paged-out'); });
        shown.items.forEach(function (r) { r.classList.remove('paged-out'); });
        pager(nav, rows.length, page, show);
      }
      new MutationObserver(function () { show(page); }).observe(body, { childList: true, subtree: true, attributes: true, attributeFilter: ['hidden'] });
      show(0);
    });
  }

  // The run index comes in pieces, each a script (so it loads from file:// too): the manifest
  // (reporterIndex: field names and shard files), then one shard per model (reporterShard: its rows and
  // its own prebuilt MiniSearch index). Rows show as shards arrive; a query searches every shard.
  var index = null;
  window.reporterIndex = function (manifest) {
    var root = document.getElementById('runindex');
    if (!root || index) return;
    var dir = root.dataset.index.replace(/[^/]*$/, '');
    index = { fields: manifest.fields, search: manifest.search, rows: [], parts: [], wanted: {}, pending: 0, failed: 0, show: null };
    (manifest.shards || []).forEach(function (path) {
      index.wanted[path] = true; index.pending++;
      var s = document.createElement('script');
      s.src = dir + path;
      s.onerror = function () { if (index.wanted[path]) { delete index.wanted[path]; index.pending--; index.failed++; arrived(); } };
      document.head.appendChild(s);
    });
    runIndex(root);
    arrived();
  };
  window.reporterShard = function (d) {
    if (!index || !index.wanted[d.shard]) return;
    delete index.wanted[d.shard]; index.pending--;
    index.parts.push({ base: index.rows.length, ms: window.MiniSearch ? window.MiniSearch.loadJS(d.index, { fields: index.search }) : null });
    Array.prototype.push.apply(index.rows, d.rows);
    arrived();
  };

  // Rows carry their place in the listing pages' order (a list compared part by part), so the rows of
  // every shard show in one order, as the listing pages do.
  function byPlace(a, b) {
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
  }

  function arrived() {
    var k = index.fields.indexOf('order');
    index.all = index.rows.map(function (_, i) { return i; });
    index.all.sort(function (a, b) { return byPlace(index.rows[a][k], index.rows[b][k]); });
    index.place = [];
    index.all.forEach(function (id, n) { index.place[id] = n; });
    var root = document.getElementById('runindex');
    root.setAttribute('aria-busy', index.pending ? 'true' : 'false');
    if (index.show) index.show();
  }

  function cell(tr, text, href) {
    var td = document.createElement('td');
    if (href) { var a = document.createElement('a'); a.href = href; a.textContent = text; td.appendChild(a); }
    else words(td, text);
    tr.appendChild(td);
  }

  // As the pages' `words` filter: each hyphenated word an inline block, so a line never breaks at its hyphen
  // when the word would fit on the next line.
  function words(el, text) {
    String(text).split(/(\s+)/).forEach(function (part) {
      if (part.indexOf('-') < 0) { el.appendChild(document.createTextNode(part)); return; }
      var w = document.createElement('span');
      w.className = 'w';
      w.textContent = part;
      el.appendChild(w);
    });
  }

  // Every shard's matches (prefix, AND, as one index would), merged: best score first, ties in page order.
  function search(q) {
    var found = [];
    index.parts.forEach(function (part) {
      if (part.ms) part.ms.search(q, { prefix: true, combineWith: 'AND' }).forEach(function (r) { found.push([part.base + r.id, r.score]); });
    });
    found.sort(function (a, b) { return b[1] - a[1] || index.place[a[0]] - index.place[b[0]]; });
    return found.map(function (r) { return r[0]; });
  }

  function runIndex(root) {
    var F = {}; index.fields.forEach(function (f, i) { F[f] = i; });
    var rows = index.rows;
    var input = root.querySelector('input[type=search]'), body = root.querySelector('tbody');
    var nav = root.querySelector('nav.pager'), sortKey = null, dir = 1, page = 0;
    function matches() {
      var q = input.value.trim();
      return q ? search(q) : index.all.slice();
    }
    function render(p) {
      var ids = matches();
      if (sortKey !== null) {
        var k = F[sortKey];
        ids.sort(function (a, b) {
          var x = rows[a][k], y = rows[b][k];
          if (x === y) return 0; if (x === null) return 1; if (y === null) return -1;
          return (typeof x === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true })) * dir;
        });
      }
      var shown = pageOf(ids, p);
      page = shown.page;
      body.replaceChildren();
      shown.items.forEach(function (i) {
        var r = rows[i], tr = document.createElement('tr');
        cell(tr, r[F.title], r[F.href]); cell(tr, r[F.problem]); cell(tr, r[F.model]); cell(tr, r[F.group]);
        cell(tr, r[F.verdict].replace(/_/g, ' ') + ' (' + r[F.source] + ')');
        cell(tr, r[F.speedup] === null ? '—' : r[F.speedup].toFixed(2) + 'x'); cell(tr, String(r[F.flags])); cell(tr, r[F.kernels]);
        body.appendChild(tr);
      });
      pager(nav, ids.length, page, render);
      var note = index.pending ? 'loading the index…' : index.failed ? index.failed + ' part(s) of the index could not be loaded' : '';
      if (note) { var s = document.createElement('span'); s.className = 'loading'; s.textContent = note; nav.appendChild(s); }
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
    index.show = function () { render(page); };
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
