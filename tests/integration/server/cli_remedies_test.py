#!/usr/bin/python3
"""Issue 32, items 3 and 4 of Deliver: the CLI names the role it talks to
and, for a TLS or token mismatch, the cause and the flag that fixes it; one
spelling per concept (gdrbench-server's flags are --server-* in every
command, `pair` names its agents --target/--initiator) with the old names
working for one version, each with one deprecation line.

Against a real gdrbench-server over TLS with tokens, one in plaintext, and
the real `gdrbench` binary; the certificates are openssl's (the agent tests'
throwaway PKI). The failures are real ones: gRPC's own words for a refused
handshake are what the CLI has to explain."""
import argparse
import os
import shutil
import socket
import subprocess
import tempfile

import serverlib as sl
from serverlib import check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    servers = []
    try:
        p = lambda n: os.path.join(work, n)
        sl.make_pki(work)
        rogue = os.path.join(work, "rogue")
        os.makedirs(rogue)
        sl.make_pki(rogue)
        tokens = sl.write_tokens(work)
        for role in ("read", "write"):
            with open(p(role), "w") as f:
                f.write(sl.TOKENS[role] + "\n")
        with open(p("wrong"), "w") as f:
            f.write("not-a-token-of-this-server\n")
        tls = sl.Server(args.bin_dir, work, ["--db", p("tls.db"), "--tls-cert", p("server.pem"),
                                             "--tls-key", p("server.key"), "--tokens", tokens], name="tls")
        servers.append(tls)
        plain = sl.Server(args.bin_dir, work, ["--db", p("plain.db"), "--insecure", "--tokens", tokens],
                          name="plain")
        servers.append(plain)
        gdr = os.path.join(args.bin_dir, "gdrbench")

        def cli(*a):
            r = subprocess.run([gdr] + list(a) + ["--timeout-ms", "5000"], capture_output=True, text=True,
                               timeout=60)
            print(f"$ gdrbench {' '.join(a)}\n  exit {r.returncode}: {r.stderr.strip()}")
            return r

        def fails_with(r, *words):
            return r.returncode != 0 and all(w in r.stderr for w in words)

        # TLS toward the server: each mismatch names gdrbench-server and the --server-* flag.
        r = cli("runs", "list", "--server", tls.grpc, "--server-insecure", "--server-token-file", p("read"))
        check(fails_with(r, "gdrbench-server unreachable", "plaintext (--server-insecure)", "--server-tls-ca"),
              "plaintext against a TLS server: names the server and --server-tls-ca")
        r = cli("runs", "list", "--server", tls.grpc, "--server-tls-ca", p("rogue/ca.pem"),
                "--server-token-file", p("read"))
        check(fails_with(r, "gdrbench-server unreachable", "a CA that --server-tls-ca " + p("rogue/ca.pem"),
                         "does not hold"),
              "a server certificate from another CA: names --server-tls-ca and the file")
        r = cli("runs", "list", "--server", plain.grpc, "--server-tls-ca", p("ca.pem"),
                "--server-token-file", p("read"))
        check(fails_with(r, "gdrbench-server unreachable", "does not speak TLS", "--server-insecure"),
              "TLS against a plaintext server: says to use --server-insecure")
        check("agent" not in r.stderr, "an error about the server does not call it an agent")

        # Tokens: missing, unknown, too weak: each says which flag and which --tokens line.
        r = cli("runs", "list", "--server", tls.grpc, "--server-tls-ca", p("ca.pem"))
        check(fails_with(r, "give --server-token-file FILE (or GDRBENCH_TOKEN_FILE)", "--tokens"),
              "no token: names --server-token-file")
        check("Authorization: Bearer" not in r.stderr or "--server-token-file" in r.stderr,
              "no token: a CLI remedy, not only the HTTP header")
        r = cli("runs", "list", "--server", tls.grpc, "--server-tls-ca", p("ca.pem"), "--server-token-file",
                p("wrong"))
        check(fails_with(r, "the token in --server-token-file " + p("wrong"), "is not one of the server's --tokens"),
              "an unknown token: names the file")
        r = cli("baseline", "set", "20990101-000000-abcd", "--cluster", "lab", "--server", tls.grpc,
                "--server-tls-ca", p("ca.pem"), "--server-token-file", p("read"))
        check(fails_with(r, "lacks the role", "'write' line"), "a read token for a write: says a write token is needed")
        r = cli("runs", "list", "--server", tls.grpc, "--server-tls-ca", p("ca.pem"), "--server-token-file", p("read"))
        check(r.returncode == 0 and r.stderr == "", f"the right flags: exit 0, nothing on stderr ({r.stderr!r})")

        # The old spellings still work, each with one deprecation line.
        r = cli("runs", "list", "--server", plain.grpc, "--insecure", "--token-file", p("read"))
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 0 and len(lines) == 2
              and "--insecure is now --server-insecure" in r.stderr
              and "--token-file is now --server-token-file" in r.stderr,
              "runs --insecure --token-file: works, one deprecation line each")
        r = cli("runs", "list", "--server", tls.grpc, "--tls-ca", p("ca.pem"), "--token-file", p("read"))
        check(r.returncode == 0 and r.stderr.count("goes in the next version") == 2,
              "runs --tls-ca: works, with its deprecation line")

        # The address is the server's, not an agent's.
        r = cli("runs", "list", "--server", "127.0.0.1:", "--server-insecure")
        check(fails_with(r, "gdrbench-server address '127.0.0.1:' is not HOST:PORT"),
              "a server address without a port names the server")
        r = subprocess.run([gdr, "node-info", "--agent", "127.0.0.1:", "--insecure"], capture_output=True,
                           text=True, timeout=30)
        check(r.returncode != 0 and "agent address '127.0.0.1:' is not HOST:PORT" in r.stderr,
              f"an agent address without a port names the agent: {r.stderr.strip()}")

        # pair: --target/--initiator; the old --server/--client still read, with a line each.
        r = subprocess.run([gdr, "pair", "--insecure", "--target", "127.0.0.1:7470"], capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 2 and "give both --target and --initiator" in r.stderr and "missing: --initiator"
              in r.stderr, f"pair without --initiator: exit 2 naming it ({r.returncode} {r.stderr.strip()})")
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            closed = s.getsockname()[1]
        r = subprocess.run([gdr, "pair", "--insecure", "--server", f"127.0.0.1:{closed}", "--client",
                            f"127.0.0.1:{closed}", "--timeout-ms", "2000"], capture_output=True, text=True,
                           timeout=60)
        check("--server is now --target" in r.stderr and "--client is now --initiator" in r.stderr
              and "agent" in r.stderr and r.returncode != 0,
              f"pair --server/--client: read as --target/--initiator, said once each ({r.stderr.strip()})")

        # The server's own plaintext warning speaks of the server.
        with open(plain.log) as f:
            log = f.read()
        check("can call this server" in log and "drive this agent" not in log,
              "gdrbench-server --insecure warns about the server, not an agent")
        print("PASS")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
