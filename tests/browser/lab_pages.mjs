// Every dashboard page on real lab sweeps, in one Debian headless Chromium on
// the host. tests/lab/sweep_server_test.sh (its boot, no other) stores three
// sweeps of 4 lab nodes in its gdrbench-server (the baseline, node2<->node3
// shaped to 10mbit, node4 shaped to 10mbit), stops that server and leaves its
// store and lab.json (cluster, run ids, the shaped link and node) in --dir;
// the guest has no network to the host, so this serves that store with
// gdrbench-server on loopback and checks what each page shows against the
// server's API, and each screenshot's pixels:
//   runs (the three sweeps, newest first, the regressions counted), the run
//   page of the shaped-link sweep (its heatmap drawn, the shaped cells in
//   their stored verdict's colour; hovering the shaped link shows the stored
//   Gb/s and the baseline's; the regression links to the link page), the link
//   page (three points, the shaped one far lower), the node page of node4
//   (blamed in the last run), compare (the shaped link moved most, red in the
//   difference heatmap) and the capacity report (node4's links the weakest).
//
//   node lab_pages.mjs --bin build/bin --dir DIR --shots DIR
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Checks, countPixels, isAmber, isGreen, isPassColour, isRed, isTeal, launch, notWhite, shot, startServer } from './lib.mjs';

