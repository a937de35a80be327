#!/usr/bin/python3
"""gdrbench-server's HTTP side against hostile clients (issue 31): slow
clients, big and chunked bodies without a token, header floods, bad
Content-Length, too many connections from one address. While 300 slow
connections and a 1 GiB chunked unauthenticated body are in flight,
/healthz and an authorised upload must answer within 2 s and the server's
RSS stay under 300 MB above idle.

Everything is on loopback: the slow clients come from 127.0.0.2-11 (30 each,
under the per-address limit), the legitimate client from 127.0.0.1. Every
loop is bounded in count and time; the whole script takes about 20 s."""
import argparse
import http.client
import json
import os
import socket
import tempfile
import threading
import time

import serverlib as sl
from serverlib import check

MB = 1 << 20


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


class RssPeak:
    """The highest VmRSS of `pid`, sampled every `period` s until stop()."""

    def __init__(self, pid, period=0.1):
        self.pid, self.idle = pid, rss_mb(pid)
        self.peak = self.idle
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(period,), daemon=True)
        self.thread.start()

    def run(self, period):
        while not self.done.wait(period):
            self.peak = max(self.peak, rss_mb(self.pid))

    def stop(self):
        """Stops sampling; returns the peak's growth over the start, in MB."""
        self.done.set()
        self.thread.join()
        return self.peak - self.idle


def connect(port, source="127.0.0.1", timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def status_of(s, seconds=3):
    """The status code of the answer on socket s (0: none: closed or timed out)."""
    s.settimeout(seconds)
    data = b""
    try:
        while b"\r\n" not in data and len(data) < 4096:
            got = s.recv(4096)
            if not got:
                break
            data += got
    except (socket.timeout, ConnectionError):
        pass
    parts = data.split(b" ", 2)
    return int(parts[1]) if len(parts) >= 2 and parts[0].startswith(b"HTTP/1.") else 0


def raw(port, request, source="127.0.0.1"):
    """Sends `request` bytes from one thread while this one reads the
    answer (a server that answers early and closes may reset the rest);
    returns (status, seconds to the answer)."""
    t0 = time.time()
    s = connect(port, source)

    def send():
        try:
            s.sendall(request)
        except OSError:
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    code = status_of(s)
    took = time.time() - t0
    try:
        s.shutdown(socket.SHUT_RDWR)  # ends the sender's sendall
    except OSError:
        pass  # the server closed it already
    sender.join(5)
    s.close()
    return code, took


def timed_get(port, path, token=None, body=None, method="GET"):
    """(status, seconds) of one request from 127.0.0.1 (status 0: no answer in 10 s)."""
    t0 = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.1", 0))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        r.read()
        return r.status, time.time() - t0
    except (OSError, http.client.HTTPException):
        return 0, time.time() - t0
    finally:
        c.close()


def streamed_upload(port, pid, write, run_pb2, sweep_pb2, json_format, mib=64):
    """An authorised upload of a ~64 MiB run.json: the server streams it into the ingest
    (server/api/run_json_stream.h), so its RSS grows by a fraction of the body, not by
    the 7x of holding the text and the parsed run (issue 31, finding 12: 250 MiB of JSON
    peaked at 1,845 MiB). The body is the lab-sized run of serverlib.make_run with every
    pair given 24 sizes, its pairs repeated under new node names up to the size."""
    run = sl.make_run(run_pb2, sweep_pb2, "streamed-1", 9, nodes=4)
    for p in run.pairs:
        for k in range(24):
            p.sizes.add(size_bytes=4096 << (k % 16), iterations=1000, bw_peak_gbps=390.5, bw_avg_gbps=376.25,
                        msg_rate_mpps=11.48, duration_ns=123456789, status=sweep_pb2.RESULT_STATUS_OK,
                        perftest_command="ib_write_bw -d mlx5_0 -x 3 -s 65536 -n 1000 -F --report_gbits")
    whole = json.loads(json_format.MessageToJson(run))
    one = [json.dumps(p) for p in whole["pairs"]]
    pair_bytes = sum(len(x) for x in one) // len(one)
    n = (mib << 20) // pair_bytes
    pairs = ",".join(one[i % len(one)] for i in range(n))
    whole["pairs"] = []
    head = json.dumps(whole)
    body = (head[:-1] + ', "pairs": [' + pairs + "]}").encode() if head.endswith("}") else None
    rss = RssPeak(pid, 0.05)
    t0 = time.time()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/api/v1/runs", body=body,
              headers={"Authorization": f"Bearer {write}", "Content-Type": "application/json"})
    r = c.getresponse()
    answer = r.read()
    took = time.time() - t0
    c.close()
    grew = rss.stop()
    size_mb = len(body) / MB
    print(f"streamed upload of {size_mb:.0f} MiB ({n} pairs): {r.status} in {took:.1f} s, RSS {grew:+.1f} MB")
    check(r.status == 201 and f'"pairs": "{n}"' in answer.decode().replace('"pairs":"', '"pairs": "'),
          f"a {size_mb:.0f} MiB run stored whole ({r.status}: {answer[:200]!r})")
    check(grew < size_mb / 2, f"RSS grew {grew:.1f} MB for a {size_mb:.0f} MiB body: under half the body")


