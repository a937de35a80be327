#!/usr/bin/python3
"""One model's nights (nightly_sim.run) into a JSON file, logging each night to stderr.
  run_model.py lab CELLS_CSV SIZE OUT.json [nights episodes]
  run_model.py normal SD OUT.json [nights episodes]      (hardware-like: Normal cell noise, sd SD)
RETEST_REGRESSED=1 in the environment: the what-if of nightly_sim.Cluster (a regressed cell
measured again and judged on the better of its two readings; not in gdrbench yet).
"""
import os
import json
import sys
import time

import nightly_sim
import noise_model


def main(argv):
    if argv[1] == "lab":
        model = noise_model.fit_csv(argv[2])[int(argv[3])]
        model.source = "lab %s, %s B" % (argv[2], argv[3])
        out, rest = argv[4], argv[5:]
    elif argv[1] == "normal":
        model = noise_model.NoiseModel(0.0, 0.0, 1000.0, float(argv[2]), source="normal sd %s" % argv[2])
        out, rest = argv[3], argv[4:]
    else:
        print(__doc__, file=sys.stderr)
        return 2
    nights, episodes = (int(rest[0]), int(rest[1])) if rest else (30, 5)
    t0 = time.time()
    log = lambda m: print("[%.0fs] %s" % (time.time() - t0, m), file=sys.stderr, flush=True)
    log("model: %s: %s" % (model.source, model.describe()))
    what_if = os.environ.get("RETEST_REGRESSED") == "1"
    res = nightly_sim.run(model, nights=nights, episodes=episodes, log=log, retest_regressed=what_if)
    res["retest_regressed"] = what_if
    res["model"] = {"source": model.source, "describe": model.describe(), "link_sd": model.link_sd,
                    "night_sd": model.night_sd, "node_sd": model.node_sd, "df": model.df, "scale": model.scale,
                    "history_noise": model.cell_mad_fraction()}
    res["seconds"] = time.time() - t0
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
