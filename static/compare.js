// Problem pages: any two final kernels side by side, with their diff (static/diff.js). Each source comes
// from its run's `<slug>.kernel.js` chunk, loaded with <script src> (file:// blocks fetch); the choice is
// kept in the URL (#a=<slug>&b=<slug>). Sources are inserted as text, never as HTML.
(function () {
  'use strict';
  var sources = {}, waiting = {};

  window.reporterKernel = function (key, source) {
    sources[key] = source;
    (waiting[key] || []).forEach(function (fn) { fn(source); });
    delete waiting[key];
  };

  function load(option, fn) {
    var key = option.value;
    if (key in sources) { fn(sources[key]); return; }
    if (waiting[key]) { waiting[key].push(fn); return; }
    waiting[key] = [fn];
    var s = document.createElement('script');
    s.src = option.dataset.chunk;
    s.onerror = function () { delete waiting[key]; fn(null); };
    document.head.appendChild(s);
  }

  function side(title, text) {
    var col = document.createElement('div'); col.className = 'compare-side';
    var h = document.createElement('h3'); h.textContent = title; col.appendChild(h);
    if (text === null) {
      var p = document.createElement('p'); p.className = 'note'; p.textContent = 'Could not load this kernel.'; col.appendChild(p);
    } else col.appendChild(window.reporterDiff.source(text));
    return col;
  }

  function setup() {
    var root = document.getElementById('compare');
    if (!root || !window.reporterDiff) return;
    var pick = { a: root.querySelector('select[data-side=a]'), b: root.querySelector('select[data-side=b]') };
    var view = root.querySelector('.compare-view');
    var hash = new URLSearchParams(location.hash.slice(1));
    ['a', 'b'].forEach(function (k) {
      var want = hash.get(k);
      if (want && pick[k].querySelector('option[value="' + want.replace(/[^\w.-]/g, '') + '"]')) pick[k].value = want;
    });
    function draw() {
      var oa = pick.a.selectedOptions[0], ob = pick.b.selectedOptions[0];
      load(oa, function (a) {
        load(ob, function (b) {
          var sides = document.createElement('div'); sides.className = 'compare-sides';
          sides.appendChild(side(oa.textContent, a)); sides.appendChild(side(ob.textContent, b));
          var parts = [sides];
          if (a !== null && b !== null) {
            var diff = window.reporterDiff.block(a, b, false);
            var h = document.createElement('h3');
            h.textContent = 'diff, left → right: +' + diff.dataset.added + ' −' + diff.dataset.removed + ' lines';
            parts.push(h, diff);
          }
          view.replaceChildren.apply(view, parts);
        });
      });
      var q = new URLSearchParams(location.hash.slice(1));
      q.set('a', pick.a.value); q.set('b', pick.b.value);
      history.replaceState(null, '', '#' + q.toString());
    }
    pick.a.addEventListener('change', draw);
    pick.b.addEventListener('change', draw);
    draw();
  }

  document.addEventListener('DOMContentLoaded', setup);
})();
