#!/usr/bin/python3
"""bench/scaling.sh's table, fits and plot.

  scaling_report.py TSV OUT [HEADER_FILE]      writes OUT.txt and OUT.png

TSV: one row per node count and plan (the columns of COLUMNS; "-" where a figure was not
measured). Each figure's growth is fitted per plan against the tests that plan ran: least
squares of ln(cost) on ln(tests), cost ~ a x tests^b. b = 1 is a constant cost per test; b < 1
a fixed part that the tests amortize; b > 1 a cost per test that grows with the fleet. The cost
per test is given at the plan's largest N. Run with Debian's /usr/bin/python3 (python3-numpy,
python3-matplotlib: deploy/install-deps).
"""
import math
import sys

import numpy as np

COLUMNS = ["nodes", "plan", "rails", "tests", "rounds", "ctl_wall_s", "ctl_cpu_s", "ctl_rss_mb",
           "journal_bytes", "read_back_s", "ingest_sqlite_s", "ingest_postgres_s", "heatmap_cold_ms",
           "heatmap_warm_ms", "load_1m", "note"]

# The figures fitted and plotted: column, title, the unit a test's share is given in and the
# factor from the column's unit to it.
FIGURES = [
    ("ctl_wall_s", "controller wall (s)", "us", 1e6),
    ("ctl_cpu_s", "controller CPU, user+sys (s)", "us", 1e6),
    ("ctl_rss_mb", "controller peak RSS (MB)", "kB", 1e3),
    ("journal_bytes", "journal (bytes)", "B", 1),
    ("read_back_s", "journal read back (s)", "us", 1e6),
    ("ingest_sqlite_s", "ingest, SQLite (s)", "us", 1e6),
    ("ingest_postgres_s", "ingest, PostgreSQL (s)", "us", 1e6),
    ("heatmap_cold_ms", "dashboard first heatmap, cold (ms)", "us", 1e3),
]


def load(path):
    """The rows of a scaling TSV; ValueError when a column is missing or a row is short."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    head = lines[0].split("\t")
    missing = [c for c in COLUMNS if c not in head]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)}")
    rows = []
    for i, line in enumerate(lines[1:], 2):
        f = line.split("\t")
        if len(f) != len(head):
            raise ValueError(f"{path}:{i}: {len(f)} fields, the header has {len(head)}")
        rows.append(dict(zip(head, f)))
    return rows


def number(row, col):
    """The column as a float, None when it was not measured ("-" or empty)."""
    try:
        v = float(row[col])
    except (KeyError, ValueError):
        return None
    return v if math.isfinite(v) else None


def positive(row, col):
    """The column where it can be fitted on a log scale: a measured value above 0."""
    v = number(row, col)
    return v if v is not None and v > 0 else None


def fit(tests, cost):
    """(a, b) of cost ~ a x tests^b by least squares on the logs; None with fewer than two
    distinct test counts."""
    x = np.log(np.asarray(tests, dtype=float))
    y = np.log(np.asarray(cost, dtype=float))
    if len(x) < 2 or np.ptp(x) == 0:
        return None
    b, ln_a = np.polyfit(x, y, 1)
    return math.exp(ln_a), b


def fits(rows):
    """Per plan and figure: rows fitted, b, a, and the cost per test at the plan's largest N."""
    out = []
    for plan in dict.fromkeys(r["plan"] for r in rows):
        for col, title, unit, scale in FIGURES:
            pts = [(positive(r, "tests"), positive(r, col), int(r["nodes"])) for r in rows if r["plan"] == plan]
            pts = [p for p in pts if p[0] and p[1]]
            if not pts:
                continue
            f = fit([p[0] for p in pts], [p[1] for p in pts])
            t, c, n = max(pts, key=lambda p: p[2])
            out.append({"plan": plan, "figure": col, "rows": len(pts), "fit": f,
                        "per_test": c * scale / t, "unit": unit, "at_nodes": n})
    return out


def table(rows):
    """The rows as aligned text, the columns of COLUMNS in order."""
    w = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS[:-1]}
    lines = ["  ".join(c.rjust(w[c]) for c in COLUMNS[:-1]) + "  note"]
    for r in rows:
        lines.append("  ".join(r[c].rjust(w[c]) for c in COLUMNS[:-1]) + "  " + r["note"])
    return lines


def fit_lines(fs):
    lines = ["figure             plan         rows  exponent b  cost a x tests^b   per test at the largest N"]
    for f in fs:
        if f["fit"]:
            a, b = f["fit"]
            ab = f"{b:10.3f}  {a:16.4g}"
        else:
            ab = f"{'-':>10}  {'- (one point)':>16}"
        lines.append(f"{f['figure']:18} {f['plan']:12} {f['rows']:4}  {ab}   "
                     f"{f['per_test']:.4g} {f['unit']}/test (N={f['at_nodes']})")
    return lines


def plot(rows, fs, out_png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shown = [f for f in FIGURES if any(positive(r, f[0]) for r in rows)]
    cols = 3
    nrow = max(1, math.ceil(len(shown) / cols))
    fig, axes = plt.subplots(nrow, cols, figsize=(13, 3.6 * nrow), squeeze=False)
    plans = list(dict.fromkeys(r["plan"] for r in rows))
    colours = dict(zip(plans, ["tab:blue", "tab:orange", "tab:green", "tab:red"]))
    for ax, (col, name, _, _) in zip(axes.flat, shown):
        for plan in plans:
            pts = [(positive(r, "tests"), positive(r, col), r["nodes"]) for r in rows if r["plan"] == plan]
            pts = [p for p in pts if p[0] and p[1]]
            if not pts:
                continue
            x = [p[0] for p in pts]
            y = [p[1] for p in pts]
            f = next((g["fit"] for g in fs if g["plan"] == plan and g["figure"] == col), None)
            label = plan + (f" (b={f[1]:.2f})" if f else "")
            ax.plot(x, y, "o", color=colours.get(plan), label=label)
            for xi, yi, n in pts:
                ax.annotate("N=" + n, (xi, yi), textcoords="offset points", xytext=(4, -10), fontsize=7)
            if f:
                xs = np.geomspace(min(x), max(x), 20)
                ax.plot(xs, f[0] * xs ** f[1], "--", color=colours.get(plan), linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("tests run", fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out_png, dpi=100)


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    rows = load(argv[1])
    header = open(argv[3]).read().splitlines() if len(argv) == 4 else []
    fs = fits(rows)
    text = header + [""] + table(rows) + ["", "# growth per plan against the tests run: cost ~ a x tests^b, "
                                          "least squares of ln(cost) on ln(tests)"] + fit_lines(fs)
    with open(argv[2] + ".txt", "w") as f:
        f.write("\n".join(text) + "\n")
    host = next((h.lstrip("# ") for h in header if h.startswith("# host")), "")
    fleet = any(r["plan"].startswith("fleet-") for r in rows)
    title = ("gdrbench's cost against the tests run (fake agents" +
             ("; fleet-*: real agents over mTLS, the gdrbench CLI)" if fleet else ")") + ("\n" + host if host else ""))
    plot(rows, fs, argv[2] + ".png", title)
    print("\n".join(text))


if __name__ == "__main__":
    main(sys.argv)
