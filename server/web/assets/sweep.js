// A sweep the server runs: its live view from the progress stream
// (server-sent events of /api/v1/sweeps/JOB/events, one SweepJob each), a
// cancel button for the write role, and the stored run once it is done.
(function () {
  'use strict';
  const { el } = gdr;
  const jobId = decodeURIComponent(location.pathname.split('/').pop());
  const title = el('h1', {}, 'Sweep ', el('code', { text: jobId }));
  const stateBox = el('div', { id: 'sweep-state' });
  const bar = el('div');
  const progress = el('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100' }, bar);
  const facts = el('div', { class: 'kv', id: 'sweep-facts' });
  const result = el('div', { id: 'sweep-result' });
  const cancel = el('button', { type: 'button', class: 'no-print', text: 'cancel', onclick: async () => {
    cancel.disabled = true;
    try { show(await gdr.post('/api/v1/sweeps/' + encodeURIComponent(jobId) + '/cancel')); } catch (err) { gdr.fail(err); cancel.disabled = false; }
  } });
  let events = 0;

  function show(j) {
    const st = (j.state || '').replace('SWEEP_STATE_', '').toLowerCase();
    const pr = j.progress || {};
    const total = Number(pr.testsTotal || 0), done = Number(pr.testsDone || 0);
    const pct = total ? Math.round(100 * done / total) : 0;
    stateBox.textContent = '';
    stateBox.append(gdr.badge(st, st === 'succeeded' ? (j.passed ? 'pass' : 'fail') : st === 'failed' || st === 'cancelled' ? 'fail' : st),
      ' cluster ', el('a', { href: '/ui/runs' + gdr.query({ cluster: j.cluster }), text: j.cluster }),
      j.submittedBy ? ', submitted by ' + j.submittedBy : '', ' ', gdr.ago(j.submittedAt));
    bar.style.width = (st === 'succeeded' ? 100 : pct) + '%';
    progress.setAttribute('aria-valuenow', String(pct));
    facts.textContent = '';
    const fact = (k, v) => facts.append(el('span', {}, el('b', { text: k + ' ' }), v));
    if (st === 'queued') fact('queue position', String(j.queuePosition || 0));
    fact('phase', pr.phase || '-');
    fact('tests', done + ' / ' + total + (pr.testsBad ? ' (' + pr.testsBad + ' bad)' : ''));
    if (pr.rounds) fact('round', (pr.round || 0) + ' / ' + pr.rounds);
    fact('elapsed', gdr.seconds(pr.elapsedS || 0));
    fact('ETA', gdr.seconds(pr.etaS === undefined ? -1 : pr.etaS));
    const finished = st === 'succeeded' || st === 'failed' || st === 'cancelled';
    cancel.style.display = gdr.canWrite() && !finished ? '' : 'none';
    result.textContent = '';
    if (j.error) result.append(el('p', { class: 'error', text: j.error }));
    if (j.runId) {
      result.append(el('p', {}, gdr.passBadge(!!j.passed), ' ', j.summary || '', ' \u2014 ',
        el('a', { href: gdr.runHref(j.runId), id: 'sweep-run-link', text: 'open run ' + j.runId })));
    }
    document.body.dataset.sweepState = st;
    document.body.dataset.events = String(events);
  }

  (async function () {
    try {
      gdr.show(title, stateBox, progress, facts, cancel, result,
        el('p', { class: 'muted', text: 'Live: this page follows the server\u2019s progress stream.' }));
      show(await gdr.json('/api/v1/sweeps/' + encodeURIComponent(jobId)));
      const es = new EventSource('/api/v1/sweeps/' + encodeURIComponent(jobId) + '/events');
      es.addEventListener('job', (e) => { events++; show(JSON.parse(e.data)); });
      es.addEventListener('error', (e) => {
        if (e.data) { try { gdr.fail(new Error(JSON.parse(e.data).error.message)); } catch (x) { /* not ours */ } }
        es.close();  // the stream ends after the last state: no reconnect loop
      });
      document.body.dataset.ready = 'true';
    } catch (err) {
      gdr.fail(err);
    }
  })();
})();
