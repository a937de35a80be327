// gdrbench matrix data: decodes the binary matrix of one rail and size
// (report/matrix_blob.h has the layout) and computes the colours
// of its cells. Used by heatmap.js, in gdrbench-server's dashboard and in the
// sweep's self-contained report.html. No dependencies; plain ES2017.
(function (global) {
  'use strict';

  // 4 (v1 RESULT_STATUS_SKIPPED): its node was left out; 'not run' in every report (issue 32).
  const STATUS = ['not tested', 'ok', 'failed', 'error', 'not run'];
  const VERDICT = ['', 'pass', 'low', 'fail'];
  const TYPES = { f32: Float32Array, u8: Uint8Array, u16: Uint16Array };

  function decode(buffer) {
    const bytes = new Uint8Array(buffer);
    const magic = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
    if (magic !== 'GDRM') throw new Error('not a gdrbench matrix (magic ' + JSON.stringify(magic) + ')');
    const dv = new DataView(buffer);
    const version = dv.getUint32(4, true);
    if (version !== 1) throw new Error('matrix format version ' + version + ' is newer than this page');
    const jsonLen = dv.getUint32(8, true);
    const head = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + jsonLen)));
    const n = head.n;
    let off = pad8(12 + jsonLen);
    const m = {
      n: n, nodes: head.nodes, rail: head.rail, sizeBytes: head.sizeBytes, reasons: head.reasons,
      // A cross-rail lane: the targets' rail (absent: the same as `rail`).
      dstRail: head.dstRail === undefined ? head.rail : head.dstRail,
      expectedGbps: head.expectedGbps || 0, fleet: head.fleet || null,
      gbps: null, code: null, expected: null, baseline: null, reason: null,
    };
    for (const s of head.sections) {
      const T = TYPES[s.type];
      if (!T) throw new Error('unknown section type ' + s.type);
      if (off + n * n * T.BYTES_PER_ELEMENT > buffer.byteLength) throw new Error('matrix data is truncated');
      m[s.name] = new T(buffer, off, n * n);
      off = pad8(off + n * n * T.BYTES_PER_ELEMENT);
    }
    if (!m.gbps || !m.code) throw new Error('matrix data lacks gbps or code');
    return m;
  }

  function pad8(x) { return (x + 7) & ~7; }

  function decodeBase64(text) {
    const bin = atob(text.replace(/\s+/g, ''));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return decode(out.buffer);
  }

  // One cell, for the tooltip and the tests.
  function cell(m, src, dst) {
    const i = src * m.n + dst;
    const code = m.code[i];
    const c = {
      src: m.nodes[src], dst: m.nodes[dst], srcIndex: src, dstIndex: dst, rail: m.rail,
      sizeBytes: m.sizeBytes, status: STATUS[code & 7] || 'unknown', verdict: VERDICT[(code >> 3) & 3],
      gbps: m.gbps[i], expectedGbps: m.expected ? m.expected[i] : m.expectedGbps,
      baselineGbps: m.baseline ? m.baseline[i] : 0, reason: m.reason ? m.reasons[m.reason[i]] : '',
    };
    return c;
  }

  // The reference Gb/s of "colour by Gb/s": each cell's link rate when the
  // matrix knows it, else the fleet's best cell (a lab at 0.4 Gb/s on a
  // "100 Gb/s" port would otherwise be all red while every cell passes).
  // prefer 'fleet' forces the fleet's best (a run judged without the absolute
  // verdict, e.g. the lab, whose ports report a rate it never reaches).
  function reference(m, prefer) {
    if (prefer !== 'fleet' && (m.expected || m.expectedGbps > 0)) return { kind: 'link', gbps: m.expectedGbps };
    let best = 0;
    for (let i = 0; i < m.gbps.length; i++) if (m.gbps[i] > best) best = m.gbps[i];
    return { kind: 'fleet', gbps: best };
  }

  function rgba(r, g, b) { return (255 << 24) | (b << 16) | (g << 8) | r; }  // little-endian ImageData

  function hsl(h, s, l) {
    s /= 100; l /= 100;
    const k = (n) => (n + h / 30) % 12;
    const a = s * Math.min(l, 1 - l);
    const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
    return [Math.round(255 * f(0)), Math.round(255 * f(8)), Math.round(255 * f(4))];
  }

  // Red at 0 through yellow to green at >= 100 % of the reference (the
  // sweep report's ramp since issue 6).
  const RAMP = new Uint32Array(256);
  const RAMP_CSS = [];
  for (let k = 0; k < 256; k++) {
    const f = k / 255;
    const c = hsl(120 * f * f, 70, 42 + 8 * (1 - f));
    RAMP[k] = rgba(c[0], c[1], c[2]);
    if (k % 51 === 0) RAMP_CSS.push('rgb(' + c.join(',') + ')');
  }
  // Change b/a - 1: red for drops, white for none, blue for gains (the
  // range is set by the caller, e.g. +-50 %).
  const DIVERGE = new Uint32Array(256);
  for (let k = 0; k < 256; k++) {
    const t = k / 255 * 2 - 1;
    const to = t < 0 ? [200, 30, 30] : [30, 80, 200];
    const a = Math.abs(t);
    DIVERGE[k] = rgba(Math.round(255 + a * (to[0] - 255)), Math.round(255 + a * (to[1] - 255)),
      Math.round(255 + a * (to[2] - 255)));
  }
  const C = {
    untested: rgba(0xee, 0xf0, 0xf4), failed: rgba(0x3a, 0x3f, 0x4b), skipped: rgba(0x9a, 0xa1, 0xad),
    pass: rgba(0x2e, 0x9e, 0x4f), low: rgba(0xf2, 0xa9, 0x00), fail: rgba(0xd3, 0x2f, 0x2f), flagged: rgba(0x00, 0x89, 0x9e),
    lost: rgba(0x20, 0x20, 0x20), gained: rgba(0x7b, 0x3f, 0xa0), alone: rgba(0xc8, 0xcc, 0xd4),
  };
  const CSS = {
    untested: '#eef0f4', failed: '#3a3f4b', skipped: '#9aa1ad', pass: '#2e9e4f', low: '#f2a900',
    fail: '#d32f2f', flagged: '#00899e', lost: '#202020', gained: '#7b3fa0', alone: '#c8ccd4',
  };

  function notOkColour(status) {
    if (status === 0) return C.untested;
    if (status === 4) return C.skipped;
    return C.failed;
  }

  // Fills `out` (Uint32 RGBA per cell) for mode 'verdict' or 'gbps'.
  function colour(m, mode, out, prefer) {
    const ref = reference(m, prefer);
    const n2 = m.n * m.n;
    const exp = ref.kind === 'link' ? m.expected : null;
    for (let i = 0; i < n2; i++) {
      const code = m.code[i];
      const st = code & 7;
      if (st !== 1) { out[i] = notOkColour(st); continue; }
      const v = (code >> 3) & 3;
      // A pass with a reason: its link counters flagged it (controller/analysis/link_flags.h).
      if (mode === 'verdict' && v === 1 && m.reason && m.reason[i] !== 0) { out[i] = C.flagged; continue; }
      if (mode === 'verdict' && v !== 0) { out[i] = v === 1 ? C.pass : v === 2 ? C.low : C.fail; continue; }
      const r = exp && exp[i] > 0 ? exp[i] : ref.gbps;
      let f = r > 0 ? m.gbps[i] / r : 1;
      f = f < 0 ? 0 : f > 1 ? 1 : f;
      out[i] = RAMP[(f * 255) | 0];
    }
    return ref;
  }

  // Two runs' matrices of one rail and size on the union of their nodes.
  function diff(a, b) {
    const names = a.nodes.slice();
    const index = new Map(names.map((x, i) => [x, i]));
    for (const x of b.nodes) if (!index.has(x)) { index.set(x, names.length); names.push(x); }
    const n = names.length;
    const d = {
      n: n, nodes: names, rail: b.rail, sizeBytes: b.sizeBytes, a: a, b: b,
      change: new Float32Array(n * n).fill(NaN), kind: new Uint8Array(n * n),
      ai: new Int32Array(n * n).fill(-1), bi: new Int32Array(n * n).fill(-1),
    };
    const place = (m, key) => {
      const map = m.nodes.map((x) => index.get(x));
      for (let s = 0; s < m.n; s++) {
        for (let t = 0; t < m.n; t++) {
          const i = s * m.n + t;
          if ((m.code[i] & 7) === 0) continue;
          d[key][map[s] * n + map[t]] = i;
        }
      }
    };
    place(a, 'ai');
    place(b, 'bi');
    for (let i = 0; i < n * n; i++) {
      const x = d.ai[i], y = d.bi[i];
      if (x < 0 && y < 0) continue;
      if (x < 0 || y < 0) { d.kind[i] = KIND.alone; continue; }
      const k = diffKind(a.code[x] & 7, b.code[y] & 7);
      d.kind[i] = k;
      if (k === KIND.compared) d.change[i] = a.gbps[x] > 0 ? b.gbps[y] / a.gbps[x] - 1 : 0;
    }
    return d;
  }

  // What happened to a cell between two runs, from its status in each (both
  // tested). A skipped cell (its node left out, e.g. by preflight) was not
  // measured: no failure, whatever the other run says; only a test that ran
  // and failed (failed, error) is one.
  const KIND = { none: 0, compared: 1, lost: 2, gained: 3, alone: 4, failedBoth: 5, skipped: 6 };
  function diffKind(sa, sb) {
    if (sa === 4 || sb === 4) return KIND.skipped;
    if (sa === 1 && sb === 1) return KIND.compared;
    if (sa === 1) return KIND.lost;
    if (sb === 1) return KIND.gained;
    return KIND.failedBoth;
  }

  const DIFF_COLOUR = [C.untested, 0, C.lost, C.gained, C.alone, C.failed, C.skipped];
  // The legend of the kinds that are not a change ratio, in DIFF_COLOUR's colours.
  const DIFF_LEGEND = [[CSS.lost, 'OK \u2192 failed'], [CSS.gained, 'failed \u2192 OK'], [CSS.failed, 'failed in both'],
    [CSS.skipped, 'not run in a or b'], [CSS.alone, 'in one run only']];

  function colourDiff(d, out, range) {
    for (let i = 0; i < d.n * d.n; i++) {
      const k = d.kind[i];
      if (k === 1) {
        let t = d.change[i] / range;
        t = t < -1 ? -1 : t > 1 ? 1 : t;
        out[i] = DIVERGE[((t + 1) / 2 * 255) | 0];
      } else {
        out[i] = DIFF_COLOUR[k];
      }
    }
  }

  function sizeName(b) {
    if (b >= 1 << 30 && b % (1 << 30) === 0) return (b / (1 << 30)) + ' GiB';
    if (b >= 1 << 20 && b % (1 << 20) === 0) return (b / (1 << 20)) + ' MiB';
    if (b >= 1 << 10 && b % (1 << 10) === 0) return (b / (1 << 10)) + ' KiB';
    return b + ' B';
  }

  // Three significant digits like the C++ reports' "%.3g", without exponents.
  function gbpsText(v) {
    if (!isFinite(v)) return '-';
    if (Math.abs(v) >= 1000) return String(Math.round(v));
    const s = Number(v).toPrecision(3);
    return s.indexOf('.') >= 0 ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  }

  global.GdrMatrix = {
    decode, decodeBase64, cell, reference, colour, diff, diffKind, colourDiff, sizeName, gbpsText,
    CSS, RAMP_CSS, STATUS, VERDICT, KIND, DIFF_LEGEND,
  };
})(typeof window !== 'undefined' ? window : this);
