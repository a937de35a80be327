// Compare two runs: the change of every cell (b against a) as a diverging
// heatmap (both matrices fetched in the heatmap's binary form and diffed
// here), and the cells that moved most (/api/v1/compare).
(function () {
  'use strict';
  const { el } = gdr;
  const p = gdr.params;
  const state = { a: p.get('a') || '', b: p.get('b') || '', rail: p.get('rail'), size: p.get('size') };

  async function pickers(runs) {
    const opt = (r, sel) => el('option', { value: r.runId, selected: r.runId === sel, text: gdr.time(r.startedAt) + '  ' + r.cluster + '  ' + (r.passed ? 'PASS' : 'FAIL') + '  ' + r.runId });
    const a = el('select', { name: 'a' }, runs.map((r) => opt(r, state.a)));
    const b = el('select', { name: 'b' }, runs.map((r) => opt(r, state.b)));
    const go = el('button', { type: 'button', class: 'primary', text: 'compare', onclick: () => {
      location.href = '/ui/compare' + gdr.query({ a: a.value, b: b.value });
    } });
    return el('div', { class: 'filters' }, el('label', {}, 'a (reference)', a), el('label', {}, 'b', b), go);
  }

  async function defaults() {
    if (state.a && state.b) return;
    if (state.b && !state.a) {
      const ob = await gdr.json('/ui/data/runs/' + encodeURIComponent(state.b) + '/overview');
      const prev = await gdr.json('/api/v1/runs' + gdr.query({ cluster: ob.summary.cluster, until: ob.summary.startedAt, page_size: 1 }));
      if ((prev.runs || []).length) state.a = prev.runs[0].runId;
      return;
    }
    const r = await gdr.json('/api/v1/runs' + gdr.query({ page_size: 2 }));
    const runs = r.runs || [];
    if (runs.length >= 2) { state.b = runs[0].runId; state.a = runs[1].runId; }
  }

  function sizesOf(o) { return o.matrices || []; }

  async function diffSection(oa, ob) {
    const box = el('div', { id: 'diff' });
    const common = sizesOf(ob).filter((m) => sizesOf(oa).some((x) => (x.rail || 0) === (m.rail || 0) && x.sizeBytes === m.sizeBytes));
    if (!common.length) { box.append(el('p', { class: 'muted', text: 'The runs have no matrix of the same rail and size.' })); return box; }
    const rail = state.rail !== null && state.rail !== undefined ? Number(state.rail) : Math.min(...common.map((m) => m.rail || 0));
    const ofRail = common.filter((m) => (m.rail || 0) === rail);
    const pick = (state.size ? ofRail.find((m) => Number(m.sizeBytes) === Number(state.size)) : ofRail.find((m) => m.verdictSize)) || ofRail[0] || common[0];
    const url = (id) => '/ui/data/runs/' + encodeURIComponent(id) + '/matrix' + gdr.query({ rail: pick.rail || 0, size: pick.sizeBytes });
    const [ba, bb] = await Promise.all([gdr.bytes(url(state.a)), gdr.bytes(url(state.b))]);
    const d = GdrMatrix.diff(GdrMatrix.decode(ba), GdrMatrix.decode(bb));
    const tabs = el('div', { class: 'tabs' }, el('span', { class: 'muted', text: 'rail and size ' }),
      common.map((m) => el('button', { type: 'button', class: m === pick ? 'on' : null, text: 'rail ' + (m.rail || 0) + ', ' + gdr.size(m.sizeBytes),
        onclick: () => { location.href = '/ui/compare' + gdr.query({ a: state.a, b: state.b, rail: m.rail || 0, size: m.sizeBytes }); } })));
    box.append(tabs, el('h2', { text: 'Change of each cell, rail ' + (pick.rail || 0) + ' at ' + gdr.size(pick.sizeBytes) + ' (b / a \u2212 1)' }));
    const holder = el('div');
    box.append(holder);
    window.gdrDiffView = GdrHeatmap.mountDiff(holder, d, {
      range: 0.5,
      cellHref: (src, dst, r) => gdr.linkHref(ob.summary.cluster, src, dst, r),
      onDrawn: (ms) => { document.body.dataset.diffDrawnMs = String(Math.round(ms)); },
    });
    state.pick = pick;
    return box;
  }

  async function moved(oa, ob) {
    const box = el('div', { id: 'moved' });
    const q = { a: state.a, b: state.b, page_size: 50 };
    if (state.pick) { q.rail = state.pick.rail || 0; q.size_bytes = state.pick.sizeBytes; }
    const r = await gdr.json('/api/v1/compare' + gdr.query(q));
    box.append(el('h2', { text: 'Cells that moved most' }),
      el('p', { id: 'compare-counts', text: gdr.num(r.compared) + ' cells compared; ' + gdr.num(r.dropped) + ' dropped and ' + gdr.num(r.improved) +
        ' improved by more than ' + gdr.pct(r.tolerance, 0) + '; ' + gdr.num(r.statusChanged) + ' changed status; ' +
        gdr.num(r.onlyA) + ' only in a, ' + gdr.num(r.onlyB) + ' only in b' }));
    const status = (s) => String(s || 'RESULT_STATUS_UNSPECIFIED').replace('RESULT_STATUS_', '').toLowerCase().replace('unspecified', 'absent');
    box.append(gdr.table(['link', '#rail', 'size', '#a Gb/s', '#b Gb/s', '#change'], (r.changed || []).map((c) => [
      el('a', { href: gdr.linkHref(ob.summary.cluster, c.src, c.dst, c.rail || 0), text: c.src + ' \u2192 ' + c.dst }), c.rail || 0, gdr.size(c.sizeBytes),
      c.aStatus === 'RESULT_STATUS_OK' ? gdr.gbps(c.aGbps) : status(c.aStatus),
      c.bStatus === 'RESULT_STATUS_OK' ? gdr.gbps(c.bGbps) : status(c.bStatus),
      c.aStatus === 'RESULT_STATUS_OK' && c.bStatus === 'RESULT_STATUS_OK' ? gdr.signedPct(c.changeFraction) : 'status']), { id: 'moved-table' }));
    return box;
  }

  (async function () {
    try {
      await defaults();
      const recent = (await gdr.json('/api/v1/runs' + gdr.query({ page_size: 100 }))).runs || [];
      for (const id of [state.a, state.b]) if (id && !recent.some((r) => r.runId === id)) recent.unshift({ runId: id, cluster: '', startedAt: null });
      if (!state.a || !state.b) { gdr.show(el('h1', { text: 'Compare runs' }), await pickers(recent), el('p', { class: 'muted', text: 'Pick two runs.' })); return; }
      const [oa, ob] = await Promise.all([state.a, state.b].map((id) => gdr.json('/ui/data/runs/' + encodeURIComponent(id) + '/overview')));
      const head = el('div', {}, el('h1', { text: 'Compare runs' }), await pickers(recent),
        el('p', {}, 'a: ', el('a', { href: gdr.runHref(state.a), text: state.a }), ' ', gdr.passBadge(!!oa.summary.passed), ' ', gdr.time(oa.summary.startedAt),
          '  \u2192  b: ', el('a', { href: gdr.runHref(state.b), text: state.b }), ' ', gdr.passBadge(!!ob.summary.passed), ' ', gdr.time(ob.summary.startedAt)));
      gdr.show(head);
      gdr.main.append(await diffSection(oa, ob));
      gdr.main.append(await moved(oa, ob));
      document.body.dataset.ready = 'true';
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
