// The runs page: newest first, per cluster, with filters; the sweeps the
// server is running or has queued (each with its live view); "run now" for
// the write role on the clusters the server can sweep.
(function () {
  'use strict';
  const { el } = gdr;
  const p = gdr.params;
  const state = { cluster: p.get('cluster') || '', passed: p.get('passed') || '', since: p.get('since') || '', pageSize: 50 };

  function setUrl() {
    history.replaceState(null, '', '/ui/runs' + gdr.query({ cluster: state.cluster, passed: state.passed, since: state.since }));
  }

  function filters(clusters) {
    const cl = el('select', { name: 'cluster', onchange: (e) => { state.cluster = e.target.value; setUrl(); loadRuns(true); } },
      el('option', { value: '', text: 'all clusters' }),
      clusters.map((c) => el('option', { value: c.name, text: c.name, selected: c.name === state.cluster })));
    const pass = el('select', { name: 'passed', onchange: (e) => { state.passed = e.target.value; setUrl(); loadRuns(true); } },
      [['', 'any'], ['true', 'passed'], ['false', 'failed']].map(([v, t]) => el('option', { value: v, text: t, selected: v === state.passed })));
    const since = el('input', { type: 'date', name: 'since', value: state.since,
      onchange: (e) => { state.since = e.target.value; setUrl(); loadRuns(true); } });
    return el('div', { class: 'filters' },
      el('label', {}, 'cluster', cl), el('label', {}, 'verdict', pass), el('label', {}, 'started since', since));
  }

  function runNow(clusters) {
    const sweepable = clusters.filter((c) => c.sweeps);
    const box = el('div', { class: 'panel no-print', id: 'run-now' });
    if (!sweepable.length) {
      box.append(el('span', { class: 'muted', text: 'This server sweeps no cluster itself (gdrbench-server --cluster NAME=INVENTORY); runs arrive from gdrbench sweep --server.' }));
      return box;
    }
    if (!gdr.canWrite()) {
      box.append(el('span', { class: 'muted', text: 'Your token has the read role: starting a sweep needs a write token.' }));
      return box;
    }
    const pick = el('select', { id: 'run-now-cluster' }, sweepable.map((c) => el('option', { value: c.name, text: c.name, selected: c.name === state.cluster })));
    const msg = el('span', { class: 'muted' });
    const btn = el('button', { class: 'primary', id: 'run-now-button', type: 'button', text: 'run now', onclick: async () => {
      btn.disabled = true;
      try {
        const job = await gdr.post('/api/v1/sweeps', { cluster: pick.value });
        window.location.href = '/ui/sweeps/' + encodeURIComponent(job.jobId);
      } catch (err) {
        msg.textContent = err.message; msg.className = 'error'; btn.disabled = false;
      }
    } });
    box.append(el('b', { text: 'Sweep now: ' }), pick, ' ', btn, ' ', msg);
    return box;
  }

  async function sweeps() {
    const box = el('div', { id: 'sweeps' });
    const r = await gdr.json('/api/v1/sweeps' + gdr.query({ cluster: state.cluster }));
    const jobs = (r.jobs || []).filter((j) => j.state === 'SWEEP_STATE_QUEUED' || j.state === 'SWEEP_STATE_RUNNING');
    if (!jobs.length) return box;
    box.append(el('h2', { text: 'Sweeps in progress' }), gdr.table(['job', 'cluster', 'state', 'progress', 'submitted by'],
      jobs.map((j) => {
        const pr = j.progress || {};
        return [el('a', { href: '/ui/sweeps/' + encodeURIComponent(j.jobId), text: j.jobId }), j.cluster,
          gdr.badge(j.state.replace('SWEEP_STATE_', '').toLowerCase(), j.state === 'SWEEP_STATE_RUNNING' ? 'running' : 'queued'),
          (pr.phase || '') + ' ' + (pr.testsDone || 0) + '/' + (pr.testsTotal || 0), j.submittedBy || ''];
      })));
    return box;
  }

  // Runs a `gdrbench sweep --server` is streaming (issue 30), with their live view.
  async function liveRuns() {
    const box = el('div', { id: 'live-runs' });
    const r = await gdr.json('/api/v1/live-runs');
    const runs = (r.runs || []).filter((x) => !state.cluster || (x.plan && x.plan.cluster) === state.cluster);
    if (!runs.length) return box;
    box.append(el('h2', { text: 'Runs in progress (streamed by gdrbench sweep --server)' }),
      gdr.table(['run', 'cluster', 'tests landed', 'opened by', 'updated'], runs.map((x) => [
        el('a', { href: '/ui/live/' + encodeURIComponent(x.runId), text: x.runId }), (x.plan && x.plan.cluster) || '',
        gdr.num(x.nextTest) + (x.plan && Number(x.plan.testsPlanned) ? ' / ' + gdr.num(x.plan.testsPlanned) : ''),
        x.openedBy || '', gdr.ago(x.updatedAt)])));
    return box;
  }

  let nextToken = '';
  const tableBox = el('div', { id: 'runs' });
  const more = el('button', { type: 'button', class: 'no-print', text: 'older runs', onclick: () => loadRuns(false) });

  function row(r) {
    const cells = Number(r.cells || 0), low = Number(r.lowCells || 0), failed = Number(r.failedCells || 0);
    const judged = Number(r.verdictCells || 0);
    const passCells = judged ? judged - low - failed : null;
    return [
      el('a', { href: gdr.runHref(r.runId), text: gdr.time(r.startedAt) }),
      r.cluster, r.mode || '', gdr.passBadge(!!r.passed),
      passCells === null ? '-' : gdr.num(passCells), gdr.num(low), gdr.num(failed),
      (r.baselineRegressions || 0) + ' / ' + (r.lastPassRegressions || 0),
      gdr.duration(r.startedAt, r.finishedAt),
      el('span', {}, r.isBaseline ? gdr.badge('baseline', 'neutral') : '', r.isBaseline ? ' ' : '', r.summary || ''),
      el('a', { class: 'no-print', href: '/ui/compare' + gdr.query({ b: r.runId }), text: 'compare' }),
    ];
  }

  async function loadRuns(fresh) {
    if (fresh) { nextToken = ''; tableBox.textContent = ''; }
    const q = { cluster: state.cluster, passed: state.passed, page_size: state.pageSize, page_token: nextToken };
    if (state.since) q.since = new Date(state.since + 'T00:00:00').toISOString();
    const r = await gdr.json('/api/v1/runs' + gdr.query(q));
    const runs = r.runs || [];
    if (fresh && !runs.length) tableBox.append(el('p', { class: 'muted', text: 'No run matches.' }));
    if (runs.length) {
      tableBox.append(gdr.table(['started', 'cluster', 'mode', 'verdict', '#cells pass', '#low', '#fail',
        'regressions (baseline / history)', '#duration', 'summary', ''], runs.map(row), { class: 'runs-table' }));
    }
    nextToken = r.nextPageToken || '';
    more.style.display = nextToken ? '' : 'none';
  }

  (async function () {
    try {
      const clusters = (await gdr.json('/api/v1/clusters')).clusters || [];
      gdr.show(el('h1', { text: 'Runs' }), filters(clusters), runNow(clusters), await sweeps(), await liveRuns(), el('h2', { text: 'Stored runs, newest first' }), tableBox, more);
      await loadRuns(true);
      document.body.dataset.ready = 'true';
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
