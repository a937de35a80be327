#!/usr/bin/env python3
"""Checks a `gdrbench pair --json` result for the data path lab tests.

usage: datapath_check.py RESULT.json KEY=VALUE...
  sizes=N          exactly N sizes, all RESULT_STATUS_OK with bw_avg_gbps > 0
  verified=1       every size verified
  reverse=N        N reverse sizes (bidirectional), all OK with bandwidth
  reverse_verified=1  every reverse size verified (by the initiator)
  qps=N            the summary names N QPs and each size ran a multiple of N WRs
  min_ns=X max_ns=Y  every size's duration_ns within [X, Y]
  cm=oob|rdma_cm   the summary says the QPs were connected that way
  latency=1        a write_lat result: every size has t_min <= typical <= p99 <= p99.9 <= max > 0
Prints one line per size, then "ok ..." or one "FAIL: ..." line (exit 1).
"""
import json
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_latency(sizes, want):
    if "sizes" in want and len(sizes) != int(want["sizes"]):
        fail(f"{len(sizes)} sizes, expected {want['sizes']}")
    for s in sizes:
        lat = s.get("latency", {})
        keys = ("t_min_us", "t_typical_us", "p99_us", "p999_us", "t_max_us")
        v = [float(lat.get(k, 0)) for k in keys]
        print(f"  {int(s['size_bytes']):>8} B  {int(s.get('iterations', 0)):>6} exchanges  "
              + "  ".join(f"{k[:-3]} {x:.2f}" for k, x in zip(keys, v))
              + f"  avg {float(lat.get('t_avg_us', 0)):.2f} us")
        if s.get("status") != "RESULT_STATUS_OK":
            fail(f"size {s['size_bytes']}: {s.get('status')} {s.get('error', '')}")
        if not (0 < v[0] <= v[1] <= v[2] <= v[3] <= v[4]):
            fail(f"size {s['size_bytes']}: latency statistics out of order: {lat}")
        if "ib_write_lat" not in s.get("perftest_command", ""):
            fail(f"size {s['size_bytes']}: no ib_write_lat command line")
    print(f"ok: {len(sizes)} write_lat sizes")


def main():
    result = json.load(open(sys.argv[1]))
    want = dict(a.split("=", 1) for a in sys.argv[2:])
    if result.get("status") != "RESULT_STATUS_OK":
        fail(f"pair status {result.get('status')}: {result.get('reason')}")
    summary = result.get("summary", {})
    sizes = result.get("sizes", [])
    if "cm" in want:
        got = summary.get("cm", "CONNECTION_MODE_AUTO")
        if got != "CONNECTION_MODE_" + want["cm"].upper():
            fail(f"connected by {got}, expected {want['cm']}")
    if want.get("latency") == "1":
        check_latency(sizes, want)
        return
    for s in sizes:
        print(f"  {int(s['size_bytes']):>8} B  {int(s.get('iterations', 0)):>6} WRs  "
              f"avg {s.get('bw_avg_gbps', 0):.4f} Gb/s  peak {s.get('bw_peak_gbps', 0):.4f}  "
              f"{int(s.get('duration_ns', 0)) / 1e9:.3f} s  verified={s.get('verified', False)}")
    if "sizes" in want and len(sizes) != int(want["sizes"]):
        fail(f"{len(sizes)} sizes, expected {want['sizes']}")
    for s in sizes:
        if s.get("status") != "RESULT_STATUS_OK" or not s.get("bw_avg_gbps", 0) > 0:
            fail(f"size {s['size_bytes']}: {s.get('status')} {s.get('error', '')}")
        if float(s.get("bw_peak_gbps", 0)) < float(s["bw_avg_gbps"]):
            fail(f"size {s['size_bytes']}: peak below average")
        if want.get("verified") == "1" and not s.get("verified"):
            fail(f"size {s['size_bytes']} not verified")
        if "qps" in want and int(s["iterations"]) % int(want["qps"]) != 0:
            fail(f"size {s['size_bytes']}: {s['iterations']} WRs is not a multiple of the QPs")
        ns = int(s.get("duration_ns", 0))
        if "min_ns" in want and ns < int(want["min_ns"]):
            fail(f"size {s['size_bytes']} ran {ns} ns < {want['min_ns']}")
        if "max_ns" in want and ns > int(want["max_ns"]):
            fail(f"size {s['size_bytes']} ran {ns} ns > {want['max_ns']}")
    if "qps" in want and int(summary.get("qps", 0)) != int(want["qps"]):
        fail(f"summary has {summary.get('qps')} QPs, expected {want['qps']}")
    if "reverse" in want:
        rev = result.get("reverse_sizes", [])
        if len(rev) != int(want["reverse"]):
            fail(f"{len(rev)} reverse sizes, expected {want['reverse']}")
        for s in rev:
            print(f"  reverse {int(s['size_bytes']):>8} B  avg {s.get('bw_avg_gbps', 0):.4f} Gb/s  "
                  f"verified={s.get('verified', False)}")
            if s.get("status") != "RESULT_STATUS_OK" or not s.get("bw_avg_gbps", 0) > 0:
                fail(f"reverse size {s['size_bytes']}: {s.get('status')} {s.get('error', '')}")
            if want.get("reverse_verified") == "1" and not s.get("verified"):
                fail(f"reverse size {s['size_bytes']} not verified")
    for key in ("memory_kind", "registration", "gid_type"):
        if not summary.get(key):
            fail(f"summary lacks {key}")
    print(f"ok: {len(sizes)} sizes, memory {summary['memory_kind']} ({summary['registration']}), "
          f"GID index {summary.get('gid_index', 0)} ({summary['gid_type']}), "
          f"MTU {summary.get('path_mtu_bytes')}, {summary.get('local_address')} -> "
          f"{summary.get('remote_address')}")


main()
