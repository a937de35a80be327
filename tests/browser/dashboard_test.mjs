// The dashboard in a real browser (Debian's headless Chromium, one session
// for every check) against a real gdrbench-server with bearer tokens:
//   - a page without a token is refused (401 and the login form, no data);
//   - the read token logs in, sees the runs and cannot start a sweep;
//   - the run page draws every rail's heatmap; hovering a cell shows its
//     values (checked against the API's cells); the blame links to the link;
//   - the node, link, compare and capacity pages render; the capacity report
//     of a 30-day history with a slowly degrading link shows the decline in
//     its trend and lists that link first among the weakest; its CSV and its
//     print to PDF work; `gdrbench report capacity` says the same;
//   - the sweep's own report.html draws the same heatmap.
// The history: gdrbench-fake-history (the controller's sweep of its fake
// cluster) uploads 30 runs of an 8-node, 2-rail, 4-leaf fabric whose
// node1<->node6 link on rail 0 fades from 96 % to 60 % of its 400 Gb/s.
// Screenshots go to --shots and are checked pixel by pixel.
//
//   node dashboard_test.mjs --bin build/bin --tests-bin build/tests --work DIR --shots DIR
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Checks, countPixels, isAmber, isGreen, isRed, launch, notWhite, run, shot, startServer } from './lib.mjs';

const { values: opt } = parseArgs({ options: {
  bin: { type: 'string' }, 'tests-bin': { type: 'string' }, work: { type: 'string' }, shots: { type: 'string' },
} });
for (const k of ['bin', 'tests-bin', 'work', 'shots']) if (!opt[k]) { console.error('missing --' + k); process.exit(2); }
fs.rmSync(opt.work, { recursive: true, force: true });
fs.mkdirSync(opt.work, { recursive: true });
fs.mkdirSync(opt.shots, { recursive: true });
const T = { read: 'read-token-0123456789abcdef', write: 'write-token-0123456789abcdef' };
const tokens = path.join(opt.work, 'tokens');
fs.writeFileSync(tokens, `read ${T.read} dashboard-reader\nwrite ${T.write} ci\n`);
fs.writeFileSync(path.join(opt.work, 'write.token'), T.write + '\n');
fs.writeFileSync(path.join(opt.work, 'read.token'), T.read + '\n');
const c = new Checks();
const t0 = Date.now();

const server = await startServer({ bin: opt.bin, work: opt.work, db: path.join(opt.work, 'dash.db'), tokens });
const reportHtml = path.join(opt.work, 'report.html');
const seeded = await run(path.join(opt['tests-bin'], 'gdrbench-fake-history'), ['--server', server.grpc, '--insecure',
  '--token-file', path.join(opt.work, 'write.token'), '--cluster', 'fab', '--nodes', '8', '--rails', '2', '--runs', '30',
  '--days', '30', '--nodes-per-leaf', '4', '--degrade', '1,6,0,0.96,0.60', '--preflight-fail', '3', '--baseline-first',
  '--report-html', reportHtml, '--live-tests', '20']);
const runIds = seeded.trim().split('\n').filter((l) => /^fab-\d+ /.test(l)).map((l) => l.split(' ')[0]);
c.eq(runIds.length, 30, '30 runs stored through UploadRun');
console.log('  (seeded in ' + ((Date.now() - t0) / 1000).toFixed(1) + ' s)');
const last = runIds[runIds.length - 1], first = runIds[0];
const H = server.http;
const apiRead = async (p) => (await fetch(H + p, { headers: { Authorization: 'Bearer ' + T.read } })).json();

