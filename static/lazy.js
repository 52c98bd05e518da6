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

  // Version N against version N-1 as hunks (static/diff.js), or its whole source.
  function showVersion(body, how) {
    withChunk(function (data) {
      var n = parseInt(body.dataset.version, 10), src = data.versions[n - 1] || '';
      var view = body.querySelector('.version-view');
      var D = window.reporterDiff;
      view.replaceChildren(how === 'diff' && n > 1 ? D.block(data.versions[n - 2], src, false) : D.source(src));
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
