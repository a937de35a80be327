"""gdrbench's nightly verdict rules, mirrored in numpy for bench/verdict_noise (issue 29).

Each function names the C++ it mirrors; a change there must be made here too (the unit test
tests/unit/bench/verdict_noise_rules_test.py pins the cases the C++ unit tests pin). One rail's
verdict matrix is an n x n array of Gb/s (the diagonal unused); every cell is tested and OK
(the simulation has no errored test: no "hard" blame, no failed cell).

Defaults: common/sweep_limits.h (kDefaultMadK 3, kDefaultFleetMinDrop 0.10,
kDefaultMinFractionOfLink 0.9, kDefaultRetestLow 1, kDefaultBaselineTolerance 0.05),
server/history/link_noise.h (NoisePolicy: k 3, min_history 5, window 10),
gdrbench-server --regression-tolerance (0.05) and --persist-runs (2),
controller/slurm/drain.h (DrainPolicy: node, nic, min_streak 2, max_fraction 0.25).
"""
import numpy as np

MAD_K = 3.0
FLEET_MIN_DROP = 0.10
MIN_FRACTION_OF_LINK = 0.9
RETEST_LOW = 1
TOLERANCE = 0.05
NOISE_K = 3.0
MIN_HISTORY = 5
WINDOW = 10
MIN_STREAK = 2
MAX_DRAIN_FRACTION = 0.25


def off_diagonal(n):
    return ~np.eye(n, dtype=bool)


def node_values(a):
    """Per node, its cells' values (row and column, diagonal excluded): n x 2(n-1)."""
    n = a.shape[0]
    m = off_diagonal(n)
    return np.concatenate([a[m].reshape(n, n - 1), a.T[m].reshape(n, n - 1)], axis=1)


def fleet_floor(x, mad_k=MAD_K, fleet_min_drop=FLEET_MIN_DROP):
    """controller/analysis/verdicts.cc ComputeFleetReference: the fleet floor (Gb/s) below which
    a cell is low. ref = median of the per-node medians of ln(Gb/s); nodes below
    ref - k x (their medians' MAD, >= 0.01) are outliers; MAD = median |ln(cell) - ref| over cells
    between non-outliers (>= 0.01); floor = min(exp(ref - k x MAD), exp(ref) x (1 - min drop))."""
    n = x.shape[0]
    lnv = np.log(np.maximum(x, 1e-9), dtype=np.float32)
    # Each node's row and column with the diagonal as -inf in one and +inf in the other: the
    # median of those 2n values is the median of its 2(n-1) cells.
    rows, cols = lnv.copy(), lnv.T.copy()
    np.fill_diagonal(rows, -np.inf)
    np.fill_diagonal(cols, np.inf)
    node_med = np.median(np.concatenate([rows, cols], axis=1), axis=1)
    ref = np.median(node_med)
    node_mad = max(np.median(np.abs(node_med - ref)), 0.01)
    outlier = node_med < ref - mad_k * node_mad
    keep = off_diagonal(n) & ~outlier[:, None] & ~outlier[None, :]
    dev = np.abs(lnv[keep] - ref) if keep.any() else np.abs(lnv[off_diagonal(n)] - ref)
    mad = max(np.median(dev), 0.01)
    if mad_k <= 0 or n * (n - 1) < 3:
        return -1.0
    return min(np.exp(ref - mad_k * mad), np.exp(ref) * (1 - fleet_min_drop))


def judge_low(x, expected=None, min_fraction=MIN_FRACTION_OF_LINK):
    """verdicts.cc JudgeMatrix for OK cells without a baseline (the server's sweeps pass none):
    low by the fleet check, or by the absolute check when `expected` (the port rate) is given."""
    low = x < fleet_floor(x)
    if expected is not None and min_fraction > 0:
        low |= x < min_fraction * expected
    low &= off_diagonal(x.shape[0])
    return low


