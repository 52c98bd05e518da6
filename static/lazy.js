// Run pages: turns and kernel versions filled from the run's JSONP chunk when first expanded.
// The chunk is loaded with <script src> (relative to the page), which works from file:// and any sub-path.
// Turn HTML in the chunk was escaped by the build; kernel sources are inserted as text, never as HTML.
(function () {
  'use strict';
  var chunk = null, waiting = [], failed = false;

  window.reporterChunk = function (data) {
    chunk = data;
    var w = waiting; waiting = [];
    w.forEach(function (fn) { fn(data); });
  };

  function withChunk(fn) {
    if (chunk) { fn(chunk); return; }
    var art = document.querySelector('article.run[data-chunk]');
    if (!art || failed) return;
    waiting.push(fn);
    if (waiting.length > 1) return;
    var s = document.createElement('script');
    s.src = art.getAttribute('data-chunk');
    s.onerror = function () {
      failed = true;
      document.querySelectorAll('.lazy-body').forEach(function (b) {
        if (!b.dataset.filled) b.textContent = 'Could not load ' + s.src + '; the plain-text view has the same content.';
      });
    };
    document.head.appendChild(s);
  }

  function fillTurn(body) {
    withChunk(function (data) {
      if (body.dataset.filled) return;
      body.innerHTML = data.turns[parseInt(body.dataset.turn, 10)] || '';
      body.dataset.filled = '1';
    });
  }

  // Longest-common-subsequence line diff; falls back to null when the table would be too large.
  function lineDiff(a, b) {
    var n = a.length, m = b.length;
    if ((n + 1) * (m + 1) > 4e6) return null;
    var w = m + 1, L = new Uint32Array((n + 1) * w), i, j;
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        L[i * w + j] = a[i] === b[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
      }
    }
    var out = []; i = 0; j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; }
      else if (L[(i + 1) * w + j] >= L[i * w + j + 1]) { out.push(['-', a[i]]); i++; }
      else { out.push(['+', b[j]]); j++; }
    }
    for (; i < n; i++) out.push(['-', a[i]]);
    for (; j < m; j++) out.push(['+', b[j]]);
    return out;
  }

  function codeBlock(lines) {
    var wrap = document.createElement('div'); wrap.className = 'hl';
    var pre = document.createElement('pre'); wrap.appendChild(pre);
    lines.forEach(function (l) {
      var span = document.createElement('span');
      if (l[0] === '+') span.className = 'gi'; else if (l[0] === '-') span.className = 'gd';
      span.textContent = (l[0] === null ? '' : l[0] + ' ') + l[1] + '\n';
      pre.appendChild(span);
    });
    return wrap;
  }

  function showVersion(body, how) {
    withChunk(function (data) {
      var n = parseInt(body.dataset.version, 10), src = data.versions[n - 1] || '';
      var view = body.querySelector('.version-view');
      var lines = null;
      if (how === 'diff' && n > 1) {
        var d = lineDiff(data.versions[n - 2].split('\n'), src.split('\n'));
        if (d) lines = d;
      }
      if (!lines) lines = src.split('\n').map(function (l) { return [null, l]; });
      view.replaceChildren(codeBlock(lines));
      body.querySelectorAll('button[data-show]').forEach(function (b) { b.setAttribute('aria-pressed', String(b.dataset.show === how)); });
      body.dataset.filled = '1';
    });
  }

  function setup() {
    document.querySelectorAll('details.turn .lazy-body').forEach(function (body) {
      var d = body.closest('details');
      d.addEventListener('toggle', function () { if (d.open) fillTurn(body); });
      if (d.open) fillTurn(body);
    });
    document.querySelectorAll('details.version .version-body').forEach(function (body) {
      var d = body.closest('details');
      d.addEventListener('toggle', function () { if (d.open && !body.dataset.filled) showVersion(body, parseInt(body.dataset.version, 10) > 1 ? 'diff' : 'source'); });
      body.addEventListener('click', function (e) {
        var b = e.target.closest('button[data-show]');
        if (b) showVersion(body, b.dataset.show);
      });
    });
    // "kernel version N" links inside a turn open that version.
    document.addEventListener('click', function (e) {
      var a = e.target.closest && e.target.closest('a[data-version]');
      if (!a) return;
      var d = document.getElementById('version-' + a.dataset.version);
      if (d) d.open = true;
    });
  }

  document.addEventListener('DOMContentLoaded', setup);
})();
