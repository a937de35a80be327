// A run: the bandwidth matrix of every rail at the chosen size as canvas
// heatmaps (heatmap.js), the blame list and the regressions beside them,
// each linking to its node or link, and the preflight findings per node with
// their remedies. The first heatmap's data is requested at once, beside the
// overview, so it draws before the rest of the page: window.gdrFirstHeatmap
// says when (ms since navigation start; the bench and the tests read it).
(function () {
  'use strict';
  const { el } = gdr;
  const runId = decodeURIComponent(location.pathname.split('/').pop());
  const p = gdr.params;
  const t0 = performance.now();
  const matrixUrl = (rail, size) => '/ui/data/runs/' + encodeURIComponent(runId) + '/matrix' + gdr.query({ rail: rail, size: size });
  // The first matrix: the URL's rail and size, else the run's first rail at its verdict size.
  const firstFetch = gdr.bytes(matrixUrl(p.get('rail'), p.get('size')));
  const state = { colorBy: p.get('color') === 'gbps' ? 'gbps' : 'verdict', size: null, views: [] };

  function header(o) {
    const s = o.summary;
    const pol = o.policy || {};
    const params = o.params || {};
    return el('div', {},
      el('h1', {}, 'Run ', el('code', { text: s.runId }), ' ', gdr.passBadge(!!s.passed), s.isBaseline ? ' ' : '', s.isBaseline ? gdr.badge('baseline', 'neutral') : ''),
      el('p', { class: 'summary', text: s.summary || '' }),
      leftOut(o),
      el('div', { class: 'kv' },
        el('span', {}, el('b', { text: 'cluster ' }), el('a', { href: '/ui/runs' + gdr.query({ cluster: s.cluster }), text: s.cluster })),
        el('span', {}, el('b', { text: 'started ' }), gdr.time(s.startedAt), ' (' + gdr.ago(s.startedAt) + ')'),
        el('span', {}, el('b', { text: 'duration ' }), gdr.duration(s.startedAt, s.finishedAt)),
        el('span', {}, el('b', { text: 'mode ' }), s.mode || '-'),
        el('span', {}, el('b', { text: 'nodes ' }), String(s.nodes || 0), el('b', { text: ' rails ' }), String(s.rails || 0)),
        el('span', {}, el('b', { text: 'memory ' }), params.memory || 'host'),
        el('span', {}, el('b', { text: 'verdict ' }), (pol.minFractionOfLink ? 'pass \u2265 ' + Math.round(100 * pol.minFractionOfLink) + ' % of link rate' : 'absolute verdict off') +
          (pol.madK ? ', fleet-relative k = ' + pol.madK : '')),
        el('span', { class: 'no-print' }, el('a', { href: '/ui/compare' + gdr.query({ b: s.runId }), text: 'compare with another run' }))));
  }

  // The nodes left out, one line per cause with its remedy, first on the page
  // (each node's own reason is in the preflight section's collapsed list).
  function leftOut(o) {
    const causes = o.leftOut || [];
    if (!causes.length) return el('span');
    return el('div', { class: 'panel', id: 'left-out' }, causes.map((g) => el('div', {},
      el('b', { text: g.line }),
      el('div', {}, el('span', { class: 'muted', text: 'remedy: ' }), g.remedy))));
  }

  function sizeTabs(o) {
    const sizes = [...new Set(o.matrices.map((m) => Number(m.sizeBytes || 0)))].sort((a, b) => a - b);
    const box = el('div', { class: 'tabs', id: 'size-tabs' }, el('span', { class: 'muted', text: 'message size ' }));
    for (const sz of sizes) {
      box.append(el('button', { type: 'button', class: sz === state.size ? 'on' : null, text: gdr.size(sz), dataset: { size: sz },
        onclick: () => { state.size = sz; history.replaceState(null, '', location.pathname + gdr.query({ size: sz })); render(o, null, null); } }));
    }
    return sizes.length > 1 ? box : el('span');
  }

  function heatmapBlock(o, m, preload) {
    const block = el('div', { class: 'rail-block', dataset: { rail: m.rail || 0, size: m.sizeBytes } },
      el('h3', { text: 'Rail ' + (m.rail || 0) + ': BW average at ' + gdr.size(m.sizeBytes) + (m.verdictSize ? '' : ' (not the verdict size)') }),
      el('p', { class: 'muted', text: 'rows: initiator, columns: target; hover a cell for its values, click it for the link\u2019s history, wheel or buttons to zoom, drag to pan' }));
    const holder = el('div', { class: 'heatmap-holder' });
    block.append(holder);
    const draw = (buf) => {
      const t1 = performance.now();
      const matrix = GdrMatrix.decode(buf);
      const decodeMs = performance.now() - t1;
      const view = GdrHeatmap.mount(holder, matrix, {
        colorBy: state.colorBy,
        reference: (o.policy || {}).minFractionOfLink ? undefined : 'fleet',
        cellHref: (src, dst, rail) => gdr.linkHref(o.summary.cluster, src, dst, rail),
        onDrawn: (ms) => {
          if (!window.gdrFirstHeatmap) {
            window.gdrFirstHeatmap = { ms: performance.now(), drawMs: ms, decodeMs: decodeMs, nodes: matrix.n, rail: matrix.rail };
            document.body.dataset.firstHeatmapMs = String(Math.round(performance.now()));
            performance.mark('gdr-first-heatmap');
            // On screen: the frame after the draw has been painted (two animation frames on).
            requestAnimationFrame(() => requestAnimationFrame(() => {
              window.gdrFirstHeatmap.paintedMs = performance.mark('gdr-first-heatmap-painted').startTime;
            }));
          }
        },
      });
      state.views.push(view);
      window.gdrViews = state.views;  // for the tests: view.pointOf(src, dst), view.cellAt(x, y)
    };
    const load = () => (preload || gdr.bytes(matrixUrl(m.rail, m.sizeBytes))).then(draw).catch((err) => holder.append(el('p', { class: 'error', text: err.message })));
    if (preload) {
      load();
    } else if (window.IntersectionObserver) {
      const io = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) { io.disconnect(); load(); } }, { rootMargin: '300px' });
      io.observe(block);
      window.addEventListener('beforeprint', () => { io.disconnect(); load(); }, { once: true });
    } else {
      load();
    }
    return block;
  }

  function blameList(o, names) {
    const box = el('div', { id: 'blame' }, el('h2', { text: 'Blame' }));
    if (!(o.blame || []).length) { box.append(el('p', { class: 'muted', text: 'Nothing blamed.' })); return box; }
    // streak (set by the server when it stored the run): consecutive runs of the cluster with this
    // blame; a drain acts on one that only read low once it persists (gdrbench drain --min-streak).
    box.append(gdr.table(['kind', 'subject', '#Gb/s', '#streak', 'reason'], o.blame.map((b) =>
      [b.kind, gdr.subjectLinks(o.summary.cluster, b.subject, gdr.parseBlame(b, names)), gdr.gbps(b.evidenceGbps),
        b.streak ? (b.streak === 1 ? 'first run' : b.streak + ' runs in a row') : '',
        b.reason + (b.hard ? ' (a test errored: acted on at once)' : '') +
          (b.confirmed ? ' (confirmed by a retest)' : ' (seen once)')])));
    return box;
  }

  function regressions(o) {
    const box = el('div', { id: 'regressions' }, el('h2', { text: 'Regressions' }));
    const reps = o.regressions || [];
    if (!reps.length) { box.append(el('p', { class: 'muted', text: 'Not compared (no baseline, no history).' })); return box; }
    for (const r of reps) {
      box.append(el('h3', {}, 'against ' + gdr.refName(r.reference), r.referenceRunId ? ' (' : '',
        r.referenceRunId ? el('a', { href: gdr.runHref(r.referenceRunId), text: r.referenceRunId }) : '', r.referenceRunId ? ')' : ''),
        el('p', { text: r.summary || '' }));
      if (r.referenceRunId) {
        box.append(el('p', { class: 'no-print' }, el('a', { href: '/ui/compare' + gdr.query({ a: r.referenceRunId, b: o.summary.runId }), text: 'difference heatmap' })));
      }
      if (!(r.regressions || []).length) continue;
      // streak: consecutive runs of the cluster with this finding (blank: not computed).
      box.append(gdr.table(['kind', 'subject', '#before', '#after', '#drop', '#streak', 'reason'], r.regressions.map((g) => {
        const kind = gdr.kindName(g.kind);
        const subj = kind === 'link' ? el('a', { href: gdr.linkHref(o.summary.cluster, g.src, g.dst, g.rail || 0), text: g.subject })
          : kind === 'rail' ? g.subject : el('span', {}, gdr.nodeLink(o.summary.cluster, g.src), kind === 'nic' ? ' rail ' + (g.rail || 0) : '');
        const streak = g.streak ? (g.streak === 1 ? 'first run' : g.streak + ' runs in a row') : '';
        return [kind, subj, gdr.gbps(g.beforeGbps), gdr.gbps(g.afterGbps), gdr.pct(g.dropFraction), streak,
          (g.referenceDetail ? 'against ' + g.referenceDetail + ': ' : '') + g.reason];
      })));
      if (r.linksOmitted) box.append(el('p', { class: 'muted', text: r.linksOmitted + ' more link regressions not listed' }));
    }
    return box;
  }

  function preflight(o) {
    const box = el('div', { id: 'preflight' }, el('h2', { text: 'Preflight findings' }));
    const excluded = o.excludedNodes || [];
    if (excluded.length) {
      box.append(el('details', { id: 'left-out-nodes' }, el('summary', { text: 'Nodes left out of the sweep: each one\u2019s reason (' + excluded.length + ')' }),
        el('ul', {}, excluded.map((x) => el('li', { text: x })))));
    }
    const found = o.preflight || [];
    if (!found.length) {
      box.append(el('p', { class: 'muted', text: o.preflightNodes ? 'Every check passed on the ' + o.preflightNodes + ' nodes.' : 'No preflight in this run.' }));
      return box;
    }
    box.append(el('p', { class: 'muted', text: found.length + ' of ' + (o.preflightNodes || 0) + ' nodes have a WARN or FAIL.' }));
    for (const f of found) {
      box.append(el('div', { class: 'panel findings', dataset: { node: f.node } },
        el('b', {}, gdr.nodeLink(o.summary.cluster, f.node)), ' ', gdr.checkBadge(f.overall),
        el('ul', {}, (f.problems || []).map((c) => el('li', {}, gdr.checkBadge(c.status), ' ', el('code', { text: c.id }), ' ', c.summary || '',
          c.remediation ? el('div', {}, el('span', { class: 'muted', text: 'remedy: ' }), el('code', { text: c.remediation })) : '')))));
    }
    return box;
  }

  let heatBox;
  // The heatmaps of every rail at state.size; `first` draws from `preload`.
  function render(o, first, preload) {
    heatBox.textContent = '';
    state.views = [];
    heatBox.append(sizeTabs(o));
    for (const m of o.matrices.filter((x) => Number(x.sizeBytes || 0) === state.size)) {
      heatBox.append(heatmapBlock(o, m, m === first ? preload : null));
    }
  }

  (async function () {
    try {
      const o = await gdr.json('/ui/data/runs/' + encodeURIComponent(runId) + '/overview');
      document.title = 'Run ' + runId + ' \u00b7 gdrbench';
      const names = new Set(o.nodes || []);
      o.matrices = o.matrices || [];
      heatBox = el('div', { id: 'heatmaps' });
      gdr.show(header(o), el('h2', { text: 'Bandwidth matrices' }), heatBox,
        el('div', { class: 'grid2' }, blameList(o, names), regressions(o)), preflight(o));
      if (!o.matrices.length) { heatBox.append(el('p', { class: 'muted', text: 'This run has no matrix (every test failed before measuring).' })); return; }
      // The first block uses the matrix requested at page start.
      const want = p.get('rail') !== null ? Number(p.get('rail')) : Math.min(...o.matrices.map((m) => m.rail || 0));
      const vs = o.matrices.filter((m) => (m.rail || 0) === want);
      const first = p.get('size') ? vs.find((m) => Number(m.sizeBytes) === Number(p.get('size'))) : vs.find((m) => m.verdictSize);
      state.size = Number((first || o.matrices[0]).sizeBytes || 0);
      render(o, first, firstFetch);
      document.body.dataset.ready = 'true';
      document.body.dataset.loadMs = String(Math.round(performance.now() - t0));
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
