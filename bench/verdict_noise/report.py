"""The table and the plot of bench/verdict_noise from run_model.py's JSON files.

  verdict_noise.py report CELLS_CSV OUT LABEL=RESULT.json...   OUT.txt and OUT.png
"""
import json
import math
import sys

import noise_model


def smallest(det, key, p=0.95):
    """The smallest drop of the grid caught with probability >= p, and every larger one too."""
    drops = sorted(float(d) for d in det)
    best = None
    for d in reversed(drops):
        x = det[str(d)] if str(d) in det else det[repr(d)]
        if x["trials"] and x[key] / x["trials"] >= p:
            best = d
        else:
            break
    return best


def mean_max(rows, f):
    v = [f(r) for r in rows]
    return sum(v) / len(v), max(v)


def fmt_mm(rows, f):
    m, x = mean_max(rows, f)
    return "%.1f (max %d)" % (m, x)


def model_lines(label, res):
    rows = res["nights"]
    det = res["detect"]
    m = res["model"]
    out = ["", "## %s" % label,
           "model: %s" % m["describe"],
           "cluster: %d nodes x %d rails, all-pairs, %d nights (%d cells a night)" %
           (res["nodes"], res["rails"], len(rows), res["nodes"] * (res["nodes"] - 1) * res["rails"]),
           "", "false findings per night, mean (max) over the nights:"]
    for what, key in (("sweep blames (low after the retest)", "blames"),
                      ("server, against each link's history", "history"),
                      ("server, against the pinned baseline", "baseline")):
        kinds = sorted(rows[0][key])
        out.append("  %-38s total %s; %s" % (what, fmt_mm(rows, lambda r: sum(r[key].values())),
                                              ", ".join("%s %s" % (k, fmt_mm(rows, lambda r: r[key][k]))
                                                        for k in kinds)))
    out.append("  %-38s %s" % ("persistent findings (streak >= 2: alert)", fmt_mm(rows, lambda r: r["persistent_findings"])))
    out.append("  %-38s %s" % ("persistent blames (streak >= 2)", fmt_mm(rows, lambda r: r["persistent_blames"])))
    drained = res["drained_nodes"]
    refused = sum(1 for r in rows if r["refused"])
    out.append("false drains in %d nights: %d node(s)%s; plans refused by the 25 %% guard: %d" %
               (len(rows), len(drained), " (%s)" % ", ".join(drained[:8]) if drained else "", refused))
    out.append("")
    out.append("one link dropped (a random matching per rail, %d trials per drop):" %
               next(iter(det.values()))["trials"])
    out.append("  drop    caught night 1 (by a blame / by a regression)   caught by night 2")
    for d in sorted(det, key=float):
        x = det[d]
        t = max(x["trials"], 1)
        out.append("  %4.0f %%  %6.1f %% (%5.1f %% / %5.1f %%)                  %6.1f %%" %
                   (100 * float(d), 100 * x["night1"] / t, 100 * x["night1_blame"] / t,
                    100 * x["night1_regression"] / t, 100 * x["by_night2"] / t))
    s1, s2 = smallest(det, "night1"), smallest(det, "by_night2")
    out.append("smallest drop caught with >= 95 %% probability: within one night %s, within two nights %s" %
               ("%.0f %%" % (100 * s1) if s1 else "none of the grid",
                "%.0f %%" % (100 * s2) if s2 else "none of the grid"))
    return out, {"drains": len(drained), "nights": len(rows), "s1": s1, "s2": s2, "det": det}


def plot(results, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, res in results:
        rows = res["nights"]
        nights = range(1, len(rows) + 1)
        a.semilogy(nights, [max(sum(r["history"].values()), 0.5) for r in rows], "-o", ms=3,
                   label="%s: vs history" % label)
        a.semilogy(nights, [max(sum(r["blames"].values()), 0.5) for r in rows], "--", label="%s: blames" % label)
        a.semilogy(nights, [max(r["persistent_findings"], 0.5) for r in rows], ":", label="%s: streak >= 2" % label)
        det = res["detect"]
        ds = sorted(det, key=float)
        b.plot([100 * float(d) for d in ds], [det[d]["night1"] / max(det[d]["trials"], 1) for d in ds], "-o",
               ms=3, label="%s: night 1" % label)
        b.plot([100 * float(d) for d in ds], [det[d]["by_night2"] / max(det[d]["trials"], 1) for d in ds], "--",
               label="%s: by night 2" % label)
    a.set_xlabel("night")
    a.set_ylabel("false findings (0 drawn at 0.5)")
    a.set_title("false findings, 1,024 nodes x 8 rails")
    a.legend(fontsize=7)
    b.axhline(0.95, color="grey", lw=0.8)
    b.set_xlabel("one link's drop (%)")
    b.set_ylabel("P(named as that link)")
    b.set_title("one dropped link caught")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)


def main(cells_csv, out, pairs, header):
    results = []
    for p in pairs:
        label, path = p.split("=", 1)
        with open(path) as f:
            results.append((label, json.load(f)))
    lines = list(header)
    lines.append("")
    lines.append("## the lab's noise, fitted per size from %s" % cells_csv)
    for size, m in sorted(noise_model.fit_csv(cells_csv).items()):
        lines.append("  %8d B: %s" % (size, m.describe()))
    summary = []
    for label, res in results:
        ls, s = model_lines(label, res)
        lines += ls
        summary.append((label, s))
    lines.append("")
    lines.append("## acceptance")
    for label, s in summary:
        d10 = s["det"].get("0.1")
        p10 = d10["by_night2"] / d10["trials"] if d10 and d10["trials"] else float("nan")
        lines.append("  %s: false drains in %d nights: %d; a 10 %% drop caught within two nights: %.1f %%" %
                     (label, s["nights"], s["drains"], 100 * p10))
    with open(out + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(results, out + ".png")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:], []))
