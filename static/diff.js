// Line diffs of kernel sources, shown as hunks: each change with 3 lines of context, and every run of
// unchanged lines between them folded behind an "expand" button. Used by run pages (kernel versions) and
// problem pages (two kernels side by side). Sources are inserted as text, or as static/kernelhl.js's
// highlighting of that text (escaped tokens in flat <span class="x">, checked before use).
(function () {
  'use strict';
  var CONTEXT = 3;
  var MIN_FOLD = 3;
  var MAX_CELLS = 4e6; // the LCS table's size limit; past it the caller shows whole files instead

  // Longest-common-subsequence line diff: [op, line] with op ' ', '-' or '+'; null when too large.
  function lines(a, b) {
    var n = a.length, m = b.length;
    if ((n + 1) * (m + 1) > MAX_CELLS) return null;
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

  // Each diff line with its old and new line numbers, split into shown runs and folded runs of context.
  function hunks(d, context) {
    var numbered = [], oldN = 0, newN = 0;
    d.forEach(function (l) {
      if (l[0] !== '+') oldN++;
      if (l[0] !== '-') newN++;
      numbered.push({ op: l[0], text: l[1], old: l[0] === '+' ? null : oldN, neu: l[0] === '-' ? null : newN });
    });
    var keep = numbered.map(function () { return false; });
    numbered.forEach(function (l, k) {
      if (l.op === ' ') return;
      for (var c = Math.max(0, k - context); c <= Math.min(numbered.length - 1, k + context); c++) keep[c] = true;
    });
    var parts = [];
    numbered.forEach(function (l, k) {
      var kind = keep[k] ? 'shown' : 'folded', last = parts[parts.length - 1];
      if (last && last.kind === kind) last.lines.push(l); else parts.push({ kind: kind, lines: [l] });
    });
    // a fold shorter than MIN_FOLD lines would take as much room as the lines it hides: show them
    parts.forEach(function (part) { if (part.lines.length < MIN_FOLD) part.kind = 'shown'; });
    return parts;
  }

  // A source's lines as kernelhl.js highlights them, or null (no highlighter, or output not of its one form).
  var FLAT = /^(?:<span class="[\w-]+">|<\/span>|[^<>])*$/;
  function highlighted(text) {
    var H = window.reporterHighlight;
    if (!H) return null;
    var out = H.lines(H.python(text));
    return out.every(function (l) { return FLAT.test(l); }) ? out : null;
  }

  // One line; its number is an attribute the stylesheet shows, so copying the code copies no numbers. `hl`: the
  // line highlighted (from `highlighted`), else its text is inserted as text.
  function lineSpan(l, plain, hl) {
    var span = document.createElement('span');
    if (l.op === '+') span.className = 'gi'; else if (l.op === '-') span.className = 'gd';
    span.setAttribute('data-ln', String(l.neu !== null ? l.neu : l.old));
    if (typeof hl !== 'string') { span.textContent = (plain ? '' : l.op + ' ') + l.text + '\n'; return span; }
    if (!plain) span.appendChild(document.createTextNode(l.op + ' '));
    var code = document.createElement('span');
    code.innerHTML = hl;
    span.appendChild(code);
    span.appendChild(document.createTextNode('\n'));
    return span;
  }

  function foldButton(part, pre, hl) {
    var b = document.createElement('button');
    b.type = 'button'; b.className = 'diff-expand';
    var n = part.lines.length;
    b.textContent = '⋯ expand ' + n + ' unchanged line' + (n === 1 ? '' : 's');
    b.addEventListener('click', function () {
      var frag = document.createDocumentFragment();
      part.lines.forEach(function (l) { frag.appendChild(lineSpan(l, false, hl(l))); });
      pre.replaceChild(frag, b);
    });
    return b;
  }

  // A diff of two sources as a code block of hunks; `whole` shows every line with no folding.
  function block(a, b, whole) {
    var d = lines(a.split('\n'), b.split('\n'));
    var ha = highlighted(a), hb = highlighted(b);
    // a removed line is the old source's, any other the new one's
    function hl(l) { return l.op === '-' ? ha && ha[l.old - 1] : hb && hb[l.neu - 1]; }
    var wrap = document.createElement('div'); wrap.className = 'hl diff numbered';
    var pre = document.createElement('pre'); wrap.appendChild(pre);
    if (!d) {
      var note = document.createElement('p'); note.className = 'note';
      note.textContent = 'These sources are too long to diff in the browser; both are shown in full.';
      wrap.insertBefore(note, pre);
      d = b.split('\n').map(function (l) { return [' ', l]; });
    }
    var added = d.filter(function (l) { return l[0] === '+'; }).length, removed = d.filter(function (l) { return l[0] === '-'; }).length;
    hunks(d, whole ? Infinity : CONTEXT).forEach(function (part) {
      if (part.kind === 'folded') pre.appendChild(foldButton(part, pre, hl));
      else part.lines.forEach(function (l) { pre.appendChild(lineSpan(l, false, hl(l))); });
    });
    if (!added && !removed) {
      var same = document.createElement('p'); same.className = 'note'; same.textContent = 'The two sources are identical.';
      wrap.insertBefore(same, pre);
    }
    wrap.dataset.added = String(added); wrap.dataset.removed = String(removed);
    if (window.reporterSideways) window.reporterSideways(wrap);  // app.js: a cue when long lines scroll sideways
    return wrap;
  }

  // A whole source as a numbered code block.
  function source(text) {
    var wrap = document.createElement('div'); wrap.className = 'hl numbered';
    var pre = document.createElement('pre'); wrap.appendChild(pre);
    var h = highlighted(text);
    text.split('\n').forEach(function (l, k) { pre.appendChild(lineSpan({ op: ' ', text: l, old: k + 1, neu: k + 1 }, true, h && h[k])); });
    if (window.reporterSideways) window.reporterSideways(wrap);
    return wrap;
  }

  window.reporterDiff = { lines: lines, hunks: hunks, block: block, source: source, highlighted: highlighted };
})();
