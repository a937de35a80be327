#!/usr/bin/python3
"""SIGHUP on the real gdrbench-server reloads its TLS certificates (issue 12,
item 3: cert-manager and certbot renew the certificates of long-running
servers; `systemctl reload` sends SIGHUP, deploy/systemd): after the files
are replaced, new connections to the gRPC port and to the HTTP port get the
renewed certificate, without a restart. A key that is not the certificate's
is refused with one line, and both ports keep serving the one they had. The
certificate each port serves is read by a client that is not ours (openssl
s_client)."""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import serverlib as sl
from serverlib import check


def served_subject(address, ca, alpn=None):
    host, port = address.rsplit(":", 1)
    cmd = ["openssl", "s_client", "-connect", f"{host}:{port}", "-CAfile", ca, "-verify_return_error"]
    if alpn:
        cmd += ["-alpn", alpn]
    hello = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    cert = subprocess.run(["openssl", "x509", "-noout", "-subject"], input=hello.stdout, capture_output=True)
    return cert.stdout.decode().strip()


def eventually(cond, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


def stalled_handshakes(server, ca, n=100):
    """Slow TLS clients (issue 31): n connections over two addresses that send the first
    byte of a ClientHello (a TLS handshake record, RFC 8446 section 5.1: content type 22)
    and stall. The HTTP side's header deadline covers the handshake (10 s, not restarted
    by a byte: http_gate.h), so each is closed at about 10 s, while /healthz over TLS
    answers meanwhile."""
    host, port = server.http.rsplit(":", 1)
    socks = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((f"127.0.0.{50 + i % 2}", 0))
        s.connect((host, int(port)))
        s.sendall(b"\x16")
        socks.append(s)
    t0 = time.time()
    time.sleep(1)
    code, _ = sl.curl(f"https://{server.http}/healthz", cacert=ca, max_time=2)
    took = time.time() - t0 - 1
    check(code == 200, f"/healthz over TLS with {n} stalled handshakes: {code} ({took:.2f} s)")
    closed = 0
    deadline = t0 + 14
    for s in socks:
        s.settimeout(max(0.1, deadline - time.time()))
        try:
            while s.recv(4096):
                pass
            closed += 1  # EOF: the server closed it
        except ConnectionResetError:
            closed += 1
        except (socket.timeout, OSError):
            pass
        s.close()
    took = time.time() - t0
    check(closed == n and 9 <= took <= 14,
          f"the {n} stalled handshakes were closed at the header deadline ({closed} in {took:.1f} s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    server = None
    try:
        sl.make_pki(work)  # ca.pem, server.pem (CN=server), client.pem
        # The renewal: another server certificate from the same CA.
        subprocess.run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=server-2 "
                       "-keyout server2.key -out server2.csr && openssl x509 -req -in server2.csr -CA ca.pem "
                       "-CAkey ca.key -CAcreateserial -days 2 -extfile san.cnf -out server2.pem",
                       shell=True, cwd=work, check=True, capture_output=True)
        p = lambda f: os.path.join(work, f)  # noqa: E731
        cert, key, ca = p("live.pem"), p("live.key"), p("ca.pem")
        shutil.copy(p("server.pem"), cert)
        shutil.copy(p("server.key"), key)
        # At start, the HTTP side's files are read once and a bad one is named
        # by its flag: a missing certificate, a key that is not the certificate's.
        for http_cert, http_key, want in ((p("missing.pem"), key, "--http-tls-cert: cannot read " + p("missing.pem")),
                                          (cert, p("client.key"), "--http-tls-key is not the key of")):
            refused = subprocess.run([os.path.join(args.bin_dir, "gdrbench-server"), "--db", p("refused.db"),
                                      "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
                                      "--tls-cert", cert, "--tls-key", key, "--http-tls-cert", http_cert,
                                      "--http-tls-key", http_key, "--tokens", sl.write_tokens(work)],
                                     stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
            check(refused.returncode != 0 and want in refused.stderr,
                  f"start with --http-tls-cert {http_cert} --http-tls-key {http_key}: exit {refused.returncode}, "
                  f"expected {want!r} in: {refused.stderr[-800:]}")
        server = sl.Server(args.bin_dir, work, ["--db", p("store.db"), "--tls-cert", cert, "--tls-key", key,
                                                "--tokens", sl.write_tokens(work)])
        grpc_subject = lambda: served_subject(server.grpc, ca, alpn="h2")  # noqa: E731
        http_subject = lambda: served_subject(server.http, ca)  # noqa: E731
        check(grpc_subject().endswith("CN = server"), f"gRPC serves {grpc_subject()!r}, expected CN = server")
        check(http_subject().endswith("CN = server"), f"HTTP serves {http_subject()!r}, expected CN = server")

        stalled_handshakes(server, ca)

        # Renewed in place, then SIGHUP: new connections get it.
        shutil.copy(p("server2.pem"), cert)
        shutil.copy(p("server2.key"), key)
        server.proc.send_signal(signal.SIGHUP)
        log = lambda: open(server.log).read()  # noqa: E731
        check(eventually(lambda: http_subject().endswith("CN = server-2")),
              f"HTTP still serves {http_subject()!r} after SIGHUP; log: {log()[-1500:]}")
        check(eventually(lambda: grpc_subject().endswith("CN = server-2")),
              f"gRPC still serves {grpc_subject()!r} after SIGHUP; log: {log()[-1500:]}")
        for part in ("gRPC", "HTTP"):
            check(f"SIGHUP: {part}: TLS reloaded: serving CN=server-2" in log(),
                  f"no '{part}: TLS reloaded' line: {log()[-1500:]}")
        code, body = sl.curl(f"https://{server.http}/healthz", cacert=ca)
        check(code == 200, f"/healthz after the reload: HTTP {code} {body}")

        # A key that is not the certificate's: refused, both keep server-2.
        shutil.copy(p("client.key"), key)
        server.proc.send_signal(signal.SIGHUP)
        check(eventually(lambda: log().count("kept the TLS certificate in use") >= 2),
              f"no 'kept' lines for a mismatched key: {log()[-1500:]}")
        check("--http-tls-key is not the key of" in log() and "--tls-key is not the key of" in log(),
              f"the refusal does not name the key: {log()[-1500:]}")
        time.sleep(1.5)  # past gRPC's one-second re-read of its material
        check(server.proc.poll() is None, "the server exited on a bad reload")
        check(http_subject().endswith("CN = server-2"), f"HTTP serves {http_subject()!r} after a refused reload")
        check(grpc_subject().endswith("CN = server-2"), f"gRPC serves {grpc_subject()!r} after a refused reload")
        rc = server.stop()
        server = None
        check(rc == 0, f"exit {rc} after SIGTERM")
        print("ok: SIGHUP reloaded gRPC and HTTP to CN=server-2; a mismatched key was refused, both kept it")
    finally:
        if server is not None:
            server.proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
