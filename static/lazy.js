// Run pages: turns and kernel versions filled from the run's JSONP chunk when first expanded.
// The chunk is loaded with <script src> (relative to the page), which works from file:// and any sub-path.
// Turn HTML in the chunk was escaped by the build; kernel sources are inserted as text, or as static/kernelhl.js
// highlights that text.
// Fenced code in a turn is highlighted here, when the turn is shown, by highlight.js (BSD-3-Clause, licence
// beside it), loaded the same way and at the same time as the chunk: a turn appears once, already coloured.
(function () {
  'use strict';
  var chunk = null, waiting = [], failed = false, highlighter = 'none';
  // Languages an untagged block may be detected as (a fence's own tag may name any language highlight.js has).
  var DETECT = ['cpp', 'python', 'bash', 'json', 'diff', 'yaml', 'makefile'];
  var MAX_CHARS = 200000;  // a larger block stays plain: highlighting it would hold the page for seconds

  window.reporterChunk = function (data) {
    chunk = data;
    ready();
  };

  function ready() {
    if (!chunk || highlighter === 'loading') return;
    var w = waiting; waiting = [];
    w.forEach(function (fn) { fn(chunk); });
  }

  function load(src, onload, onerror) {
    var s = document.createElement('script');
    s.src = src;
    s.onload = onload;
    s.onerror = onerror;
    document.head.appendChild(s);
    return s;
  }

  function withChunk(fn) {
    if (chunk && highlighter !== 'loading') { fn(chunk); return; }
    var art = document.querySelector('article.run[data-chunk]');
    if (!art || failed) return;
    waiting.push(fn);
    if (waiting.length > 1) return;
    var hl = art.getAttribute('data-highlighter');
    if (hl && highlighter === 'none') {
      highlighter = 'loading';
      var done = function () { highlighter = 'done'; ready(); };
      load(hl, done, done);  // without it the code stays plain text
    }
    if (chunk) return;
    var s = load(art.getAttribute('data-chunk'), null, function () {
      failed = true;
      document.querySelectorAll('.lazy-body').forEach(function (b) {
        if (!b.dataset.filled) b.textContent = 'Could not load ' + s.src + '; the plain-text view has the same content.';
      });
    });
  }

  // Each fenced block's language comes from its fence (class language-X); an untagged one is detected.
  // A Python block that builds a torch extension is a kernel file: static/kernelhl.js reads it as the final
  // kernel is read, its load_inline strings as CUDA (highlight.js would show them as one string).
  var KERNEL_FILE = /load_inline|cpp_extension|__global__/;
  function highlight(root) {
    var H = window.hljs, K = window.reporterHighlight;
    if (H && !H.getLanguage('cuda')) H.registerAliases(['cuda', 'cu', 'cuh'], { languageName: 'cpp' });
    root.querySelectorAll('pre > code').forEach(function (code) {
      if (code.dataset.highlighted) return;
      var m = /(?:^|\s)language-(\S+)/.exec(code.className), lang = m ? m[1] : '', text = code.textContent;
      code.dataset.highlighted = 'plain';
      if (text.length > MAX_CHARS) return;
      if (K && (lang === 'python' || lang === 'py' || !lang) && KERNEL_FILE.test(text) && /\bimport\b|\bdef\b|"""|'''/.test(text)) {
        code.innerHTML = K.python(text);  // every token escaped, flat spans only (tests/test_kernel_highlight.py)
        code.parentNode.classList.add('hl');  // the colours are scoped to .hl; the <pre> is styled as one already
        code.dataset.highlighted = 'python+cuda';
        return;
      }
      if (!H || (lang && !H.getLanguage(lang))) return;
      var r = lang ? H.highlight(text, { language: lang, ignoreIllegals: true }) : H.highlightAuto(text, DETECT);
      if (!r.language) return;
      code.innerHTML = r.value;  // highlight.js escapes every token of the text it was given
      code.dataset.highlighted = r.language;
    });
  }

  function fillTurn(body) {
    withChunk(function (data) {
      if (body.dataset.filled) return;
      body.innerHTML = data.turns[parseInt(body.dataset.turn, 10)] || '';
      highlight(body);
      if (window.reporterSideways) body.querySelectorAll('.hl').forEach(window.reporterSideways);
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

  // A full-text result (search.html) links here as ?hl=WORDS#turn-N: open that turn, mark the words, scroll to them.
  function marks(root, terms) {
    var words = terms.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 2 && COMMON.indexOf(w) < 0; });
    if (!words.length) return null;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), nodes = [], first = null;
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(function (node) {
      var text = node.nodeValue, low = text.toLowerCase(), at = 0, out = document.createDocumentFragment(), hit = false;
      for (;;) {
        var best = -1, len = 0;
        words.forEach(function (w) { var i = low.indexOf(w, at); if (i >= 0 && (best < 0 || i < best)) { best = i; len = w.length; } });
        if (best < 0) break;
        out.appendChild(document.createTextNode(text.slice(at, best)));
        var m = document.createElement('mark');
        m.textContent = text.slice(best, best + len);  // the page's own text, moved into a <mark>: never parsed
        out.appendChild(m);
        first = first || m;
        at = best + len;
        hit = true;
      }
      if (!hit) return;
      out.appendChild(document.createTextNode(text.slice(at)));
      node.parentNode.replaceChild(out, node);
    });
    return first;
  }

  var COMMON = ['the', 'and', 'for', 'that', 'with', 'this', 'from', 'are', 'was', 'not', 'but', 'you', 'all', 'can', 'has'];

  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!/^(turn|version)-\d+$/.test(id)) return;
    var d = document.getElementById(id);
    if (!d || d.tagName !== 'DETAILS') return;
    d.open = true;
    var body = d.querySelector('.lazy-body'), terms = new URLSearchParams(location.search).get('hl') || '';
    if (!body) { d.scrollIntoView(); return; }
    fillTurn(body);
    withChunk(function () {
      var m = terms ? marks(body, terms) : null;
      (m || d).scrollIntoView({ block: m ? 'center' : 'start' });
    });
  }

  document.addEventListener('DOMContentLoaded', function () { setup(); openTarget(); });
  window.addEventListener('hashchange', openTarget);
})();
