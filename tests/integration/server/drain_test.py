#!/usr/bin/python3
"""SIGTERM on the real gdrbench-server while an upload is in flight (issue 12,
the server's drain): the upload finishes and is stored, a new upload is
refused at once (gRPC and HTTP), and the server exits 0 well within the
TimeoutStopSec of deploy/systemd/gdrbench-server.service.in. An upload that
never finishes is cancelled at --drain-seconds and nothing of it is stored.
The upload is held between its header and its cells by this client (a
grpcio generator waiting on an event), as a slow link would."""
import argparse
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

import serverlib as sl
from serverlib import check


def held_upload(run_pb2, controller_pb2, run, sent, release):
    """UploadRun's chunks, stopping after the header until `release`."""
    it = sl.chunks(run_pb2, controller_pb2, run)
    yield next(it)
    sent.set()
    release.wait(60)
    yield from it


def wait_log(server, text, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if text in open(server.log).read():
            return True
        time.sleep(0.05)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    unit = open(os.path.join(os.path.dirname(args.proto_dir), "deploy/systemd/gdrbench-server.service.in")).read()
    stop_limit = int(re.search(r"^TimeoutStopSec=(\d+)$", unit, re.M).group(1))
    sl.gen_stubs(args.proto_dir, work)
    import grpc
    from gdrbench.v1 import controller_pb2, controller_pb2_grpc, run_pb2, sweep_pb2
    db = os.path.join(work, "store.db")

    def start(name, drain):
        return sl.Server(args.bin_dir, work, ["--db", db, "--insecure", "--no-dashboard",
                                              "--drain-seconds", str(drain)], name=name)

    def stub(server):
        return controller_pb2_grpc.ControllerStub(grpc.insecure_channel(server.grpc))

    # 1. An upload in flight at SIGTERM finishes and is stored.
    server = start("drain1", 20)
    sent, release = threading.Event(), threading.Event()
    run = sl.make_run(run_pb2, sweep_pb2, "drain-in-flight", 0)
    call = stub(server).UploadRun.future(held_upload(run_pb2, controller_pb2, run, sent, release), timeout=60)
    check(sent.wait(10), "the held upload sent its header")
    time.sleep(0.3)  # read by the server: the call is in flight
    # Another upload does not wait behind the held one (issue 31: it did,
    # and SIGTERM then cancelled it): uploads stage outside the store's lock.
    t_beside = time.time()
    beside = stub(server).UploadRun(sl.chunks(run_pb2, controller_pb2, sl.make_run(run_pb2, sweep_pb2, "drain-beside", 3)),
                                    timeout=10)
    took = time.time() - t_beside
    check(beside.cells == 24 and took < 2, f"an upload beside the held one is stored in {took:.2f} s")
    t0 = time.time()
    server.proc.send_signal(signal.SIGTERM)
    check(wait_log(server, "draining: new calls refused; 1 gRPC upload(s) in flight"),
          "SIGTERM: the server says it drains one upload")
    try:
        stub(server).UploadRun(sl.chunks(run_pb2, controller_pb2, sl.make_run(run_pb2, sweep_pb2, "drain-new", 1)),
                               timeout=5)
        check(False, "a new gRPC upload during the drain was refused")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.UNAVAILABLE, f"a new gRPC upload during the drain is refused ({e.code()})")
    # Refused either way: the listener already closed (curl exit 7), or 503.
    curl = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                           "--data-binary", "{}", f"http://{server.http}/api/v1/runs"], capture_output=True, text=True)
    check(curl.returncode == 7 or curl.stdout == "503",
          f"a new HTTP upload during the drain is refused (curl exit {curl.returncode}, HTTP {curl.stdout})")
    # A slow link: the upload still runs 5 s after SIGTERM (the drain used
    # to give calls 3 s, then cancel them).
    time.sleep(max(0.0, 5 - (time.time() - t0)))
    release.set()
    up = call.result(timeout=30)
    check(up.run_id == "drain-in-flight" and up.cells == 24, f"the upload in flight finished: {up.cells} cells")
    rc = server.proc.wait(timeout=stop_limit)
    took = time.time() - t0
    check(rc == 0 and took < stop_limit, f"exit {rc} {took:.1f} s after SIGTERM (TimeoutStopSec={stop_limit})")
    check(wait_log(server, "drained in"), "the drain's end is one line")

    # 2. One that never finishes is cancelled at --drain-seconds; nothing stored.
    server = start("drain2", 2)
    got = stub(server).GetRun(controller_pb2.GetRunRequest(run_id="drain-in-flight"), timeout=10)
    check(len(got.matrices) == 2, "after a restart the drained upload is in the store")
    got = stub(server).GetRun(controller_pb2.GetRunRequest(run_id="drain-beside"), timeout=10)
    check(len(got.matrices) == 2, "and the one stored beside it")
    sent, release = threading.Event(), threading.Event()
    stuck = sl.make_run(run_pb2, sweep_pb2, "drain-stuck", 2)
    call = stub(server).UploadRun.future(held_upload(run_pb2, controller_pb2, stuck, sent, release), timeout=60)
    check(sent.wait(10), "the second held upload sent its header")
    time.sleep(0.3)
    t0 = time.time()
    server.proc.send_signal(signal.SIGTERM)
    rc = server.proc.wait(timeout=stop_limit)
    took = time.time() - t0
    release.set()
    check(rc == 0 and 1.5 < took < 6, f"an upload that never ends: exit {rc} after {took:.1f} s (--drain-seconds 2)")
    check("were cancelled" in open(server.log).read(), "the log says calls were cancelled at the deadline")
    try:
        call.result(timeout=10)
        check(False, "the stuck upload failed")
    except grpc.RpcError as e:
        check(True, f"the stuck upload failed ({e.code()})")
    server = start("drain3", 2)
    try:
        stub(server).GetRun(controller_pb2.GetRunRequest(run_id="drain-stuck"), timeout=10)
        check(False, "nothing of the cancelled upload is stored")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.NOT_FOUND, f"nothing of the cancelled upload is stored ({e.code()})")
    check(server.stop() == 0, "an idle server stops at once")


if __name__ == "__main__":
    main()