class SlowClients:
    """n connections sending a request's headers one byte a second."""

    def __init__(self, port, n, sources):
        self.socks = []
        for i in range(n):
            s = connect(port, sources[i % len(sources)])
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            s.setblocking(False)
            self.socks.append(s)
        self.closed_by_server = self.answers_408 = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        for _ in range(30):  # at most 30 s
            if self.stop.wait(1.0):
                return
            for s in list(self.socks):
                try:
                    got = s.recv(4096)  # the server answered (408) or closed
                    self.answers_408 += got.startswith(b"HTTP/1.1 408")
                    self.socks.remove(s)
                    self.closed_by_server += 1
                    s.close()
                    continue
                except BlockingIOError:
                    pass
                except OSError:
                    self.socks.remove(s)
                    self.closed_by_server += 1
                    s.close()
                    continue
                try:
                    s.send(b"a")
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()


class ChunkedFlood:
    """POST /api/v1/runs without a token, chunked, up to 1 GiB, as fast as
    the server takes it; records what was sent and the answer."""

    def __init__(self, port, source):
        self.sent, self.status, self.seconds = 0, 0, None
        self.s = connect(port, source)
        self.thread = threading.Thread(target=self.run, args=(port,), daemon=True)
        self.thread.start()

    def run(self, port):
        t0 = time.time()
        reader = threading.Thread(target=self.read, daemon=True)
        reader.start()
        chunk = b"%x\r\n" % MB + b"{" * MB + b"\r\n"
        try:
            self.s.sendall(b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                           b"Content-Type: application/json\r\n\r\n")
            while self.sent < 1024 * MB and time.time() - t0 < 20:
                self.s.sendall(chunk)
                self.sent += MB
        except OSError:
            pass
        reader.join(5)
        self.seconds = time.time() - t0
        self.s.close()

    def read(self):
        self.status = status_of(self.s, 20)


def held_upload(run_pb2, controller_pb2, run, sent, release):
    """UploadRun's chunks, stopping after the header until `release`."""
    it = sl.chunks(run_pb2, controller_pb2, run)
    yield next(it)
    sent.set()
    release.wait(30)
    yield from it


