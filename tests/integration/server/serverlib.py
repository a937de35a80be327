"""Helpers for the gdrbench-server integration tests: a throwaway PKI, Python
stubs generated from proto/ at test time (Debian's grpcio tools), the real
server started on loopback, curl for REST, and runs built by this client from
the proto's definition (not from the server's code)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(os.path.dirname(HERE), "python")


sys.path.insert(0, PY)
from reflection_mtls_test import make_pki  # noqa: E402  (the agent test's throwaway PKI: CA, server, client)


def check(cond, what):
    """One assertion of a test script: 'ok: WHAT', or exit with 'FAIL: WHAT'."""
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def gen_stubs(proto_dir, out):
    protos = [os.path.join("gdrbench/v1", p)
              for p in sorted(os.listdir(os.path.join(proto_dir, "gdrbench/v1")))]
    plugin = shutil.which("grpc_python_plugin")
    subprocess.run(["protoc", f"--proto_path={proto_dir}", f"--python_out={out}",
                    f"--grpc_out={out}", f"--plugin=protoc-gen-grpc={plugin}"] + protos, check=True)
    subprocess.run(["protoc", f"--proto_path={PY}", f"--python_out={out}", f"--grpc_out={out}",
                    f"--plugin=protoc-gen-grpc={plugin}", "reflection.proto", "health.proto"], check=True)
    sys.path.insert(0, out)


def loopback_agents(bin_dir, work, n=2):
    """Starts n real gdrbench-agents on loopback (plaintext) and writes an
    inventory naming them agent0.. (rail 0: NIC none0; there is no RDMA here,
    so every test is an ERR cell: still a run). Returns (processes, inventory
    path); the caller terminates the processes."""
    procs, ports = [], []
    for i in range(n):
        pf = os.path.join(work, f"agent{i}.port")
        procs.append(subprocess.Popen([os.path.join(bin_dir, "gdrbench-agent"), "--insecure", "--listen",
                                       "127.0.0.1:0", "--port-file", pf], stderr=subprocess.DEVNULL))
        for _ in range(300):
            if os.path.exists(pf):
                break
            time.sleep(0.05)
        ports.append(open(pf).read().strip())
    inv = os.path.join(work, "inv.yaml")
    with open(inv, "w") as f:
        f.write("tls: {insecure: true}\nrails:\n  - {nic: none0, gpu: 0}\nnodes:\n")
        for i, port in enumerate(ports):
            f.write(f"  - {{name: agent{i}, address: '127.0.0.1:{port}'}}\n")
    return procs, inv


TOKENS = {"read": "read-token-0123456789abcdef", "write": "write-token-0123456789abcdef"}


def write_tokens(d):
    path = os.path.join(d, "tokens")
    with open(path, "w") as f:
        f.write("# role token name\n")
        f.write(f"read {TOKENS['read']} dashboard\nwrite {TOKENS['write']} ci\n")
    return path


class Server:
    def __init__(self, bin_dir, work, extra, name="server"):
        self.work = work
        self.grpc_file = os.path.join(work, name + ".grpc")
        self.http_file = os.path.join(work, name + ".http")
        self.log = os.path.join(work, name + ".log")
        args = [os.path.join(bin_dir, "gdrbench-server"), "--grpc-listen", "127.0.0.1:0",
                "--http-listen", "127.0.0.1:0", "--grpc-port-file", self.grpc_file,
                "--http-port-file", self.http_file] + extra
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "w"))
        deadline = time.time() + 20
        while not (os.path.exists(self.grpc_file) and os.path.exists(self.http_file)):
            if self.proc.poll() is not None or time.time() > deadline:
                sys.exit("FAIL: server did not start: " + open(self.log).read())
            time.sleep(0.05)
        self.grpc = "127.0.0.1:" + open(self.grpc_file).read().strip()
        self.http = "127.0.0.1:" + open(self.http_file).read().strip()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            sys.exit("FAIL: server did not stop within 15 s of SIGTERM")
        return rc


def curl(url, token=None, method="GET", data=None, cacert=None, expect=None, max_time=None):
    """Returns (status, parsed JSON or text). data=None sends no body at all
    (no Content-Length); max_time: curl gives up after that many seconds."""
    cmd = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-X", method, url]
    if max_time is not None:
        cmd += ["--max-time", str(max_time)]
    if cacert:
        cmd += ["--cacert", cacert]
    if token:
        cmd += ["-H", f"Authorization: Bearer {token}"]
    if data is not None:
        cmd += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    out = subprocess.run(cmd, input=(data or "").encode(), capture_output=True, check=True).stdout.decode()
    body, _, code = out.rpartition("\n")
    code = int(code)
    try:
        parsed = json.loads(body) if body.strip().startswith(("{", "[")) else body
    except json.JSONDecodeError:
        parsed = body
    if expect is not None and code != expect:
        sys.exit(f"FAIL: {method} {url}: HTTP {code}, expected {expect}: {body[:400]}")
    return code, parsed


def make_run(run_pb2, sweep_pb2, run_id, day, cluster="lab", nodes=4, slow=None, base_gbps=376.0):
    """A v1.Run as gdrbench writes one: one rail, sizes 64 KiB and 1 MiB, every
    ordered pair; `slow` = (src, dst, gbps) makes one link slow."""
    run = run_pb2.Run(run_id=run_id, cluster=cluster, mode="all-pairs", passed=slow is None)
    run.started_at.seconds = 1767225600 + day * 86400
    run.finished_at.seconds = run.started_at.seconds + 60
    names = [f"node{i}" for i in range(nodes)]
    for size in (65536, 1 << 20):
        m = run.matrices.add(rail=0, size_bytes=size, nodes=names)
        for i in range(nodes):
            for j in range(nodes):
                if i == j:
                    continue
                g = base_gbps + (i * 7 + j * 13) % 12
                if slow and (i, j) == slow[:2]:
                    g = slow[2]
                verdict = "" if size != 1 << 20 else ("low" if g < 0.9 * 400 else "pass")
                m.cells.add(src=i, dst=j, status=sweep_pb2.RESULT_STATUS_OK, bw_avg_gbps=g,
                            verdict=verdict, expected_gbps=400)
    for i in range(nodes):
        for j in range(nodes):
            if i != j:
                p = run.pairs.add(rail=0, status=sweep_pb2.RESULT_STATUS_OK)
                p.src.node, p.dst.node = names[i], names[j]
    run.summary = "PASS" if run.passed else "FAIL: 1 low"
    return run


def chunks(run_pb2, controller_pb2, run):
    """UploadRun's pieces: the header, then cells per matrix, then pairs."""
    header = run_pb2.Run()
    header.CopyFrom(run)
    del header.pairs[:]
    for m in header.matrices:
        del m.cells[:]
    yield controller_pb2.RunChunk(header=header)
    for m in run.matrices:
        yield controller_pb2.RunChunk(cells=controller_pb2.MatrixCells(
            rail=m.rail, size_bytes=m.size_bytes, cells=m.cells))
    yield controller_pb2.RunChunk(pairs=controller_pb2.PairChunk(pairs=run.pairs))
