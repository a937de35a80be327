"""The noise model of bench/verdict_noise, fitted per message size from recorded sweeps.

A reading of link c = (i, j) in sweep (night) s is  mu_c x exp(b_s + u_si + u_sj + e_sc):
  mu_c   the link's own level: ln(mu_c) ~ Normal(0, link_sd) around the fleet's;
  b_s    what the whole sweep shares (in the lab: the host's load): Normal(0, night_sd);
  u_sx   what node x's cells share in that sweep (a stalled host): Normal(0, node_sd);
  e_sc   the cell's own noise: Student-t with df degrees of freedom and scale `scale`.
Fit (robust, on ln(Gb/s)): a_c = median over sweeps, b_s = median over links of the rest;
u_sx = median of what is left over node x's cells of sweep s, e = what is left after both ends'
u; link_sd = 1.4826 x MAD of a_c, night_sd = the standard deviation of b_s, node_sd from the
variance of u less what the cells' noise puts into a median of its 2(n-1) cells (pi/2 x var(e)
/ (2(n-1))); (df, scale) by maximum likelihood over a grid, the residuals scaled up by
sqrt(S C / ((S - 1)(C - 1))) first (centring on S sweeps and C links shrinks them).
"""
import csv
import math
from collections import defaultdict

import numpy as np

DF_GRID = (1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 30.0, 1000.0)


class NoiseModel:
    def __init__(self, link_sd, night_sd, df, scale, sweeps=0, links=0, source="", node_sd=0.0):
        self.link_sd, self.night_sd, self.df, self.scale = link_sd, night_sd, df, scale
        self.node_sd = node_sd
        self.sweeps, self.links, self.source = sweeps, links, source

    def cell_sd(self):
        """The standard deviation of e (infinite for df <= 2)."""
        if self.df <= 2:
            return math.inf
        return self.scale * math.sqrt(self.df / (self.df - 2))

    def cell_mad_fraction(self):
        """1.4826 x MAD of exp(e) - 1, about the noise a link's history measures."""
        rng = np.random.default_rng(0)
        e = self.draw_cells(rng, 200000)
        v = np.exp(e)
        return 1.4826 * np.median(np.abs(v - np.median(v))) / np.median(v)

    def draw_cells(self, rng, shape):
        if self.df >= 1000:
            return rng.standard_normal(shape) * self.scale
        return rng.standard_t(self.df, shape) * self.scale

    def describe(self):
        return ("cells: Student-t df %g scale %.4g (about %.1f %% as a link's history measures it); "
                "sweep-wide sd %.3g; per-sweep node sd %.3g; link-to-link sd %.3g%s" %
                (self.df, self.scale, 100 * self.cell_mad_fraction(), self.night_sd, self.node_sd,
                 self.link_sd,
                 " (%d sweeps x %d links)" % (self.sweeps, self.links) if self.sweeps else ""))


def t_loglik(e, df, scale):
    z = e / scale
    return np.sum(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
                  - math.log(scale) - (df + 1) / 2 * np.log1p(z * z / df))


def fit_t(e):
    best = None
    sd = max(np.std(e), 1e-6)
    for df in DF_GRID:
        for scale in sd * np.exp(np.linspace(-3, 1, 161)):
            ll = t_loglik(e, df, scale)
            if best is None or ll > best[0]:
                best = (ll, df, scale)
    return best[1], best[2]


def fit(y, ends=None):
    """y: sweeps x links of ln(Gb/s); ends: per link its (src, dst) node indices (None: no node
    term)."""
    s, c = y.shape
    if s < 3 or c < 3:
        raise ValueError("need at least 3 sweeps of 3 links, got %d x %d" % (s, c))
    a = np.median(y, axis=0)
    b = np.median(y - a, axis=1)
    r = y - a - b[:, None]
    node_sd = 0.0
    if ends is not None:
        ends = np.asarray(ends)
        nodes = int(ends.max()) + 1
        u = np.zeros((s, nodes))
        for x in range(nodes):
            touching = (ends[:, 0] == x) | (ends[:, 1] == x)
            u[:, x] = np.median(r[:, touching], axis=1)
        r = r - u[:, ends[:, 0]] - u[:, ends[:, 1]]
        per_node = max(int(((ends[:, 0] == 0) | (ends[:, 1] == 0)).sum()), 1)
        node_var = np.var(u, ddof=1) - math.pi / 2 * np.var(r) / per_node
        node_sd = math.sqrt(max(node_var, 0.0))
    e = r.ravel() * math.sqrt(s * c / ((s - 1) * (c - 1)))
    df, scale = fit_t(e)
    link_sd = 1.4826 * np.median(np.abs(a - np.median(a)))
    return NoiseModel(link_sd, float(np.std(b, ddof=1)), df, scale, s, c, "fitted", node_sd)


def fit_csv(path):
    """{size_bytes: NoiseModel} from lab-cells.csv (verdict_noise.py extract), rail 0 links."""
    by = defaultdict(lambda: defaultdict(dict))
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["sweep"].startswith("#"):
                continue
            by[int(row["size_bytes"])][(int(row["rail"]), row["src"], row["dst"])][int(row["sweep"])] = \
                math.log(float(row["gbps"]))
    out = {}
    for size, links in by.items():
        sweeps = sorted({k for v in links.values() for k in v})
        keys = sorted(k for k, v in links.items() if all(s in v for s in sweeps))
        names = sorted({k[1] for k in keys} | {k[2] for k in keys})
        ends = [(names.index(k[1]), names.index(k[2])) for k in keys]
        out[size] = fit(np.array([[links[k][s] for k in keys] for s in sweeps]), ends)
    return out
