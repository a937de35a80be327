// The dashboard's run page at scale: a stored 1024-node x 8-rail run of the
// controller's fake cluster (gdrbench-fake-history --db, the server's own
// ingester), gdrbench-server on it, and Debian's headless Chromium opening
// /ui/runs/ID: the time from navigation start to the first heatmap on screen,
// measured in the page by its performance marks (run.js: gdr-first-heatmap
// when the canvas is drawn, gdr-first-heatmap-painted two animation frames
// later, i.e. once that frame was painted), cold (a new server: it reads the
// cells from the store) and warm (the browser's cache). Then the peer, in
// the same browser on the same data: one SVG <rect> with a <title> per cell,
// which is how the sweep's report.html drew its heatmaps before, against the
// canvas heatmap, at --peer-nodes and at the full size; and the sweep's own
// report.html of the same run (every rail embedded) to its first heatmap.
//
//   node bench/dashboard_first_heatmap.mjs --bin build/bin --tests-bin build/tests --work DIR
//       [--nodes 1024] [--rails 8] [--peer-nodes 256] [--svg-timeout-s 120] [--limit-ms 2000]
//       [--db STORE --run-id ID] [--heatmap-only]
// --db: an existing store (e.g. the one gdrbench-server-bench filled) whose run --run-id is
// opened instead of storing a new one; --heatmap-only: the run page alone (no peer, no
// report.html), as bench/scaling.sh measures it at every N.
// Prints one JSON object; exits 1 when the cold first heatmap took longer than --limit-ms.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launch, run, startServer } from '../tests/browser/lib.mjs';

const { values: o } = parseArgs({ options: {
  bin: { type: 'string' }, 'tests-bin': { type: 'string' }, work: { type: 'string' },
  nodes: { type: 'string', default: '1024' }, rails: { type: 'string', default: '8' },
  'peer-nodes': { type: 'string', default: '256' }, 'svg-timeout-s': { type: 'string', default: '120' },
  'limit-ms': { type: 'string', default: '2000' }, keep: { type: 'boolean', default: false },
  db: { type: 'string' }, 'run-id': { type: 'string', default: 'big-001' },
  'heatmap-only': { type: 'boolean', default: false },
} });
for (const k of ['bin', 'tests-bin', 'work']) if (!o[k]) { console.error('missing --' + k); process.exit(2); }
if (o.db && !o['heatmap-only']) { console.error('--db needs --heatmap-only (the peer and report.html need a run stored here)'); process.exit(2); }
if (o.db && !fs.existsSync(o.db)) { console.error('--db ' + o.db + ': no such store'); process.exit(2); }
fs.mkdirSync(o.work, { recursive: true });
const db = o.db || path.join(o.work, `big-${o.nodes}x${o.rails}.db`);
const ownDb = !o.db;
const html = path.join(o.work, `report-${o.nodes}x${o.rails}.html`);
const load = () => os.loadavg().map((x) => +x.toFixed(2));
const out = { nodes: Number(o.nodes), rails: Number(o.rails), cores: os.cpus().length, loadavg_start: load() };
const log = (...a) => console.error('bench:', ...a);

