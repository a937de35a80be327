// Every dashboard page on a real lab sweep, in Debian's headless Chromium on
// the host: tests/lab/server_regression_test.sh (its boot, no other) leaves
// the store of the gdrbench-server that kept its two sweeps (the second with
// the shaped link) and lab.json (cluster, run ids, the shaped link) in --dir;
// this serves that store with gdrbench-server on loopback and checks what
// each page shows against the server's API:
//   runs (both runs, the regression counted), the run page (its heatmap
//   drawn; hovering the shaped link shows the stored Gb/s and the baseline's;
//   the regression links to the link page), the link page (two points, the
//   second far lower), the node page, compare (the shaped link moved most),
//   the capacity report (the shaped link is the weakest); a screenshot of
//   each, checked for its pixels.
//
//   node lab_pages.mjs --bin build/bin --dir DIR --shots DIR
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Checks, countPixels, launch, notWhite, shot, startServer } from './lib.mjs';

const { values: opt } = parseArgs({ options: { bin: { type: 'string' }, dir: { type: 'string' }, shots: { type: 'string' } } });
for (const k of ['bin', 'dir', 'shots']) if (!opt[k]) { console.error('missing --' + k); process.exit(2); }
const lab = path.join(opt.dir, 'lab.json');
if (!fs.existsSync(lab)) {
  console.error(lab + ' is missing: lab.server_regression did not store its sweeps (run it first)');
  process.exit(1);
}
const { cluster, runs: [run1, run2], shaped: [a, b] } = JSON.parse(fs.readFileSync(lab, 'utf8'));
fs.mkdirSync(opt.shots, { recursive: true });
const server = await startServer({ bin: opt.bin, work: opt.dir, db: path.join(opt.dir, 'server.db'), name: 'pages-server' });
const H = server.http;
const api = async (p) => {
  const r = await fetch(H + p);
  if (!r.ok) throw new Error('GET ' + p + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
};
const isLink = (text) => text.includes(a + ' \u2192 ' + b) || text.includes(b + ' \u2192 ' + a);
const c = new Checks();
const t0 = Date.now();

const ctx = await launch(opt.dir);
const page = await ctx.newPage();
page.on('pageerror', (e) => c.ok(false, 'no script error on ' + page.url(), e.message));
const open = async (p) => {
  const res = await page.goto(H + p);
  c.eq(res.status(), 200, 'GET ' + p);
  await page.waitForSelector('body[data-ready=true]', { timeout: 20000 });
};
try {
  await open('/ui/runs?cluster=' + encodeURIComponent(cluster));
  c.eq(await page.locator('.runs-table tbody tr').count(), 2, 'runs: the lab\u2019s two sweeps');
  const newest = await page.textContent('.runs-table tbody tr:first-child');
  c.ok(newest.includes('1 / '), 'the newest run has one regression against the baseline', newest);
  let s = await shot(page, opt.shots, 'lab-runs');
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'runs screenshot is not blank');

  // The run page of the second sweep.
  const o = await api('/ui/data/runs/' + run2 + '/overview');
  const vm = o.matrices.find((m) => m.verdictSize);
  await open('/ui/runs/' + run2);
  await page.waitForFunction(() => window.gdrViews && window.gdrViews.length >= 1 && window.gdrFirstHeatmap, null, { timeout: 20000 });
  const first = await page.evaluate(() => Math.round(window.gdrFirstHeatmap.ms));
  console.log('  (first heatmap ' + first + ' ms after navigation)');
  const names = await page.evaluate(() => window.gdrViews[0].data.nodes);
  const cell = (await api('/api/v1/runs/' + run2 + '/cells?src=' + a + '&dst=' + b + '&rail=' + (vm.rail || 0) + '&size_bytes=' + vm.sizeBytes)).cells[0];
  const pt = await page.evaluate(([i, j]) => window.gdrViews[0].pointOf(i, j), [names.indexOf(a), names.indexOf(b)]);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForSelector('.gdr-hm-tip', { state: 'visible' });
  const tip = await page.textContent('.gdr-hm-tip');
  c.ok(tip.includes(a + ' \u2192 ' + b) && tip.includes('rail ' + (vm.rail || 0)), 'hover on the shaped link shows src, dst, rail', tip);
  c.ok(cell && tip.includes(cell.bwAvgGbps.toPrecision(3)), 'and its stored Gb/s', tip + ' vs ' + JSON.stringify(cell));
  c.ok(/baseline /.test(tip), 'and the baseline\u2019s value', tip);
  s = await shot(page, opt.shots, 'lab-run');
  const hm = await page.locator('.rail-block canvas').first().boundingBox();
  c.ok(countPixels(s.png, hm, notWhite) > 5000, 'the heatmap is drawn', countPixels(s.png, hm, notWhite));
  const regLink = await page.locator('#regressions a[href*="/ui/link"]').first().getAttribute('href');
  c.ok(!!regLink && (regLink.includes('src=' + a + '&dst=' + b) || regLink.includes('src=' + b + '&dst=' + a)), 'the regression links to the shaped link', regLink);

  // The link page, from the regression.
  await open(regLink);
  const pts = await page.evaluate(() => { const ch = Object.values(window.Chart.instances)[0]; return ch.data.datasets[0].data.map((p) => p.y); });
  c.ok(pts.length === 2 && pts[1] < 0.5 * pts[0], 'link page: two points, the shaped one below half', pts);
  s = await shot(page, opt.shots, 'lab-link', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'link screenshot is not blank');

  // A node page.
  await open('/ui/node?cluster=' + encodeURIComponent(cluster) + '&node=' + a);
  c.eq(await page.locator('#history-table tbody tr').count(), 2, 'node page: its two runs');
  s = await shot(page, opt.shots, 'lab-node', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'node screenshot is not blank');

  // Compare the two sweeps.
  await open('/ui/compare?a=' + run1 + '&b=' + run2);
  const moved = await page.textContent('#moved-table tbody tr:first-child');
  c.ok(isLink(moved) && moved.includes('\u2212'), 'compare: the shaped link moved most, down', moved);
  s = await shot(page, opt.shots, 'lab-compare', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'compare screenshot is not blank');

  // The capacity report.
  await open('/ui/capacity?cluster=' + encodeURIComponent(cluster) + '&days=30');
  const weak = await page.textContent('#weakest tbody tr:first-child');
  c.ok(isLink(weak), 'capacity: the shaped link is the weakest', weak);
  s = await shot(page, opt.shots, 'lab-capacity', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'capacity screenshot is not blank');
} catch (err) {
  c.ok(false, 'the browser session ran to its end', err.stack);
  await page.screenshot({ path: path.join(opt.shots, 'lab-error.png') }).catch(() => {});
} finally {
  await ctx.close();
  await server.stop();
}
console.log('  (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s in the browser; screenshots in ' + opt.shots + ')');
process.exit(c.done());