const { values: opt } = parseArgs({ options: { bin: { type: 'string' }, dir: { type: 'string' }, shots: { type: 'string' } } });
for (const k of ['bin', 'dir', 'shots']) if (!opt[k]) { console.error('missing --' + k); process.exit(2); }
const lab = path.join(opt.dir, 'lab.json');
if (!fs.existsSync(lab)) {
  console.error(lab + ' is missing: lab.sweep_server did not keep its store');
  process.exit(1);
}
const { cluster, runs: [run1, run2, run3], shaped_link: [a, b], shaped_node: slow } = JSON.parse(fs.readFileSync(lab, 'utf8'));
fs.rmSync(opt.shots, { recursive: true, force: true });
fs.mkdirSync(opt.shots, { recursive: true });
const t0 = Date.now();
const server = await startServer({ bin: opt.bin, work: opt.dir, db: path.join(opt.dir, 'server.db'), name: 'pages-server' });
const H = server.http;
const api = async (p) => {
  const r = await fetch(H + p);
  if (!r.ok) throw new Error('GET ' + p + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
};
const isLink = (text) => text.includes(a + ' \u2192 ' + b) || text.includes(b + ' \u2192 ' + a);
const verdictColour = { pass: isGreen, low: isAmber, fail: isRed };
const c = new Checks();

const ctx = await launch(opt.dir);
const page = await ctx.newPage();
page.on('pageerror', (e) => c.ok(false, 'no script error on ' + page.url(), e.message));
const open = async (p) => {
  const res = await page.goto(H + p);
  c.eq(res.status(), 200, 'GET ' + p);
  await page.waitForSelector('body[data-ready=true]', { timeout: 20000 });
};
// The colour of cell (src, dst) in a heatmap view's bitmap.
const bitmapAt = (view, src, dst) => page.evaluate(([v, s, d]) => {
  const m = v === 'diff' ? window.gdrDiffView : window.gdrViews[v];
  return Array.from(m.bitmap.getContext('2d').getImageData(d, s, 1, 1).data);
}, [view, src, dst]);
try {
  // Runs: the three sweeps, newest first.
  await open('/ui/runs?cluster=' + encodeURIComponent(cluster));
  const rows = await page.locator('.runs-table tbody tr').allTextContents();
  c.eq(rows.length, 3, 'runs: the lab\u2019s three sweeps');
  c.ok(rows[0].includes('FAIL') && rows[1].includes('FAIL') && rows[2].includes('PASS'), 'newest first: two failed sweeps (shaped), the passing baseline', rows);
  c.ok(rows[0].includes('1 / 0') && rows[1].includes('1 / 0'), 'each shaped sweep: one regression against the baseline, none against a history of 1 or 2 runs', rows);
  let s = await shot(page, opt.shots, 'lab-runs');
  const table = await page.locator('.runs-table').boundingBox();
  c.ok(countPixels(s.png, table, isRed) > 100 && countPixels(s.png, table, isGreen) > 50, 'runs screenshot: red FAIL and green PASS badges',
    [countPixels(s.png, table, isRed), countPixels(s.png, table, isGreen)]);

  // The run page of the shaped-link sweep.
  const o = await api('/ui/data/runs/' + run2 + '/overview');
  const vm = o.matrices.find((m) => m.verdictSize);
  await open('/ui/runs/' + run2);
  await page.waitForFunction(() => window.gdrViews && window.gdrViews.length >= 1 && window.gdrFirstHeatmap, null, { timeout: 20000 });
  const first = await page.evaluate(() => Math.round(window.gdrFirstHeatmap.ms));
  console.log('  (first heatmap ' + first + ' ms after navigation)');
  const names = await page.evaluate(() => window.gdrViews[0].data.nodes);
  c.eq(names.length, 4, 'run page: a 4-node heatmap');
  const cell = (await api('/api/v1/runs/' + run2 + '/cells?src=' + a + '&dst=' + b + '&rail=' + (vm.rail || 0) + '&size_bytes=' + vm.sizeBytes)).cells[0];
  const ia = names.indexOf(a), ib = names.indexOf(b), other = [0, 1, 2, 3].find((i) => i !== ia && i !== ib);
  const shapedColour = await bitmapAt(0, ia, ib);
  c.ok(cell && ['low', 'fail'].includes(cell.verdict) && verdictColour[cell.verdict](shapedColour), 'the shaped cell ' + a + '->' + b + ' in its stored verdict\u2019s colour (' + (cell && cell.verdict) + ')', shapedColour);
  // The emulated links retransmit: a pass is green, or teal when its link counters flagged it
  // (the cell's reason in the matrix the page drew; the cells API carries no reason for a pass).
  const un = await page.evaluate(([i, j]) => window.GdrMatrix.cell(window.gdrViews[0].data, i, j), [other, ia]);
  const unColour = await bitmapAt(0, other, ia);
  c.ok(un.verdict === 'pass' && (un.reason ? isTeal : isGreen)(unColour),
    'an unshaped cell is ' + (un.reason ? 'teal (pass, flagged by link counters: ' + un.reason + ')' : 'green (pass)'), [unColour, un]);
  const pt = await page.evaluate(([i, j]) => window.gdrViews[0].pointOf(i, j), [ia, ib]);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForSelector('.gdr-hm-tip', { state: 'visible' });
  const tip = await page.textContent('.gdr-hm-tip');
  c.ok(tip.includes(a + ' \u2192 ' + b) && tip.includes('rail ' + (vm.rail || 0)), 'hover on the shaped link shows src, dst, rail', tip);
  // The page's own three-digit text (GdrMatrix.gbpsText: 0.0093, not toPrecision's 0.00930).
  const text = (v) => page.evaluate((x) => window.GdrMatrix.gbpsText(x), v);
  c.ok(cell && tip.includes(await text(cell.bwAvgGbps)) && tip.includes('verdict ' + cell.verdict), 'and its stored Gb/s and verdict', tip + ' vs ' + JSON.stringify(cell));
  const base = (await api('/api/v1/runs/' + run1 + '/cells?src=' + a + '&dst=' + b + '&rail=' + (vm.rail || 0) + '&size_bytes=' + vm.sizeBytes)).cells[0];
  c.ok(base && tip.includes('baseline ' + (await text(base.bwAvgGbps))), 'and the baseline run\u2019s value', tip + ' vs ' + JSON.stringify(base));
  s = await shot(page, opt.shots, 'lab-run');
  const hm = await page.locator('.rail-block canvas').first().boundingBox();
  c.ok(countPixels(s.png, hm, isPassColour) > 5000, 'run screenshot: the heatmap is mostly passes (green, or teal where flagged)', countPixels(s.png, hm, isPassColour));
  c.ok(countPixels(s.png, hm, verdictColour[cell.verdict]) > 500, 'run screenshot: the shaped link\u2019s cells stand out', countPixels(s.png, hm, verdictColour[cell.verdict]));
  c.ok((await page.textContent('#blame')).includes(a) && (await page.textContent('#blame')).includes(b), 'the blame names the shaped link');
  const regLink = await page.locator('#regressions a[href*="/ui/link"]').first().getAttribute('href');
  c.ok(!!regLink && (regLink.includes('src=' + a + '&dst=' + b) || regLink.includes('src=' + b + '&dst=' + a)), 'the regression links to the shaped link', regLink);

  // The link page, from the regression: three runs, the shaped one far lower.
  await open(regLink);
  const pts = await page.evaluate(() => { const ch = Object.values(window.Chart.instances)[0]; return ch.data.datasets[0].data.map((p) => p.y); });
  c.ok(pts.length === 3 && pts[1] < 0.5 * pts[0] && pts[1] < 0.5 * pts[2], 'link page: three points, the shaped sweep\u2019s below half of the others', pts);
  c.ok((await page.getAttribute('#first-blamed a', 'href')).endsWith('/' + run2), 'first blamed in the shaped sweep', await page.textContent('#first-blamed'));
  s = await shot(page, opt.shots, 'lab-link', { fullPage: true });
  const chart = await page.locator('canvas').first().boundingBox();
  c.ok(countPixels(s.png, chart, notWhite) > 2000, 'link screenshot: the chart is drawn', countPixels(s.png, chart, notWhite));

  // The node page of the shaped node: its three runs, blamed in the last.
  await open('/ui/node?cluster=' + encodeURIComponent(cluster) + '&node=' + slow);
  const hist = await page.locator('#history-table tbody tr').allTextContents();
  c.eq(hist.length, 3, 'node page: its three runs');
  c.ok(hist[0].includes(slow) && hist[0].includes('FAIL'), 'the newest blames ' + slow, hist[0]);
  c.ok((await page.getAttribute('#first-blamed a', 'href')).endsWith('/' + run3), 'first blamed in the last sweep', await page.textContent('#first-blamed'));
  s = await shot(page, opt.shots, 'lab-node', { fullPage: true });
  c.ok(countPixels(s.png, await page.locator('#charts').boundingBox(), notWhite) > 2000, 'node screenshot: its charts are drawn');

  // Compare the baseline with the shaped-link sweep.
  await open('/ui/compare?a=' + run1 + '&b=' + run2);
  const moved = await page.textContent('#moved-table tbody tr:first-child');
  c.ok(isLink(moved) && moved.includes('\u2212'), 'compare: the shaped link moved most, down', moved);
  const dnames = await page.evaluate(() => window.gdrDiffView.data.nodes);
  const dcol = await bitmapAt('diff', dnames.indexOf(a), dnames.indexOf(b));
  c.ok(dcol[0] > 190 && dcol[1] < 120, 'the difference heatmap marks the shaped link red', dcol);
  s = await shot(page, opt.shots, 'lab-compare', { fullPage: true });
  const dbox = await page.locator('#diff canvas').boundingBox();
  c.ok(countPixels(s.png, dbox, isRed) > 300, 'compare screenshot: red cells in the difference heatmap', countPixels(s.png, dbox, isRed));

  // The capacity report: the shaped node's links are the weakest now.
  await open('/ui/capacity?cluster=' + encodeURIComponent(cluster) + '&days=30');
  const rep = await api('/api/v1/clusters/' + encodeURIComponent(cluster) + '/capacity?days=30');
  c.eq(rep.runs, 3, 'capacity: the three sweeps in the period');
  const weak = await page.textContent('#weakest tbody tr:first-child');
  c.ok(weak.includes(slow), 'capacity: a link of ' + slow + ' is the weakest', weak);
  c.ok(rep.weakest.length && [rep.weakest[0].src, rep.weakest[0].dst].includes(slow), 'the API says the same', rep.weakest[0]);
  s = await shot(page, opt.shots, 'lab-capacity', { fullPage: true });
  const trend = await page.locator('canvas').first().boundingBox();
  c.ok(countPixels(s.png, trend, notWhite) > 2000, 'capacity screenshot: the trend chart is drawn', countPixels(s.png, trend, notWhite));
} catch (err) {
  c.ok(false, 'the browser session ran to its end', err.stack);
  await page.screenshot({ path: path.join(opt.shots, 'lab-error.png') }).catch(() => {});
} finally {
  await ctx.close();
  await server.stop();
}
console.log('  (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s on the host; screenshots in ' + opt.shots + ')');
process.exit(c.done());
