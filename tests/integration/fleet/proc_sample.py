#!/usr/bin/python3
"""Samples one process from /proc until it exits: the most threads, open fds
and TCP sockets it held at once, its peak RSS (VmHWM) and its CPU seconds
(utime + stime at the last sample). Prints one line of key=value.

    proc_sample.py PID [--interval 0.1]
"""
import argparse
import os
import sys
import time


def read_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15)


def count_fds(pid):
    fds = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                sockets += 1
        except OSError:
            pass  # closed between the listing and the readlink
    return fds, sockets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--interval", type=float, default=0.1)
    a = ap.parse_args()
    peak = {"threads": 0, "fds": 0, "sockets": 0, "hwm_kb": 0, "cpu_s": 0.0}
    samples = 0
    while True:
        try:
            st = read_status(a.pid)
            if st.get("State", "").startswith("Z"):
                break
            fds, sockets = count_fds(a.pid)
            peak["cpu_s"] = cpu_seconds(a.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        peak["threads"] = max(peak["threads"], int(st.get("Threads", "0")))
        peak["fds"] = max(peak["fds"], fds)
        peak["sockets"] = max(peak["sockets"], sockets)
        peak["hwm_kb"] = max(peak["hwm_kb"], int(st.get("VmHWM", "0 kB").split()[0]))
        samples += 1
        time.sleep(a.interval)
    print(" ".join(f"{k}={v}" for k, v in peak.items()) + f" samples={samples}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
