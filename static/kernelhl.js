// Kernel sources highlighted in the browser exactly as the build highlights the final kernel
// (reporter/render/highlight.py; tests/test_kernel_highlight.py holds the two to the same output): Python by
// one regular-expression pass, and a triple-quoted string holding CUDA or C++ (what load_inline compiles)
// read again as CUDA. Used where sources arrive as text: kernel versions, their diffs, problem-page
// comparisons. Every token is escaped; the only markup made is <span class="x">, never nested.
(function () {
  'use strict';
  function words(s) {
    return s.split(' ').sort(function (a, b) { return b.length - a.length; })  // stable: as Python's sorted
      .map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }).join('|');
  }
  // Python's keyword.kwlist (3.11), longest first, as highlight.py's _KEYWORDS.
  var KW = words('False None True and as assert async await break class continue def del elif else except finally ' +
                 'for from global if import in is lambda nonlocal not or pass raise return try while with yield');
  var TOKENS = new RegExp(
    '(?<s>[rRbBuUfF]{0,2}(?:"""[\\s\\S]*?(?:"""|$(?![\\s\\S]))|\'\'\'[\\s\\S]*?(?:\'\'\'|$(?![\\s\\S]))|"(?:[^"\\\\\\n]|\\\\.)*"|\'(?:[^\'\\\\\\n]|\\\\.)*\'))' +
    '|(?<c1>#[^\\n]*)' +
    '|(?<def>\\b(?:def|class)\\b)(?<ws>[ \\t]+)(?<nf>[A-Za-z_]\\w*)' +
    '|(?<k>\\b(?:' + KW + ')\\b)' +
    '|(?<mi>\\b\\d+(?:\\.\\d*)?(?:[eE][+-]?\\d+)?\\b)', 'g');
  var C_MARKERS = ['__global__', '__device__', '#include', 'torch::', '<<<', 'blockIdx', 'at::Tensor'];
  var C_KEYWORDS = 'break case catch class const constexpr continue default delete do else enum extern false for goto if ' +
    'inline namespace new nullptr operator private public return sizeof static static_cast reinterpret_cast ' +
    'struct switch template this throw true try typedef typename union using virtual volatile while ' +
    '__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __launch_bounds__';
  var C_TYPES = 'auto bool char double float half int long short signed size_t unsigned void int8_t int16_t int32_t int64_t ' +
    'uint8_t uint16_t uint32_t uint64_t __half __half2 __nv_bfloat16 float2 float4 int2 int4 dim3 cudaStream_t';
  var C_BUILTINS = 'threadIdx blockIdx blockDim gridDim warpSize __syncthreads __syncwarp __shfl_sync __shfl_down_sync ' +
    '__shfl_up_sync __shfl_xor_sync __ldg atomicAdd atomicMax atomicMin atomicCAS';
  var C_TOKENS = new RegExp(
    '(?<cm>/\\*[\\s\\S]*?(?:\\*/|$(?![\\s\\S])))|(?<c1>//[^\\n]*)|(?<cp>^[ \\t]*#[^\\n]*)' +
    '|(?<s>"(?:[^"\\\\\\n]|\\\\.)*"|\'(?:[^\'\\\\\\n]|\\\\.)*\')' +
    '|(?<kt>(?<![\\w])(?:' + words(C_TYPES) + ')(?![\\w]))|(?<k>(?<![\\w])(?:' + words(C_KEYWORDS) + ')(?![\\w]))' +
    '|(?<nb>(?<![\\w])(?:' + words(C_BUILTINS) + ')(?![\\w]))' +
    '|(?<mf>(?<![\\w.])\\d+\\.\\d*(?:[eE][+-]?\\d+)?[fF]?|(?<![\\w.])\\d+[eE][+-]?\\d+[fF]?)' +
    '|(?<mi>(?<![\\w.])(?:0[xX][0-9a-fA-F]+|\\d+)[uUlL]*(?![\\w.]))', 'gm');
  var STRING_PARTS = /^([rRbBuUfF]{0,2}(?:"""|'''))([\s\S]*?)("""|'''|)$(?![\s\S])/;

  function esc(t) { return t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function span(cls, t) { return '<span class="' + cls + '">' + esc(t) + '</span>'; }
  function group(m) { for (var k in m.groups) if (m.groups[k] !== undefined && k !== 'ws' && k !== 'nf') return k; return ''; }

  function pass(re, source, token) {
    var out = [], pos = 0, m;
    re.lastIndex = 0;
    while ((m = re.exec(source)) !== null) {
      if (m[0] === '') { re.lastIndex++; continue; }
      out.push(esc(source.slice(pos, m.index)), token(m));
      pos = m.index + m[0].length;
    }
    out.push(esc(source.slice(pos)));
    return out.join('');
  }

  function c(source) { return pass(C_TOKENS, source, function (m) { return span(group(m), m[0]); }); }

  function string(text) {
    var m = STRING_PARTS.exec(text);
    if (m === null || !C_MARKERS.some(function (k) { return m[2].indexOf(k) >= 0; })) return span('s', text);
    return span('s', m[1]) + c(m[2]) + (m[3] ? span('s', m[3]) : '');
  }

  function python(source) {
    return pass(TOKENS, source, function (m) {
      if (m.groups.def !== undefined) return span('k', m.groups.def) + m.groups.ws + span('nf', m.groups.nf);
      var cls = group(m);
      return cls === 's' ? string(m[0]) : span(cls, m[0]);
    });
  }

  // Flat highlighted HTML as one string per line: a span that crosses a line break is closed and reopened.
  function lines(html) {
    var out = [''], open = '', re = /<span class="[\w-]+">|<\/span>|[^<]+/g, m;
    while ((m = re.exec(html)) !== null) {
      var t = m[0];
      if (t.charAt(0) === '<') { open = t.charAt(1) === '/' ? '' : t; out[out.length - 1] += t; continue; }
      var parts = t.split('\n');
      out[out.length - 1] += parts[0];
      for (var i = 1; i < parts.length; i++) {
        if (open) out[out.length - 1] += '</span>';
        out.push((open || '') + parts[i]);
      }
    }
    return out;
  }

  window.reporterHighlight = { python: python, c: c, lines: lines };
})();
