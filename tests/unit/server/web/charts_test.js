// Issue 32, Why 8: the dashboard's time charts (server/web/assets/app.js
// gdr.lineChart), run in Node against a recording stand-in for Chart.js 3:
// same-day runs' x ticks read as times of day, not all "12-04"; a node's
// all-zero series keeps its y axis at 0 and above (Chart.js pads a flat series
// one unit both ways unless beginAtZero: its linear scale's
// handleTickRangeOptions); counts step by whole numbers (ticks.precision 0).
// Usage: node charts_test.js SOURCE_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const assert = require('assert');

process.env.TZ = 'UTC';
const src = process.argv[2];
class FakeNode {
  constructor() { this.dataset = {}; this.kids = []; }
  append(...k) { this.kids.push(...k); }
  setAttribute() {}
  addEventListener() {}
  replaceWith() {}
}
const charts = [];
const ctx = {
  Node: FakeNode,
  URLSearchParams,
  location: { search: '' },
  document: { body: new FakeNode(), createElement: () => new FakeNode(), getElementById: () => new FakeNode() },
  Chart: function (canvas, config) { charts.push(config); },
};
ctx.window = ctx;
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(path.join(src, 'server/web/assets/app.js'), 'utf8'), ctx);
const gdr = ctx.gdr;

// Three runs on 2026-12-04 (UTC), as the dashboard's history gets them.
const day = Date.parse('2026-12-04T00:00:00Z');
const at = (h, m) => day + (h * 60 + m) * 60e3;
const ticks = (vs) => vs.map((value) => ({ value }));

// Same day: each tick its time of day, all different.
const same = ticks([at(9, 0), at(10, 30), at(12, 0), at(13, 30)]);
const labels = same.map((t) => gdr.timeTick(t.value, same));
assert.deepStrictEqual(labels, ['09:00', '10:30', '12:00', '13:30']);
// Over two days: date and time; over weeks: the date.
const two = ticks([at(9, 0), at(9, 0) + 86400e3]);
assert.deepStrictEqual(two.map((t) => gdr.timeTick(t.value, two)), ['12-04 09:00', '12-05 09:00']);
const weeks = ticks([at(0, 0), at(0, 0) + 14 * 86400e3]);
assert.deepStrictEqual(weeks.map((t) => gdr.timeTick(t.value, weeks)), ['12-04', '12-18']);

// The node page's two charts (history.js): Gb/s of a node never measured (all 0), and its cell counts.
const zero = [{ label: 'rail 0', data: [{ x: at(9, 0), y: 0 }, { x: at(10, 0), y: 0 }] }];
gdr.lineChart(new FakeNode(), zero, { label: 'node median Gb/s over time' });
let y = charts.pop().options.scales.y;
assert.strictEqual(y.beginAtZero, true, 'a flat all-zero Gb/s series begins at zero (no -0.5 Gb/s)');
const counts = [{ label: 'low, rail 0', data: [{ x: at(9, 0), y: 0 }, { x: at(10, 0), y: 3 }] }];
gdr.lineChart(new FakeNode(), counts, { yTitle: 'cells', integer: true });
y = charts.pop().options.scales.y;
assert.strictEqual(y.beginAtZero, true);
assert.strictEqual(y.ticks.precision, 0, 'counts step by whole numbers');
// A varying bandwidth series keeps Chart.js's own range (its variation stays visible).
const varying = [{ label: 'rail 0', data: [{ x: at(9, 0), y: 370 }, { x: at(10, 0), y: 381 }] }];
gdr.lineChart(new FakeNode(), varying, {});
y = charts.pop().options.scales.y;
assert.strictEqual(y.beginAtZero, false);
assert.strictEqual(y.ticks.precision, undefined);
// The x axis uses the tick rule above.
gdr.lineChart(new FakeNode(), varying, {});
const x = charts.pop().options.scales.x;
assert.strictEqual(x.ticks.callback(same[1].value, 1, same), '10:30');
console.log('charts: all passed');