def tarpit():
    """A loopback listener that accepts and never answers (an agent that
    hangs): the first sweep waits on it while the queue floods."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    held = []

    def accept():
        while len(held) < 64:
            try:
                held.append(ls.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return ls, ls.getsockname()[1]


def stalled_grpc_upload(server, write, run_pb2, sweep_pb2, controller_pb2, controller_pb2_grpc, json_format, port):
    """An UploadRun that sends its header and goes quiet delays no other
    write, and is ended after --upload-idle-seconds (3 here)."""
    import grpc
    stub = controller_pb2_grpc.ControllerStub(grpc.insecure_channel(server.grpc))
    md = [("authorization", f"Bearer {write}")]
    sent, release = threading.Event(), threading.Event()
    t_stall = time.time()
    stalled = stub.UploadRun.future(
        held_upload(run_pb2, controller_pb2, sl.make_run(run_pb2, sweep_pb2, "stalled", 1), sent, release),
        timeout=30, metadata=md)
    check(sent.wait(5), "the stalled upload sent its header")
    time.sleep(0.3)
    t0 = time.time()
    stub.UploadRun(sl.chunks(run_pb2, controller_pb2, sl.make_run(run_pb2, sweep_pb2, "beside-stall", 2)),
                   timeout=5, metadata=md)
    took = time.time() - t0
    check(took < 2, f"a gRPC upload beside the stalled one: {took:.2f} s")
    code, took = timed_get(port, "/api/v1/runs", token=write, method="POST",
                           body=json_format.MessageToJson(sl.make_run(run_pb2, sweep_pb2, "http-beside-stall", 3)))
    check(code == 201 and took < 2, f"an HTTP upload beside the stalled one: {code} in {took:.2f} s")
    code, took = timed_get(port, "/api/v1/clusters/lab/baseline", token=write, method="PUT",
                           body='{"runId": "beside-stall"}')
    check(code == 200 and took < 2, f"a baseline PUT beside the stalled one: {code} in {took:.2f} s")
    try:
        stalled.result(timeout=10)
        check(False, "the stalled upload was ended")
    except grpc.RpcError as e:
        # The server cancels the call (gRPC's sync API cannot end a blocked
        # read otherwise): the client sees CANCELLED, the server's log says why.
        took = time.time() - t_stall
        check(e.code() == grpc.StatusCode.CANCELLED and 2.5 < took < 6,
              f"the stalled upload was ended after {took:.1f} s: {e.code()} {e.details()}")
    check("ended: no chunk for 3 s, nothing stored" in open(server.log).read(), "the server logs why it ended it")
    release.set()
    code, _ = timed_get(port, "/api/v1/runs/stalled", token=write)
    check(code == 404, f"nothing of the stalled upload is stored ({code})")


def queue_flood(port, write):
    """1,000 sweep requests for one cluster: equal ones merge, at most
    --max-queued-sweeps (4) wait, the rest get 429."""
    codes, jobs = {}, set()
    t0 = time.time()
    for i in range(1000):
        iterations = 100 + (i % 20) if i % 2 else 100  # half one spec, half 10 others
        body = f'{{"cluster": "lab", "spec": {{"iterations": "{iterations}", "noPreflight": true}}}}'
        code, data = post_json(port, "/api/v1/sweeps", write, body)
        codes[code] = codes.get(code, 0) + 1
        if code == 202:
            jobs.add(json.loads(data)["jobId"])
    t_flood = time.time() - t0
    check(set(codes) <= {202, 429} and codes.get(429, 0) >= 300,
          f"1,000 sweep requests in {t_flood:.1f} s: {codes} (202: queued or merged with an equal queued one; "
          "429: the queue is full)")
    # At any moment one runs and at most 4 wait; each sweep against the tarpits
    # ends at the agents' connect timeout (3 s), so a flood slower than that
    # (a loaded host) sees one more job for each that ended meanwhile.
    ended = sum(1 for job in jobs if sweep_job(port, write, job).get("finishedAt"))
    check(len(jobs) <= 5 + ended, f"{len(jobs)} distinct sweep jobs ({ended} ended during the flood)")
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics", headers={"Authorization": f"Bearer {write}"})
    r = c.getresponse()
    text = r.read().decode()
    queued = [line for line in text.splitlines() if line.startswith('gdrbench_sweeps_queued{cluster="lab"}')]
    check(queued and float(queued[0].split()[-1]) <= 4, f"/metrics: {queued}")
    return jobs


def post_json(port, path, token, body):
    """(status, body) of one POST from 127.0.0.1; (0, error) when it got no answer in 10 s."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.0.0.1", 0))
    try:
        c.request("POST", path, body=body,
                  headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException) as e:
        return 0, str(e).encode()
    finally:
        c.close()