const ctx = await launch(opt.work);
const page = await ctx.newPage();
page.on('pageerror', (e) => c.ok(false, 'no script error on ' + page.url(), e.message));
try {
  // 1. Without a token: refused.
  let res = await page.goto(H + '/ui/runs');
  c.eq(res.status(), 401, 'GET /ui/runs without a token is refused (401)');
  c.ok(await page.locator('form[action="/ui/login"] input[name=token]').count() === 1, 'it shows the login form');
  c.eq(await page.locator('#runs, table').count(), 0, 'and no run data');
  res = await page.goto(H + '/ui/data/runs/' + last + '/matrix');
  c.eq(res.status(), 401, 'the matrix data without a token: 401');
  res = await page.goto(H + '/api/v1/runs');
  c.eq(res.status(), 401, 'the API without a token: 401');
  res = await page.goto(H + '/ui/runs/' + last);
  await shot(page, opt.shots, 'login');
  await page.fill('input[name=token]', 'not-a-token-of-this-server');
  await page.click('button[type=submit]');
  c.ok((await page.textContent('main')).includes('not known'), 'a wrong token is refused with a sentence');

  // 2. The read token: the run it asked for, then the runs page.
  await page.fill('input[name=token]', T.read);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  c.ok(page.url().endsWith('/ui/runs/' + last), 'login returns to the page asked for', page.url());
  const cookies = await ctx.cookies(H);
  const session = cookies.find((k) => k.name === 'gdrbench_token');
  c.ok(session && session.httpOnly && session.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict', session);
  await page.goto(H + '/ui/runs?cluster=fab');
  await page.waitForSelector('body[data-ready=true]');
  c.eq(await page.locator('.runs-table tbody tr').count(), 30, 'runs page: the 30 runs, filtered by cluster');
  c.ok((await page.textContent('.runs-table tbody tr:first-child')).includes('FAIL'), 'the newest run (link at 60 %) failed');
  c.eq(await page.locator('#run-now-button').count(), 0, 'no "run now" button for the read role');
  c.ok((await page.textContent('#run-now')).length > 0, 'the run-now box says why', await page.textContent('#run-now'));
  let s = await shot(page, opt.shots, 'runs');
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'runs screenshot is not blank');

  // 2b. A live run (issue 30: a sweep streaming its tests, 20 of them landed):
  // listed in progress, and its page shows every cell that landed.
  c.ok((await page.textContent('#live-runs')).includes('fab-live'), 'runs page: the live run is listed in progress');
  const landed = (await apiRead('/api/v1/live-runs/fab-live/cells?page_size=10000')).cells || [];
  await page.goto(H + '/ui/live/fab-live');
  await page.waitForSelector('body[data-ready=true]');
  c.ok(landed.length >= 20, 'the live run holds the cells of its 20 tests', landed.length);
  c.eq(await page.getAttribute('body', 'data-cells'), String(landed.length), 'live page: every cell that landed');
  c.ok(await page.locator('.live-matrix').count() >= 1, 'live page: a matrix per rail and size');
  c.ok((await page.textContent('#live-facts')).includes('20 / '), 'live page: 20 tests of the plan landed',
    await page.textContent('#live-facts'));
  s = await shot(page, opt.shots, 'live');
  c.ok(countPixels(s.png, null, notWhite) > 20000, 'live screenshot is not blank');

  // 3. A read token cannot start a run, whatever the page does.
  const post = await page.evaluate(async () => {
    const r = await fetch('/api/v1/sweeps', { method: 'POST', headers: { 'X-Gdrbench-Request': '1', 'Content-Type': 'application/json' }, body: '{"cluster":"fab"}' });
    return { status: r.status, body: await r.text() };
  });
  c.eq(post.status, 403, 'POST /api/v1/sweeps with the read session: 403');
  c.ok(post.body.includes('read role'), 'and says the read role cannot', post.body);
  const csrf = await page.evaluate(async () => (await fetch('/api/v1/sweeps', { method: 'POST', body: '{"cluster":"fab"}' })).status);
  c.eq(csrf, 403, 'a cookie write without X-Gdrbench-Request (cross-site form) is refused');
  const w = await fetch(H + '/api/v1/sweeps', { method: 'POST', headers: { Authorization: 'Bearer ' + T.write }, body: '{"cluster":"fab"}' });
  c.ok(w.status !== 401 && w.status !== 403, 'the write token passes the role check (this server has no inventory to sweep)', w.status);

  // 4. The run page: both rails' heatmaps, hover, blame, preflight.
  await page.goto(H + '/ui/runs/' + last);
  await page.waitForSelector('body[data-ready=true]');
  await page.waitForFunction(() => window.gdrViews && window.gdrViews.length === 2, null, { timeout: 10000 });
  const first_ms = await page.evaluate(() => window.gdrFirstHeatmap.ms);
  c.ok(first_ms > 0 && first_ms < 5000, 'first heatmap drawn, ' + Math.round(first_ms) + ' ms after navigation');
  const cell = await apiRead('/api/v1/runs/' + last + '/cells?src=node1&dst=node6&rail=0&size_bytes=1048576');
  const stored = cell.cells[0];
  const base = await apiRead('/api/v1/runs/' + first + '/cells?src=node1&dst=node6&rail=0&size_bytes=1048576');
  const pt = await page.evaluate(() => window.gdrViews[0].pointOf(1, 6));
  const colour = await page.evaluate(() => { const v = window.gdrViews[0]; const ctx = v.bitmap.getContext('2d'); return [Array.from(ctx.getImageData(6, 1, 1, 1).data), Array.from(ctx.getImageData(1, 0, 1, 1).data)]; });
  // 60 % of the link rate: below the 90 % line, so LOW (amber) or FAIL (red), as stored.
  const bad = stored.verdict === 'fail' ? isRed : isAmber;
  c.ok(['low', 'fail'].includes(stored.verdict) && bad(colour[0]), 'the cell node1->node6 has its stored verdict\u2019s colour (' + stored.verdict + ')', colour[0]);
  c.ok(colour[1][1] > 120 && colour[1][0] < 100, 'a passing cell is green', colour[1]);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForSelector('.gdr-hm-tip', { state: 'visible' });
  const tip = await page.textContent('.gdr-hm-tip');
  c.ok(tip.includes('node1 \u2192 node6') && tip.includes('rail 0') && tip.includes('1 MiB'), 'hover shows src, dst, rail and size', tip);
  c.ok(tip.includes(stored.bwAvgGbps.toPrecision(3)) && tip.includes('verdict ' + stored.verdict), 'hover shows the stored Gb/s and verdict', tip + ' vs ' + JSON.stringify(stored));
  c.ok(/reason .*60% of the 400 Gb\/s link/.test(tip), 'hover shows the reason', tip);
  c.ok(tip.includes('baseline ' + base.cells[0].bwAvgGbps.toPrecision(3)), 'hover shows the baseline value', tip + ' vs ' + base.cells[0].bwAvgGbps);
  s = await shot(page, opt.shots, 'run-hover');
  const hm = await page.locator('.rail-block[data-rail="0"] canvas').boundingBox();
  c.ok(countPixels(s.png, hm, isGreen) > 5000, 'run screenshot: the heatmap is mostly green', countPixels(s.png, hm, isGreen));
  c.ok(countPixels(s.png, hm, bad) > 500, 'run screenshot: the fading link\u2019s cells stand out in its verdict\u2019s colour', countPixels(s.png, hm, bad));
  await page.click('.rail-block[data-rail="0"] button[data-mode=gbps]');
  const g = await page.evaluate(() => Array.from(window.gdrViews[0].bitmap.getContext('2d').getImageData(6, 1, 1, 1).data));
  c.ok(g[0] > 150 && g[1] > 60 && g.slice(0, 3).some((v, i) => Math.abs(v - colour[0][i]) > 20), 'colour by Gb/s: 60 % of the link rate is orange, another colour than its verdict\u2019s', [g, colour[0]]);
  await page.click('.rail-block[data-rail="0"] button[title^="zoom in"]');
  c.ok((await page.textContent('.rail-block[data-rail="0"] .gdr-hm-zoom')).includes('zoom'), 'zoom in');
  const blame = await page.locator('#blame a[href*="/ui/link"]').first().getAttribute('href');
  c.ok(blame && blame.includes('src=node1') && blame.includes('dst=node6'), 'the blame links to the node1<->node6 link', blame);
  c.ok((await page.textContent('#preflight')).includes('modprobe nvidia-peermem'), 'preflight findings with their remedy (node3)');
  // node3 left out: said once at the top, by its cause, with the remedy; its own reason folded away.
  const leftOut = await page.textContent('#left-out');
  c.ok(/^1 of 8 nodes left out by the preflight \(a check FAILed\): node3; node3: preflight FAIL/.test(leftOut) &&
    leftOut.includes('remedy: run gdrbench preflight on those nodes'), 'the header says the one cause once, with its remedy', leftOut);
  c.ok(!(await page.locator('#left-out-nodes').evaluate((d) => d.open)), 'each left-out node\u2019s reason is in a collapsed list');
  c.ok((await page.textContent('#regressions')).includes('node1'), 'the regressions against the baseline name the link');

  // 5. The link page, from the blame.
  await page.goto(H + blame);
  await page.waitForSelector('body[data-ready=true]');
  c.ok(await page.evaluate(() => !!window.Chart && Object.keys(window.Chart.instances).length === 1), 'link page: one line chart (Chart.js from libjs-chart.js)');
  const linkData = await page.evaluate(() => { const ch = Object.values(window.Chart.instances)[0]; const d = ch.data.datasets[0].data; return [d[0].y, d[d.length - 1].y, d.length]; });
  c.ok(linkData[2] === 30 && linkData[1] < 0.7 * linkData[0], 'its trend falls over the 30 runs', linkData);
  c.ok((await page.textContent('#first-blamed')).includes('First blamed'), 'when it was first blamed', await page.textContent('#first-blamed'));
  s = await shot(page, opt.shots, 'link', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 30000, 'link screenshot is not blank');

  // 6. A node page: its preflight history.
  await page.goto(H + '/ui/node?cluster=fab&node=node3');
  await page.waitForSelector('body[data-ready=true]');
  c.ok((await page.locator('#history-table tbody tr').count()) >= 14, 'node page: its runs');
  c.ok((await page.textContent('#history-table')).includes('modprobe nvidia-peermem'), 'its preflight history with the remedy');
  c.ok(await page.evaluate(() => Object.keys(window.Chart.instances).length === 2), 'its cells over time: two charts');
  await shot(page, opt.shots, 'node', { fullPage: true });

  // 7. Compare the first and the last run.
  await page.goto(H + '/ui/compare?a=' + first + '&b=' + last);
  await page.waitForSelector('body[data-ready=true]');
  const moved = await page.textContent('#moved-table tbody tr:first-child');
  c.ok(/node(1|6) \u2192 node(6|1)/.test(moved) && moved.includes('\u2212'), 'compare: the link moved most', moved);
  const dcol = await page.evaluate(() => Array.from(window.gdrDiffView.bitmap.getContext('2d').getImageData(6, 1, 1, 1).data));
  c.ok(dcol[0] > 200 && dcol[1] < 190, 'the difference heatmap marks the drop red', dcol);
  // node3 was left out of both runs (its preflight FAILs): skipped in both, the neutral grey
  // (#9aa1ad) of "not run in a or b", not the dark of "OK -> failed".
  const skip = await page.evaluate(() => Array.from(window.gdrDiffView.bitmap.getContext('2d').getImageData(0, 3, 1, 1).data));
  c.ok(skip[0] === 0x9a && skip[1] === 0xa1 && skip[2] === 0xad, 'a cell skipped in both runs is grey, not "OK \u2192 failed"', skip);
  c.ok((await page.textContent('#diff .gdr-hm-legend')).includes('not run in a or b'), 'and the legend says so');
  s = await shot(page, opt.shots, 'compare', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 30000, 'compare screenshot is not blank');

  // 8. The capacity report.
  await page.goto(H + '/ui/capacity?cluster=fab&days=30');
  await page.waitForSelector('body[data-ready=true]');
  const weak = await page.textContent('#weakest tbody tr:first-child');
  c.ok(/node(1|6) \u2192 node(6|1)/.test(weak), 'capacity: the degrading link is the weakest', weak);
  const rep = await apiRead('/api/v1/clusters/fab/capacity?days=30');
  c.eq(rep.runs, 30, 'capacity: 30 runs in the period');
  const all0 = rep.groups.find((x) => (x.rail || 0) === 0 && x.group === 'all');
  c.ok(all0 && all0.minChangeFraction < -0.3, 'the trend of rail 0\u2019s minimum falls by more than 30 %', all0 && all0.minChangeFraction);
  c.ok(rep.weakest[0].changeFraction < -0.3 && rep.weakest[0].trend.length === 30, 'the weakest link\u2019s own trend falls', rep.weakest[0].changeFraction);
  const groups0 = rep.groups.filter((x) => (x.rail || 0) === 0).map((x) => x.group);
  c.ok(['intra-leaf', 'cross-leaf', 'leaf su1-leaf0', 'leaf su2-leaf0 uplinks', 'spine group plane0'].every((x) => groups0.includes(x)), 'groups per leaf and spine group', groups0);
  const chartMin = await page.evaluate(() => { const ch = Object.values(window.Chart.instances)[0]; const d = ch.data.datasets.find((x) => x.label === 'min').data; return [d[0].y, d[d.length - 1].y]; });
  c.ok(chartMin[1] < 0.7 * chartMin[0], 'the page\u2019s trend chart shows the minimum falling', chartMin);
  s = await shot(page, opt.shots, 'capacity', { fullPage: true });
  c.ok(countPixels(s.png, null, notWhite) > 50000, 'capacity screenshot is not blank');
  const csv = await page.evaluate(async (u) => (await fetch(u)).text(), await page.getAttribute('#capacity-csv', 'href'));
  c.ok(csv.startsWith('cluster,days,runs,rail,group') && /,node(1|6),node(6|1),/.test(csv), 'the CSV export: groups and the weakest link', csv.slice(0, 120));
  await page.emulateMedia({ media: 'print' });
  const pdf = await page.pdf({ path: path.join(opt.shots, 'capacity.pdf'), format: 'A4', printBackground: true });
  c.ok(pdf.subarray(0, 5).toString() === '%PDF-' && pdf.length > 20000, 'print to PDF: ' + pdf.length + ' bytes');
  await page.emulateMedia({ media: 'screen' });
  const cli = await run(path.join(opt.bin, 'gdrbench'), ['report', 'capacity', '--server', server.grpc, '--server-insecure',
    '--server-token-file', path.join(opt.work, 'read.token'), '--period', '30d']);
  fs.writeFileSync(path.join(opt.shots, 'capacity.txt'), cli);
  c.ok(cli.includes('capacity of cluster fab') && /weakest links[\s\S]*node(1|6)->node(6|1)/.test(cli), 'gdrbench report capacity --period 30d: the same weakest link', cli.slice(0, 300));

  // 9. The sweep's own report.html: the same heatmap code, from a file.
  await page.goto('file://' + reportHtml);
  await page.waitForFunction(() => window.gdrViews && window.gdrViews.length >= 1);
  // The node table and the other sections come first: bring the heatmap into
  // the viewport before pointing at a cell.
  await page.evaluate(() => document.querySelector('div.gdr-heatmap').scrollIntoView());
  const rpt = await page.evaluate(() => window.gdrViews[0].pointOf(1, 6));
  await page.mouse.move(rpt.x, rpt.y);
  const rtip = await page.textContent('.gdr-hm-tip');
  c.ok(rtip.includes('node1 \u2192 node6') && rtip.includes('verdict ' + stored.verdict), 'report.html: hover shows the cell', rtip);
  await shot(page, opt.shots, 'report-html');
} catch (err) {
  c.ok(false, 'the browser session ran to its end', err.stack);
  await page.screenshot({ path: path.join(opt.shots, 'error.png') }).catch(() => {});
} finally {
  await ctx.close();
  await server.stop();
}
console.log('  (' + ((Date.now() - t0) / 1000).toFixed(1) + ' s in all; screenshots in ' + opt.shots + ')');
process.exit(c.done());
