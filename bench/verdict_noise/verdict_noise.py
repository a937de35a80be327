#!/usr/bin/python3
"""bench/verdict_noise (issue 29, item 5): how often gdrbench's nightly verdicts cry wolf, and
what they catch, at the lab's measured noise and at a hardware-like noise.

  verdict_noise.py extract RUN_JSON...      every OK cell of the runs' matrices as CSV on stdout
                                            (sweep, rail, size_bytes, src, dst, gbps)
  verdict_noise.py fit CELLS_CSV            the noise model per size (noise_model.py)
  run_model.py ...                          one noise model's 30 nights of 1,024 nodes x 8 rails and
                                            its detection episodes (nightly_sim.py, the rules
                                            mirrored in rules.py) into a JSON file
  verdict_noise.py report CELLS_CSV OUT HEADER_FILE LABEL=RESULT.json...
                                            the fit per size, then per model the table, into
                                            OUT.txt (HEADER_FILE's lines first) and OUT.png
Run with Debian's /usr/bin/python3 (python3-numpy, python3-matplotlib: deploy/install-deps).
"""
import csv
import json
import sys


def extract(paths, out):
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["sweep", "rail", "size_bytes", "src", "dst", "gbps"])
    for k, path in enumerate(sorted(paths, key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0])), 1):
        with open(path) as f:
            run = json.load(f)
        for m in run["matrices"]:
            names = m["nodes"]
            for c in m.get("cells", []):
                if c.get("status") != "RESULT_STATUS_OK":
                    continue
                w.writerow([k, m.get("rail", 0), m["size_bytes"], names[c.get("src", 0)],
                            names[c.get("dst", 0)], "%.6g" % c["bw_avg_gbps"]])


def main(argv):
    if len(argv) >= 2 and argv[1] == "extract":
        extract(argv[2:], sys.stdout)
        return 0
    if len(argv) == 3 and argv[1] == "fit":
        import noise_model
        for size, model in sorted(noise_model.fit_csv(argv[2]).items()):
            print(size, model.describe())
        return 0
    if len(argv) >= 6 and argv[1] == "report":
        import report
        with open(argv[4]) as f:
            header = f.read().rstrip("\n").split("\n")
        return report.main(argv[2], argv[3], argv[5:], header)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