def sweep_job(port, token, job):
    """GET /api/v1/sweeps/JOB as a dict ({} when not answered 200)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", f"/api/v1/sweeps/{job}", headers={"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        data = r.read()
        return json.loads(data) if r.status == 200 else {}
    finally:
        c.close()


def event_stream_cap(port, token, jobs, cap=64):
    """Server-sent event streams of a sweep that is not over (queued behind
    one the tarpits hold): 64 stay open at once (the default --http limit,
    http_gate.h), spread over 4 client addresses; the 65th is refused with 429 naming the limit and
    holds no thread; once one closes, a new one is served."""
    # The job queued last outlives the stage: it waits for those ahead of it,
    # each held by the tarpits up to the agents' connect timeout, then runs.
    waiting = [(int(j.get("queuePosition", 0)), job) for job in jobs
               for j in [sweep_job(port, token, job)] if j.get("state") == "SWEEP_STATE_QUEUED"]
    running = max(waiting)[1] if waiting else None
    check(running is not None, f"a queued sweep to watch among {len(jobs)} jobs")
    request = (f"GET /api/v1/sweeps/{running}/events HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode()

    def open_stream(source):
        s = connect(port, source)
        s.sendall(request)
        return s, status_of(s)

    streams = [open_stream(f"127.0.0.{30 + i % 4}") for i in range(cap)]
    served = sum(1 for _, code in streams if code == 200)
    check(served == cap, f"{cap} event streams open at once: {served} answered 200")
    s, code = open_stream("127.0.0.40")
    s.close()
    check(code == 429, f"the event stream past {cap}: {code} (expected 429)")
    code, took = timed_get(port, "/healthz")
    check(code == 200 and took < 2, f"/healthz with {cap} event streams open ({took:.2f} s)")
    streams[0][0].close()
    deadline = time.time() + 5
    code = 0
    while time.time() < deadline and code != 200:
        s, code = open_stream("127.0.0.41")
        if code != 200:
            s.close()
            time.sleep(0.2)
    check(code == 200, f"after one closed, a new event stream is served ({code})")
    s.close()
    for st, _ in streams[1:]:
        st.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    sl.gen_stubs(args.proto_dir, work)
    from google.protobuf import json_format
    from gdrbench.v1 import controller_pb2, controller_pb2_grpc, run_pb2, sweep_pb2
    pits = [tarpit(), tarpit()]
    inv = os.path.join(work, "inv.yaml")
    with open(inv, "w") as f:
        f.write("tls: {insecure: true}\nrails:\n  - {nic: none0, gpu: 0}\nnodes:\n")
        for i, (_, pit_port) in enumerate(pits):
            f.write(f"  - {{name: a{i}, address: '127.0.0.1:{pit_port}'}}\n")
    server = sl.Server(args.bin_dir, work, ["--db", os.path.join(work, "store.db"), "--insecure", "--no-dashboard",
                                            "--tokens", sl.write_tokens(work), "--cluster", f"lab={inv}",
                                            "--state-dir", os.path.join(work, "state"), "--max-queued-sweeps", "4",
                                            "--upload-idle-seconds", "3"], name="hostile")
    port = int(server.http.rsplit(":", 1)[1])
    pid = server.proc.pid
    write = sl.TOKENS["write"]
    try:
        check(timed_get(port, "/healthz")[0] == 200, "the server answers /healthz")
        idle = rss_mb(pid)
        print(f"idle RSS {idle:.1f} MB")

        # Bad framing and refused bodies: answered at once, nothing read.
        code, took = raw(port, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                               b"Content-Length: 6\r\nAuthorization: Bearer " + write.encode() + b"\r\n\r\nhello")
        check(code == 400 and took < 2, f"two different Content-Length values: 400 ({code}, {took:.2f} s)")
        code, took = raw(port, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n")
        check(code == 400 and took < 2, f"Content-Length -1: 400 at once ({code}, {took:.2f} s)")
        code, took = raw(port, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n"
                               b"Authorization: Bearer " + write.encode() + b"\r\n\r\n")
        check(code == 413 and took < 2, f"Content-Length 1 GiB with a write token: 413 unread ({code}, {took:.2f} s)")
        code, took = raw(port, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 262144000\r\n\r\n")
        check(code == 401 and took < 2, f"250 MiB without a token: 401 before the body ({code}, {took:.2f} s)")
        code, took = raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                               + b"%x\r\n" % MB + b"x" * MB + b"\r\n")
        check(code == 413 and took < 2, f"a chunked body to GET /healthz: 413 unread ({code}, {took:.2f} s)")
        code, _ = raw(port, b"POST /api/v1/sweeps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                            b"Authorization: Bearer " + write.encode() + b"\r\n\r\n"
                            + (b"%x\r\n" % (256 << 10) + b" " * (256 << 10) + b"\r\n") * 8 + b"0\r\n\r\n")
        check(code == 413, f"a 2 MiB chunked body to a 1 MiB route with a write token: 413 ({code})")

        # Header floods: cut at 100 fields or 64 KiB, answered 431.
        flood = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 500_000 + b"\r\n"
        code, took = raw(port, flood)
        check(code == 431 and took < 2, f"500,000 headers: 431 ({code}, {took:.2f} s)")
        code, _ = raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * MB + b"\r\n\r\n")
        check(code == 431, f"a 1 MiB header line: 431 ({code})")
        code, _ = raw(port, b"GET /" + b"a" * MB)
        check(code == 431, f"a 1 MiB request line without an end: 431 ({code})")

        # Too many connections from one address: the rest are shed, others served.
        hogs = [connect(port, "127.0.0.20") for _ in range(64)]
        time.sleep(0.5)  # each connection's thread has counted it
        extra = connect(port, "127.0.0.20")
        check(status_of(extra) == 503, "the 65th connection from one address is shed with 503")
        extra.close()
        shed = 0
        for h in hogs:
            h.setblocking(False)
            try:
                shed += len(h.recv(64)) > 0
            except BlockingIOError:
                pass
        check(shed == 0, f"the first 64 were kept ({shed} shed)")
        code, took = timed_get(port, "/healthz")
        check(code == 200 and took < 2, f"/healthz from another address meanwhile ({took:.2f} s)")
        for h in hogs:
            h.close()

        # 300 slow connections and a 1 GiB chunked body without a token.
        rss = RssPeak(pid)
        slow = SlowClients(port, 300, [f"127.0.0.{i}" for i in range(2, 12)])
        t_slow = time.time()  # the last of them connected: its deadline is 10 s from here
        flood = ChunkedFlood(port, "127.0.0.12")
        time.sleep(2)
        code, took = timed_get(port, "/healthz")
        check(code == 200 and took < 2, f"/healthz during the attack: {code} in {took:.2f} s")
        run = sl.make_run(run_pb2, sweep_pb2, "during-attack", 0)
        code, took = timed_get(port, "/api/v1/runs", token=write, body=json_format.MessageToJson(run), method="POST")
        check(code == 201 and took < 2, f"an authorised upload during the attack: {code} in {took:.2f} s")
        flood.thread.join(25)
        check(flood.status == 401 and flood.sent < 64 * MB,
              f"the 1 GiB chunked body without a token: {flood.status} after {flood.sent // MB} MiB sent")
        # The slow ones are cut at the 10 s header deadline, not kept by their bytes.
        deadline = time.time() + 15
        while slow.closed_by_server < 300 and time.time() < deadline:
            time.sleep(0.2)
        took = time.time() - t_slow
        check(slow.closed_by_server == 300 and took < 13,
              f"the 300 slow connections were closed at the header deadline ({slow.closed_by_server} in {took:.1f} s)")
        check(slow.answers_408 == 300, f"each was answered 408 ({slow.answers_408})")
        slow.close()
        rss.stop()
        grew = rss.peak - idle  # against the idle of the server's start, not the sampler's
        print(f"RSS peak {rss.peak:.1f} MB ({grew:+.1f} MB above idle)")
        check(grew < 300, f"RSS stayed under 300 MB above idle ({grew:.1f} MB)")
        code, took = timed_get(port, "/healthz")
        check(code == 200 and took < 2, f"/healthz after the attack ({took:.2f} s)")
        streamed_upload(port, pid, write, run_pb2, sweep_pb2, json_format)
        stalled_grpc_upload(server, write, run_pb2, sweep_pb2, controller_pb2, controller_pb2_grpc, json_format, port)
        jobs = queue_flood(port, write)
        event_stream_cap(port, write, jobs)
    finally:
        rc = server.stop()
    for pit, _ in pits:
        pit.close()
    check(rc == 0, f"the server exits 0 on SIGTERM ({rc})")


if __name__ == "__main__":
    main()
