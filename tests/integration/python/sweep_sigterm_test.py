#!/usr/bin/python3
"""SIGTERM on a running `gdrbench sweep` (issue 12, item 8), as systemd or
Slurm send it: the sweep stops after the tests in flight, prints the command
that resumes it, exits 128+15, and its journal resumes the run to the end.

One real gdrbench-agent on 0.0.0.0 is reached as 12 nodes at 127.0.0.1..12
(this host has no RDMA: every test is an ERR cell, each a few ms, still a
run). To stop the sweep deterministically mid-way, its stderr is a pipe of
one page (F_SETPIPE_SZ) that this test does not read until the signal is
sent: after a few dozen progress lines the sweep blocks writing them, as
behind a stalled `tee`, so it cannot end before SIGTERM arrives.

First, SIGTERM while the sweep is still probing its agents (12 addresses
that accept TCP and never answer, asked two at a time: 6 rounds of the
connect timeout): it stops asking, says that nothing ran and that there is
nothing to resume (no journal exists yet), and exits 128+15 within one
round, not after all six."""
import argparse
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import time

NODES = 12  # 132 tests one way; a page of progress lines is ~30 of them


def fail(msg):
    sys.exit("FAIL: " + msg)


def start_agent(bin_dir, work):
    pf = os.path.join(work, "agent.port")
    agent = subprocess.Popen([os.path.join(bin_dir, "gdrbench-agent"), "--insecure", "--listen", "0.0.0.0:0",
                              "--port-file", pf], stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while not os.path.exists(pf):
        if agent.poll() is not None or time.time() > deadline:
            fail("the agent did not start")
        time.sleep(0.05)
    return agent, open(pf).read().strip()


def write_inventory(path, port, prefix):
    """NODES nodes at 127.0.0.1..NODES, one port: each node its own address."""
    with open(path, "w") as f:
        f.write("tls: {insecure: true}\nrails:\n  - {nic: none0}\nnodes:\n")
        for i in range(NODES):
            f.write(f"  - {{name: {prefix}{i:02d}, address: '127.0.0.{i + 1}:{port}'}}\n")


def queued(fd):
    """Bytes written to the pipe and not yet read."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def probe_phase(gdrbench, work):
    """SIGTERM during the probe: no --resume hint for a journal that does not exist."""
    silent = socket.socket()
    silent.bind(("0.0.0.0", 0))
    silent.listen(64)  # the kernel completes the handshakes; nobody speaks HTTP/2
    silent.setblocking(False)
    port = silent.getsockname()[1]
    inv = os.path.join(work, "silent.yaml")
    write_inventory(inv, port, "s")
    out = os.path.join(work, "probe-run")
    sweep = subprocess.Popen([gdrbench, "sweep", "--inventory", inv, "--no-preflight", "--parallel", "2",
                              "--retries", "0", "--sizes", "64K", "--out", out, "--progress", "lines"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.time() + 30
    while True:  # the sweep is probing once it has connected
        try:
            conn, _ = silent.accept()
            break
        except BlockingIOError:
            pass
        if sweep.poll() is not None:
            fail(f"the sweep ended (exit {sweep.returncode}) before it probed: {sweep.stderr.read()[-2000:]}")
        if time.time() > deadline:
            fail("the sweep did not connect to its first agent within 30 s")
        time.sleep(0.02)
    sent = time.time()
    sweep.send_signal(signal.SIGTERM)
    try:
        _, err = sweep.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sweep.kill()
        fail("the sweep did not exit within 60 s of SIGTERM in its probe")
    took = time.time() - sent
    conn.close()
    silent.close()
    last_line = err.strip().splitlines()[-1] if err.strip() else ""
    if sweep.returncode != 128 + signal.SIGTERM:
        fail(f"exit {sweep.returncode} after SIGTERM in the probe, expected {128 + signal.SIGTERM}: {last_line}")
    if "--resume" in last_line or os.path.exists(os.path.join(out, "journal.bin")):
        fail("cancelled in the probe, the sweep offers a journal to resume: " + last_line)
    if "nothing to resume" not in last_line or "probing" not in last_line:
        fail("the last line does not say the sweep stopped in its probe with nothing to resume: " + last_line)
    # One round of connect timeouts (3 s, 2 s more for the TLS probe), not six.
    if took > 12:
        fail(f"the sweep took {took:.1f} s to stop after SIGTERM in its probe: it went on asking agents")
    print(f"ok: SIGTERM in the probe -> exit {sweep.returncode} after {took:.1f} s, '{last_line}'")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    agent = None
    try:
        agent, port = start_agent(args.bin_dir, work)
        inv = os.path.join(work, "inv.yaml")
        write_inventory(inv, port, "n")
        out = os.path.join(work, "run")
        journal = os.path.join(out, "journal.bin")
        gdrbench = os.path.join(args.bin_dir, "gdrbench")
        probe_phase(gdrbench, work)
        common = ["--inventory", inv, "--no-preflight", "--parallel", "4", "--retries", "0", "--sizes", "64K"]

        r, w = os.pipe()
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
        sweep = subprocess.Popen([gdrbench, "sweep"] + common + ["--out", out, "--progress", "lines"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=w)
        os.close(w)
        # The sweep cannot finish without this test reading: 132 result lines
        # are far more than the page. Once a kilobyte of them waits in the
        # pipe, tests are done and the sweep is at most a few lines from
        # blocking: SIGTERM now is mid-way, whatever the machine's load.
        deadline = time.time() + 60
        while queued(r) < 1024:
            if sweep.poll() is not None:
                fail(f"the sweep ended (exit {sweep.returncode}) before it was interrupted")
            if time.time() > deadline:
                fail("no test finished within 60 s")
            time.sleep(0.05)
        sweep.send_signal(signal.SIGTERM)
        err = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            err += chunk
        os.close(r)
        rc = sweep.wait(timeout=30)
        err = err.decode(errors="replace")
        last_line = err.strip().splitlines()[-1]
        if rc != 128 + signal.SIGTERM:
            fail(f"exit {rc} after SIGTERM, expected {128 + signal.SIGTERM}: {last_line}")
        if f"continue with --resume {journal}" not in last_line:
            fail("the last line does not say how to resume: " + last_line)
        if "cancelled after" not in last_line:
            fail("the last line does not say what was done: " + last_line)
        if os.path.exists(os.path.join(out, "run.json")):
            fail("an interrupted sweep wrote run.json as if it had finished")

        # The journal resumes the run: only the rest is tested, the run id is kept.
        resumed = subprocess.run([gdrbench, "sweep"] + common + ["--out", out, "--resume", journal,
                                                                  "--progress", "json"],
                                 stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        progress = [json.loads(line) for line in resumed.stderr.splitlines() if line.startswith("{")]
        if resumed.returncode != 1 or not progress:  # 1: every cell is ERR here, the run did not pass
            fail(f"resume exit {resumed.returncode}: {resumed.stderr[-2000:]}")
        done = progress[-1]
        total = NODES * (NODES - 1)
        if done["tests_total"] != total or done["tests_done"] != total:
            fail(f"resume did not finish the plan: {done}")
        if not 0 < done["tests_resumed"] < total:
            fail(f"resume took {done['tests_resumed']} tests from the journal, expected some, not all")
        run = json.load(open(os.path.join(out, "run.json")))
        if len(run.get("pairs", [])) != total:
            fail(f"run.json has {len(run.get('pairs', []))} pairs, expected {total}")
        print(f"ok: SIGTERM -> exit {rc}, '{last_line}'; resume took {done['tests_resumed']} of {total} "
              "tests from the journal and ran the rest")
    finally:
        if agent is not None:
            agent.terminate()
            agent.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