def accept_bad_nodes(bad):
    """blame.cc TallyRail: nodes bad with most of their remaining partners (bad > half of the
    cells left, and >= 2), worst ratio first, every node tied at that ratio at once; an accepted
    node's cells stop counting for its partners. Returns a bool per node."""
    n = bad.shape[0]
    b = bad & off_diagonal(n)
    cells_left = np.full(n, 2 * (n - 1), dtype=np.int64)
    bad_left = b.sum(0) + b.sum(1)
    accepted = np.zeros(n, dtype=bool)
    while True:
        cand = ~accepted & (bad_left * 2 > cells_left) & (bad_left >= 2)
        if not cand.any():
            return accepted
        # Exact ties, as the C++ compares bad_a x cells_b with bad_b x cells_a.
        best = np.flatnonzero(cand)[0]
        for x in np.flatnonzero(cand):
            if bad_left[x] * cells_left[best] > bad_left[best] * cells_left[x]:
                best = x
        worst = [x for x in np.flatnonzero(cand)
                 if bad_left[x] * cells_left[best] == bad_left[best] * cells_left[x]]
        accepted[worst] = True
        for a in worst:
            others = ~accepted
            others[a] = False
            cells_left[others] -= 2
            bad_left[others] -= (b[others, a].astype(np.int64) + b[a, others])


def blame(bad_by_rail):
    """blame.cc Blame over one run's rails (a list of n x n bool 'bad' matrices): the fleet, rail,
    node and nic blames as (kind, subject) with subjects as the C++ names them, and the link
    blames as codes (link_codes)."""
    rails = len(bad_by_rail)
    n = bad_by_rail[0].shape[0]
    accepted = [accept_bad_nodes(b) for b in bad_by_rail]
    nodes_bad = [int(a.sum()) for a in accepted]
    some_clean = any(k == 0 for k in nodes_bad)
    out = []
    bad_rails = set()
    if not some_clean:  # FleetBlames: a rail whose every cell is bad
        for r, b in enumerate(bad_by_rail):
            if (b | ~off_diagonal(n)).all():
                bad_rails.add(r)
                out.append(("fleet", "every node on rail %d" % r if rails > 1 else "every node"))
    if not bad_rails and rails >= 2 and some_clean:  # RailBlames
        for r in range(rails):
            if nodes_bad[r] * 2 > n:
                bad_rails.add(r)
                out.append(("rail", "rail %d" % r))
    explained = {(x, r) for x in range(n) for r in bad_rails}
    for x in np.flatnonzero(np.any(accepted, axis=0)):  # NodeBlames
        x = int(x)
        bad = [r for r in range(rails) if accepted[r][x] and r not in bad_rails]
        if not bad:
            continue
        explained.update((x, r) for r in bad)
        if len(bad) == rails:
            out.append(("node", "n%d" % x))
        else:
            out.extend(("nic", "n%d rail %d" % (x, r)) for r in bad)
    return out, link_codes(bad_by_rail, explained, set())


def link_codes(bad_by_rail, explained, bad_rails):
    """blame.cc LinkBlames / regressions.cc AddLinks: the bad cells no node, nic or rail finding
    explains, one finding per link: 'a->b', or 'a<->b' (once, src < dst) when both directions
    are bad. As int64 codes ((rail x n + src) x n + dst) x 2 + both (link_name says them)."""
    n = bad_by_rail[0].shape[0]
    out = []
    for r, b in enumerate(bad_by_rail):
        if r in bad_rails:
            continue
        b = b & off_diagonal(n)
        ok = np.ones(n, dtype=bool)
        for x, rr in explained:
            if rr == r:
                ok[x] = False
        i, j = np.nonzero(b & ok[:, None] & ok[None, :])
        both = b[j, i]
        keep = ~both | (i < j)
        i, j, both = i[keep].astype(np.int64), j[keep].astype(np.int64), both[keep]
        out.append(((r * n + i) * n + j) * 2 + both)
    return np.sort(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)


def link_name(code, n, rails):
    both, code = code % 2, code // 2
    j, code = code % n, code // n
    i, r = code % n, code // n
    return "n%d%sn%d%s" % (i, "<->" if both else "->", j, " rail %d" % r if rails > 1 else "")


def link_summary(windows):
    """server/history/link_noise.cc Summarize over windows of equal fill (links x readings):
    median and noise = 1.4826 x MAD / median (0 for fewer than 2 readings)."""
    w = windows.shape[1]
    lo, hi = (w - 1) // 2, w // 2
    part = np.partition(windows, [lo, hi], axis=1)
    med = (part[:, lo] + part[:, hi]) / 2
    if w < 2:
        return med, np.zeros_like(med)
    dev = np.abs(windows - med[:, None])
    part = np.partition(dev, [lo, hi], axis=1)
    mad = (part[:, lo] + part[:, hi]) / 2
    noise = np.where(med > 0, 1.4826 * mad / np.where(med > 0, med, 1), 0)
    return med, noise


