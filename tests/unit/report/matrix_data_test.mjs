// report/web/matrix_data.js in node (no browser): the compare
// page's cell kinds (GdrMatrix.diff) and their colours (colourDiff). A cell
// skipped in both runs (its node left out of both, e.g. by preflight) was
// never measured: it must not be drawn as "OK -> failed" (the bug of issue 13:
// every "both not OK" cell took the dark failed colour, which the legend only
// lists as OK -> failed).
//   node matrix_data_test.mjs PATH/TO/matrix_data.js
import assert from 'node:assert/strict';
import fs from 'node:fs';
import test from 'node:test';
import vm from 'node:vm';

const file = process.argv[2];
if (!file) { console.error('usage: matrix_data_test.mjs MATRIX_DATA_JS'); process.exit(2); }
const ctx = {};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(file, 'utf8'), ctx, { filename: file });
const M = ctx.GdrMatrix;

// Status codes of the blob (report/matrix_blob.h): 1 ok, 2 failed, 3 error, 4 skipped.
const OK = 1, FAILED = 2, ERROR = 3, SKIPPED = 4;
// A 3-node matrix whose cells are given as {"src,dst": [status, gbps]}; the rest untested.
function matrix(cells) {
  const n = 3, m = { n, nodes: ['n0', 'n1', 'n2'], rail: 0, sizeBytes: 1 << 20, code: new Uint8Array(n * n), gbps: new Float32Array(n * n) };
  for (const [k, [st, g]] of Object.entries(cells)) {
    const [s, d] = k.split(',').map(Number);
    m.code[s * n + d] = st;
    m.gbps[s * n + d] = g || 0;
  }
  return m;
}
const hex = (css) => { const v = parseInt(css.slice(1), 16); return ((255 << 24) | ((v & 0xff) << 16) | (v & 0xff00) | (v >> 16)) >>> 0; };

test('the kind of every pair of statuses', () => {
  const a = matrix({ '0,1': [OK, 100], '0,2': [OK, 100], '1,0': [FAILED], '1,2': [SKIPPED], '2,0': [SKIPPED], '2,1': [ERROR] });
  const b = matrix({ '0,1': [OK, 80], '0,2': [FAILED], '1,0': [OK, 90], '1,2': [SKIPPED], '2,0': [OK, 95], '2,1': [FAILED] });
  const d = M.diff(a, b);
  const kind = (s, t) => d.kind[s * 3 + t];
  assert.equal(kind(0, 1), M.KIND.compared);
  assert.ok(Math.abs(d.change[1] - -0.2) < 1e-6, 'b / a - 1');
  assert.equal(kind(0, 2), M.KIND.lost, 'OK -> failed');
  assert.equal(kind(1, 0), M.KIND.gained, 'failed -> OK');
  assert.equal(kind(1, 2), M.KIND.skipped, 'skipped in both');
  assert.equal(kind(2, 0), M.KIND.skipped, 'skipped in a, OK in b: not measured in a, no change');
  assert.equal(kind(2, 1), M.KIND.failedBoth, 'error in a, failed in b');
  assert.equal(kind(0, 0), M.KIND.none, 'the diagonal: in neither');
  assert.equal(M.diffKind(OK, SKIPPED), M.KIND.skipped, 'OK, then left out: not a failure');
});

test('skipped in both is drawn in the skipped colour, not OK -> failed, and the legend names every colour', () => {
  const a = matrix({ '1,2': [SKIPPED], '0,2': [OK, 100], '2,1': [FAILED] });
  const b = matrix({ '1,2': [SKIPPED], '0,2': [FAILED], '2,1': [FAILED] });
  const d = M.diff(a, b);
  const px = new Uint32Array(9);
  M.colourDiff(d, px, 0.5);
  const at = (s, t) => px[s * 3 + t] >>> 0;
  assert.equal(at(1, 2), hex(M.CSS.skipped), 'skipped in both: the skipped grey');
  assert.notEqual(at(1, 2), at(0, 2), 'not the colour of OK -> failed');
  assert.equal(at(0, 2), hex(M.CSS.lost));
  assert.equal(at(2, 1), hex(M.CSS.failed), 'failed in both');
  const legend = new Map(M.DIFF_LEGEND.map(([css, text]) => [hex(css), text]));
  for (const [s, t] of [[1, 2], [0, 2], [2, 1]]) assert.ok(legend.has(at(s, t)), 'colour of cell ' + s + ',' + t + ' is in the legend');
  assert.equal(legend.get(at(1, 2)), 'not run in a or b');
  assert.equal(legend.get(at(0, 2)), 'OK \u2192 failed');
});

test('a pass that its link counters flagged has its own colour in the verdict view (issue 32), not in the Gb/s view', () => {
  const PASS = 1 << 3;  // verdict bits 3-4: 1 pass
  const m = matrix({ '0,1': [OK | PASS, 100], '0,2': [OK | PASS, 100] });
  m.expectedGbps = 100;
  // A flagged pass carries its flag as the cell's reason (controller/analysis/link_flags.h).
  m.reasons = ['', 'the link retransmitted: rcvd_seq_err +812 on n0 rxe0'];
  m.reason = new Uint16Array(9);
  m.reason[0 * 3 + 2] = 1;
  const px = new Uint32Array(9);
  M.colour(m, 'verdict', px);
  assert.equal(px[1] >>> 0, hex(M.CSS.pass), 'an unflagged pass');
  assert.equal(px[2] >>> 0, hex(M.CSS.flagged), 'a flagged pass');
  assert.equal(M.cell(m, 0, 2).reason, m.reasons[1], 'its tooltip has the flag');
  M.colour(m, 'gbps', px);
  assert.equal(px[1], px[2], 'by Gb/s both are the same full-rate colour');
});
