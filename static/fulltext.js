// The search page's full-text search: every turn's reasoning, tool calls and results, and every kernel version,
// through the site's Pagefind index (pagefind/, built with the site). Pagefind loads its chunks over http, so from
// file:// this says how to serve the site; the run index above keeps working either way.
// Excerpts are Pagefind's text of our own escaped documents: they are escaped again here, and only its <mark>
// tags are kept, so no text from a trace is ever inserted as markup.
(function () {
  'use strict';
  var FILTERS = ['model', 'benchmark', 'level', 'problem', 'verdict', 'flag'];
  var PAGE = 10;

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }
  // Pagefind's excerpt is HTML (its text escaped, the matches in <mark>): parsed inert in a <template>, then only its
  // text and <mark> elements are copied, as text, into the result.
  function excerpt(s) {
    var t = document.createElement('template'), out = document.createElement('span');
    t.innerHTML = s;
    t.content.childNodes.forEach(function (n) {
      if (n.nodeName === 'MARK') { var m = document.createElement('mark'); m.textContent = n.textContent; out.appendChild(m); }
      else out.appendChild(document.createTextNode(n.textContent));
    });
    out.className = 'ft-excerpt';
    return out;
  }
  // A result's URL is the document's path in the index ("/runs/x.html#turn-3"): relative to the site's root here.
  function href(root, url, terms) {
    var m = /^\/?([^#?]*)(#.*)?$/.exec(url) || ['', url, ''];
    return root + m[1] + (terms ? '?hl=' + encodeURIComponent(terms) : '') + (m[2] || '');
  }

  // How closely a turn holds the query's words together: the narrowest span of its matches that could hold them all
  // (an exact phrase spans its length), lower is better; a turn with fewer matches than words comes after.
  function span(s, words) {
    var locs = (s.locations || []).slice().sort(function (a, b) { return a - b; }), best = Infinity;
    for (var i = 0; i + words - 1 < locs.length; i++) best = Math.min(best, locs[i + words - 1] - locs[i]);
    return best === Infinity ? 1e9 - locs.length : best;
  }

  function setup() {
    var box = document.getElementById('fulltext');
    if (!box) return;
    var root = box.getAttribute('data-root') || '';
    var status = box.querySelector('.ft-status'), list = box.querySelector('.ft-results'), input = box.querySelector('input[type=search]');
    var more = box.querySelector('.ft-more'), selects = box.querySelector('.ft-filters');
    if (location.protocol === 'file:') {
      status.textContent = 'Full-text search loads its index over http, which a page opened from a file cannot do: serve the site ' +
        '(python -m http.server -d SITE, then open http://localhost:8000/search.html) or publish it. The run search above works here.';
      box.classList.add('unavailable');
      input.disabled = true;
      return;
    }
    var pf = null, shown = [], results = [], timer = null, shards = [];
    function bundle(name) { return new URL(root + 'pagefind/' + name + '/', document.baseURI).href; }
    // The index is split into shards (pagefind/NN/, named by pagefind/shards.json) so a rebuild indexes only the shards
    // of changed runs: the first is loaded, the others merged into it (Pagefind's multisite search).
    fetch(new URL(root + 'pagefind/shards.json', document.baseURI).href).then(function (r) {
      if (!r.ok) throw new Error('no index');
      return r.json();
    }).then(function (m) {
      shards = (m && m.shards) || [];
      if (!shards.length) throw new Error('no index');
      return import(bundle(shards[0]) + 'pagefind.js');
    }).then(function (mod) {
      pf = mod;
      // result URLs as the documents' paths ("/runs/x.html#turn-3"), which `href` puts under this page's root: Pagefind
      // would otherwise prefix the folder it was loaded from, and a site under a sub-path got it twice
      return pf.options({ baseUrl: '/' });
    }).then(function () {
      return pf.init ? pf.init() : null;
    }).then(function () {
      return shards.slice(1).reduce(function (done, name) {
        return done.then(function () { return pf.mergeIndex(bundle(name), { baseUrl: '/' }); });
      }, Promise.resolve());
    }).then(function () { return pf.filters(); }).then(function (all) {
      FILTERS.forEach(function (name) {
        var values = Object.keys((all || {})[name] || {}).sort();
        if (!values.length) return;
        var sel = document.createElement('select');
        sel.setAttribute('aria-label', 'filter by ' + name);
        sel.dataset.filter = name;
        sel.innerHTML = '<option value="">any ' + esc(name) + '</option>' + values.map(function (v) {
          return '<option value="' + esc(v) + '">' + esc(v) + ' (' + all[name][v] + ')</option>';
        }).join('');
        sel.addEventListener('change', run);
        selects.appendChild(sel);
      });
      status.textContent = 'Type to search every transcript and kernel version.';
      input.disabled = false;
      if (input.value) run();
    }).catch(function () {
      status.textContent = 'Full-text search is unavailable: this site was built without its index (the Pagefind binary, ' +
        'pip install "pagefind[bin]", was missing when it was built). The run search above works.';
      box.classList.add('unavailable');
      input.disabled = true;
    });

    function filters() {
      var out = {};
      selects.querySelectorAll('select').forEach(function (s) { if (s.value) out[s.dataset.filter] = s.value; });
      return out;
    }
    function run() {
      clearTimeout(timer);
      timer = setTimeout(search, 150);
    }
    function search() {
      var q = input.value.trim();
      if (!pf) return;
      if (!q) { list.replaceChildren(); status.textContent = 'Type to search every transcript and kernel version.'; more.hidden = true; return; }
      pf.search(q, { filters: filters() }).then(function (res) {
        if (input.value.trim() !== q) return;
        results = res.results;
        shown = [];
        list.replaceChildren();
        status.textContent = results.length + ' run' + (results.length === 1 ? '' : 's') + ' mention “' + q + '”';
        page(q);
      });
    }
    function page(q) {
      var next = results.slice(shown.length, shown.length + PAGE);
      shown = shown.concat(next);
      more.hidden = shown.length >= results.length;
      Promise.all(next.map(function (r) { return r.data(); })).then(function (docs) {
        docs.forEach(function (d) {
          var li = document.createElement('li');
          // a run's turns, best first (Pagefind lists them in page order): the one holding the words closest together
          var words = q.split(/\s+/).filter(Boolean).length;
          var subs = (d.sub_results || []).filter(function (s) { return s.url !== d.url; })
            .map(function (s, i) { return { s: s, i: i, w: span(s, words) }; })
            .sort(function (a, b) { return a.w - b.w || a.i - b.i; }).slice(0, 3).map(function (x) { return x.s; });
          if (!subs.length) subs = [{ url: d.url, title: (d.meta && d.meta.title) || d.url, excerpt: d.excerpt }];
          li.innerHTML = '<a class="ft-run" href="' + esc(href(root, d.url, '')) + '">' + esc((d.meta && d.meta.title) || d.url) + '</a><ul></ul>';
          var ul = li.querySelector('ul');
          subs.forEach(function (s) {
            var item = document.createElement('li'), a = document.createElement('a');
            a.href = href(root, s.url, q);
            a.textContent = s.title;
            item.append(a, ' ', excerpt(s.excerpt));
            ul.appendChild(item);
          });
          list.appendChild(li);
        });
      });
    }
    more.addEventListener('click', function () { page(input.value.trim()); });
    input.addEventListener('input', run);
  }

  document.addEventListener('DOMContentLoaded', setup);
})();
