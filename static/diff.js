// Line diffs of kernel sources, shown as hunks: each change with 3 lines of context, and every run of
// unchanged lines between them folded behind an "expand" button. Used by run pages (kernel versions) and
// problem pages (two kernels side by side). Sources are inserted as text, never as HTML.
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

  // One line; its number is an attribute the stylesheet shows, so copying the code copies no numbers.
  function lineSpan(l, plain) {
    var span = document.createElement('span');
    if (l.op === '+') span.className = 'gi'; else if (l.op === '-') span.className = 'gd';
    span.setAttribute('data-ln', String(l.neu !== null ? l.neu : l.old));
    span.textContent = (plain ? '' : l.op + ' ') + l.text + '\n';
    return span;
  }

  function foldButton(part, pre) {
    var b = document.createElement('button');
    b.type = 'button'; b.className = 'diff-expand';
    var n = part.lines.length;
    b.textContent = '⋯ expand ' + n + ' unchanged line' + (n === 1 ? '' : 's');
    b.addEventListener('click', function () {
      var frag = document.createDocumentFragment();
      part.lines.forEach(function (l) { frag.appendChild(lineSpan(l)); });
      pre.replaceChild(frag, b);
    });
    return b;
  }

  // A diff of two sources as a code block of hunks; `whole` shows every line with no folding.
  function block(a, b, whole) {
    var d = lines(a.split('\n'), b.split('\n'));
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
      if (part.kind === 'folded') pre.appendChild(foldButton(part, pre));
      else part.lines.forEach(function (l) { pre.appendChild(lineSpan(l)); });
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
    text.split('\n').forEach(function (l, k) { pre.appendChild(lineSpan({ op: ' ', text: l, old: k + 1, neu: k + 1 }, true)); });
    if (window.reporterSideways) window.reporterSideways(wrap);
    return wrap;
  }

  window.reporterDiff = { lines: lines, hunks: hunks, block: block, source: source };
})();