if (ownDb && (!fs.existsSync(db) || !fs.existsSync(html))) {
  for (const f of [db, db + '-wal', db + '-shm', html]) fs.rmSync(f, { force: true });
  const t = Date.now();
  log(`storing a ${o.nodes} x ${o.rails} fake-cluster run in ${db} (minutes) ...`);
  await run(path.join(o['tests-bin'], 'gdrbench-fake-history'), ['--db', db, '--cluster', 'big', '--nodes', o.nodes,
    '--rails', o.rails, '--runs', '1', '--sizes', '1048576', '--nodes-per-leaf', '32', '--degrade', '1,2,0,0.96,0.3',
    '--report-html', html]);
  out.store_s = (Date.now() - t) / 1000;
}
if (!o['heatmap-only']) out.report_html_mb = +(fs.statSync(html).size / 1e6).toFixed(1);
const server = await startServer({ bin: o.bin, work: o.work, db: db, name: 'bench-server' });
const ctx = await launch(o.work, { width: 1366, height: 900 });
pages: try {
  const page = await ctx.newPage();
  const firstHeatmap = async () => {
    await page.goto(server.http + '/ui/runs/' + o['run-id']);
    await page.waitForFunction(() => window.gdrFirstHeatmap && window.gdrFirstHeatmap.paintedMs, null, { timeout: 120000 });
    // The page's own performance marks (ms since its navigation started).
    return page.evaluate(() => {
      const m = performance.getEntriesByType('resource').find((e) => e.name.includes('/matrix'));
      const mark = (name) => performance.getEntriesByName(name, 'mark')[0].startTime;
      return Object.assign({}, window.gdrFirstHeatmap, {
        drawnMark: mark('gdr-first-heatmap'), paintedMark: mark('gdr-first-heatmap-painted'),
        fetchMs: m ? m.responseEnd - m.startTime : -1, responseEnd: m ? m.responseEnd : -1, bytes: m ? m.encodedBodySize : -1,
      });
    });
  };
  out.loadavg_at_page = load();
  const cold = await firstHeatmap();
  const warm = [];
  for (let i = 0; i < 3; i++) warm.push(await firstHeatmap());
  warm.sort((a, b) => a.ms - b.ms);
  out.run_page = {
    cold_first_heatmap_ms: Math.round(cold.paintedMark), cold_drawn_ms: Math.round(cold.drawnMark),
    cold_matrix_fetch_ms: Math.round(cold.fetchMs), cold_matrix_received_ms: Math.round(cold.responseEnd),
    matrix_mb: +(cold.bytes / 1e6).toFixed(2), decode_ms: Math.round(cold.decodeMs), draw_ms: Math.round(cold.drawMs),
    warm_first_heatmap_ms: Math.round(warm[1].paintedMark), nodes: cold.nodes, cells: cold.nodes * (cold.nodes - 1),
  };
  log('run page', JSON.stringify(out.run_page));

  if (o['heatmap-only']) break pages;  // the run page is all

  // The peer: the same matrix as SVG rects (the old report.html) vs the
  // canvas heatmap, rendering only (data already in the page).
  const buf = await (await fetch(server.http + '/ui/data/runs/' + o['run-id'] + '/matrix?rail=0')).arrayBuffer();
  const b64 = Buffer.from(buf).toString('base64');
  const scripts = ['matrix_data.js', 'heatmap.js'].map((f) => server.http + '/ui/assets/' + f);
  const render = async (n, kind) => {
    const p = await ctx.newPage();
    await p.goto(server.http + '/healthz');
    for (const s of scripts) await p.addScriptTag({ url: s });
    await p.evaluate((b) => { window.full = GdrMatrix.decodeBase64(b); }, b64);
    const timeout = Number(o['svg-timeout-s']) * 1000;
    const ms = await p.evaluate(async ({ n, kind, timeout }) => {
      const m = window.full;
      // The top-left n x n block of the matrix, as a matrix of its own.
      const sub = { n: n, nodes: m.nodes.slice(0, n), rail: m.rail, sizeBytes: m.sizeBytes, reasons: m.reasons,
        expectedGbps: m.expectedGbps, fleet: m.fleet, gbps: new Float32Array(n * n), code: new Uint8Array(n * n),
        expected: null, baseline: null, reason: null };
      for (let r = 0; r < n; r++) {
        sub.gbps.set(m.gbps.subarray(r * m.n, r * m.n + n), r * n);
        sub.code.set(m.code.subarray(r * m.n, r * m.n + n), r * n);
      }
      document.body.innerHTML = '<div id=h style="width:1100px"></div>';
      const frame = () => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      const t0 = performance.now();
      if (kind === 'canvas') {
        GdrHeatmap.mount(document.getElementById('h'), sub, {});
      } else {
        const cell = Math.max(1, 900 / n);
        const parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + (n * cell + 120) + '" height="' + (n * cell + 120) + '">'];
        for (let r = 0; r < n; r++) {
          for (let c = 0; c < n; c++) {
            const i = r * n + c;
            if ((sub.code[i] & 7) === 0) continue;
            const f = Math.min(1, sub.gbps[i] / (sub.expectedGbps || 400));
            parts.push('<rect x="' + (110 + c * cell) + '" y="' + (110 + r * cell) + '" width="' + cell + '" height="' + cell +
              '" fill="hsl(' + Math.round(120 * f * f) + ',70%,45%)"><title>' + sub.nodes[r] + ' -> ' + sub.nodes[c] + ': ' +
              sub.gbps[i].toPrecision(3) + ' Gb/s</title></rect>');
          }
        }
        parts.push('</svg>');
        document.getElementById('h').innerHTML = parts.join('');
      }
      await Promise.race([frame(), new Promise((res) => setTimeout(res, timeout))]);
      const ms = performance.now() - t0;
      return ms >= timeout ? -1 : ms;
    }, { n, kind, timeout });
    await p.close();
    return ms;
  };
  out.peer = {};
  for (const n of [Number(o['peer-nodes']), out.nodes]) {
    const canvas = await render(n, 'canvas');
    log('canvas', n, 'nodes:', Math.round(canvas), 'ms; now the SVG peer ...');
    let svg = -1;
    try { svg = await render(n, 'svg'); } catch (err) { log('svg at', n, 'nodes failed:', err.message.split('\n')[0]); }
    out.peer[n] = { canvas_ms: Math.round(canvas), svg_ms: svg < 0 ? `> ${o['svg-timeout-s']} s or failed` : Math.round(svg),
      svg_over_canvas: svg < 0 ? null : +(svg / canvas).toFixed(1) };
    log('peer', n, JSON.stringify(out.peer[n]));
  }

  // The sweep's report.html of the same run, from a file.
  const rp = await ctx.newPage();
  await rp.goto('file://' + html, { timeout: 180000 });
  await rp.waitForFunction(() => window.gdrFirstDrawnAt !== undefined, null, { timeout: 180000 });
  out.report_html_first_heatmap_ms = Math.round(await rp.evaluate(() => window.gdrFirstDrawnAt));
} finally {
  await ctx.close();
  await server.stop();
  if (!o.keep && ownDb) for (const f of [db, db + '-wal', db + '-shm', html]) fs.rmSync(f, { force: true });
}
out.loadavg_end = load();
out.limit_ms = Number(o['limit-ms']);
out.pass = out.run_page.cold_first_heatmap_ms < out.limit_ms;
console.log(JSON.stringify(out, null, 1));
process.exit(out.pass ? 0 : 1);