def threshold(history, noise, tolerance=TOLERANCE):
    """link_noise.cc Threshold: max(tolerance, k x noise) once min_history readings are in."""
    return np.where(history >= MIN_HISTORY, np.maximum(tolerance, NOISE_K * noise), tolerance)


def accept_regressed_nodes(bad):
    """server/history/regressions.cc AcceptNodes: a node regressed with most partners (bad > half
    of its cells left, >= 2 bad, >= 2 distinct partners), one at a time, the worst ratio first
    (the lowest index on a tie); its cells stop counting for its partners."""
    n = bad.shape[0]
    b = bad & off_diagonal(n)
    left_cells = np.full(n, 2 * (n - 1), dtype=np.int64)
    left_bad = b.sum(0) + b.sum(1)
    partners = np.where(left_bad >= 2, (b | b.T).sum(1), 0)
    accepted = np.zeros(n, dtype=bool)
    while True:
        cand = ~accepted & (partners >= 2) & (left_bad * 2 > left_cells) & (left_bad >= 2)
        if not cand.any():
            return accepted
        ratio = np.where(cand, left_bad / np.maximum(left_cells, 1), 0.0)
        a = int(np.argmax(ratio))
        accepted[a] = True
        others = np.ones(n, dtype=bool)
        others[a] = False
        left_cells[others] -= 2
        left_bad[others] -= (b[others, a].astype(np.int64) + b[a, others])


def regressions(bad_by_rail):
    """regressions.cc RegressionBuilder::Finish over one reference's regressed cells per rail:
    rail, node and nic findings as (kind, subject), and link findings as codes (link_codes)."""
    rails = len(bad_by_rail)
    n = bad_by_rail[0].shape[0]
    accepted = [accept_regressed_nodes(b) for b in bad_by_rail]
    nodes_bad = [int(a.sum()) for a in accepted]
    some_clean = any(k == 0 for k in nodes_bad)
    out = []
    bad_rails = set()
    for r in range(rails):
        if rails >= 2 and some_clean and nodes_bad[r] * 2 > n:
            bad_rails.add(r)
            out.append(("rail", "rail %d" % r))
    explained = set()
    for x in np.flatnonzero(np.any(accepted, axis=0)):
        bad = [r for r in range(rails) if accepted[r][x] and r not in bad_rails]
        if not bad:
            continue
        explained.update((int(x), r) for r in bad)
        if len(bad) == rails:
            out.append(("node", "n%d" % x))
        else:
            out.extend(("nic", "n%d rail %d" % (x, r)) for r in bad)
    return out, link_codes(bad_by_rail, explained, bad_rails)


def streaks(findings, previous):
    """server/history/ingest.cc SetStreaks: each finding's streak is the previous run's streak of
    the same (kind, subject) + 1, else 1. `findings`: (list of (kind, subject), link codes);
    `previous`: what this returned for the run before (({(kind, subject): streak}, codes,
    streaks)) or None. Returns the same shape for this run."""
    others, codes = findings
    prev_others, prev_codes, prev_streaks = previous or ({}, np.zeros(0, np.int64), np.zeros(0, np.int64))
    codes = np.unique(codes)
    at = np.searchsorted(prev_codes, codes)
    hit = at < prev_codes.size
    hit[hit] = prev_codes[at[hit]] == codes[hit]
    s = np.ones(codes.size, dtype=np.int64)
    s[hit] += prev_streaks[at[hit]]
    return {f: prev_others.get(f, 0) + 1 for f in set(others)}, codes, s


def merge(*findings):
    """Findings of several references of one run, as one (SetStreaks keys by kind and subject)."""
    others = [f for o, _ in findings for f in o]
    return others, np.concatenate([c for _, c in findings])


def drain(blame_streaks, nodes):
    """controller/slurm/drain.h PlanDrain with the default policy: node and nic blames whose
    streak reached MIN_STREAK (none here is hard) drain their node; more than MAX_DRAIN_FRACTION
    of the run's nodes refuses the whole plan. Returns (nodes drained, refused)."""
    drained = set()
    for (kind, subject), s in blame_streaks[0].items():
        if kind in ("node", "nic") and s >= MIN_STREAK:
            drained.add(subject.split(" ")[0])
    if len(drained) > MAX_DRAIN_FRACTION * nodes:
        return set(), True
    return drained, False
