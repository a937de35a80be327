#!/usr/bin/python3
"""The probe a kubelet makes: grpc.health.v1 Check in plaintext, no client
certificate (Kubernetes' built-in gRPC probe does not do TLS or client
authentication: KEP-2727 "the kubelet probe will not allow use of client
certificates"). The agent serves it on --health-listen, while its Agent
service stays behind mTLS; the plaintext port serves nothing else."""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reflection_mtls_test import gen_stubs, make_pki  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--proto-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.work_dir)
    agent = None
    try:
        make_pki(work)
        gen_stubs(args.proto_dir, work)
        sys.path.insert(0, work)
        import grpc
        from gdrbench.v1 import agent_pb2, agent_pb2_grpc
        import health_pb2, health_pb2_grpc

        health_addr = f"127.0.0.1:{free_port()}"
        port_file = os.path.join(work, "port")
        log = os.path.join(work, "agent.log")
        agent = subprocess.Popen(
            [os.path.join(args.bin_dir, "gdrbench-agent"), "--listen", "127.0.0.1:0",
             "--port-file", port_file, "--tls-cert", os.path.join(work, "server.pem"),
             "--tls-key", os.path.join(work, "server.key"),
             "--tls-client-ca", os.path.join(work, "ca.pem"), "--health-listen", health_addr],
            stdin=subprocess.DEVNULL, stderr=open(log, "w"))
        deadline = time.time() + 15
        while not os.path.exists(port_file):
            if agent.poll() is not None or time.time() > deadline:
                sys.exit("agent did not start: " + open(log).read())
            time.sleep(0.05)
        main_addr = "127.0.0.1:" + open(port_file).read().strip()

        plain = grpc.insecure_channel(health_addr)
        reply = health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, reply
        print("plaintext health on", health_addr, ":", health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
        try:
            agent_pb2_grpc.AgentStub(plain).GetNodeInfo(agent_pb2.GetNodeInfoRequest(), timeout=3)
            sys.exit("FAIL: the plaintext health port served the Agent service")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e
            print("Agent service on the health port:", e.code().name)
        try:
            health_pb2_grpc.HealthStub(grpc.insecure_channel(main_addr)).Check(
                health_pb2.HealthCheckRequest(), timeout=3)
            sys.exit("FAIL: the mTLS port answered plaintext")
        except grpc.RpcError as e:
            print("plaintext on the mTLS port:", e.code().name)
        agent.send_signal(signal.SIGTERM)
        rc = agent.wait(timeout=10)
        agent = None
        assert rc == 0, open(log).read()
        print("1 passed, 0 failed")
    finally:
        if agent is not None:
            agent.kill()
            agent.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
