#!/usr/bin/python3
"""A client that is not ours: Python's grpcio (Debian) with stubs generated
from proto/, over mTLS, lists the agent's services by reflection, checks
health and calls GetNodeInfo."""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd, cwd):
    subprocess.run(["/bin/bash", "-c", "set -e; " + cmd], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_pki(d):
    with open(os.path.join(d, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    sh("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
       "-subj '/CN=py test ca' -keyout ca.key -out ca.pem", d)
    for name, ext in (("server", "-extfile san.cnf"), ("client", "")):
        sh(f"openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN={name} "
           f"-keyout {name}.key -out {name}.csr && openssl x509 -req -in {name}.csr -CA ca.pem "
           f"-CAkey ca.key -CAcreateserial -days 2 {ext} -out {name}.pem", d)


def gen_stubs(proto_dir, out):
    protos = [os.path.join("gdrbench/v1", p) for p in sorted(os.listdir(os.path.join(proto_dir, "gdrbench/v1")))]
    plugin = shutil.which("grpc_python_plugin")
    subprocess.run(["protoc", f"--proto_path={proto_dir}", f"--python_out={out}",
                    f"--grpc_out={out}", f"--plugin=protoc-gen-grpc={plugin}"] + protos, check=True)
    subprocess.run(["protoc", f"--proto_path={HERE}", f"--python_out={out}", f"--grpc_out={out}",
                    f"--plugin=protoc-gen-grpc={plugin}", "reflection.proto", "health.proto"], check=True)


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
        from google.protobuf import descriptor_pb2
        from gdrbench.v1 import agent_pb2, agent_pb2_grpc
        import reflection_pb2, reflection_pb2_grpc, health_pb2, health_pb2_grpc

        port_file = os.path.join(work, "port")
        agent = subprocess.Popen(
            [os.path.join(args.bin_dir, "gdrbench-agent"), "--listen", "127.0.0.1:0",
             "--port-file", port_file, "--tls-cert", os.path.join(work, "server.pem"),
             "--tls-key", os.path.join(work, "server.key"),
             "--tls-client-ca", os.path.join(work, "ca.pem")],
            stdin=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
        deadline = time.time() + 15
        while not os.path.exists(port_file):
            if agent.poll() is not None or time.time() > deadline:
                sys.exit("agent did not start: " + open(os.path.join(work, "agent.log")).read())
            time.sleep(0.05)
        address = "127.0.0.1:" + open(port_file).read().strip()

        def read(name):
            with open(os.path.join(work, name), "rb") as f:
                return f.read()

        creds = grpc.ssl_channel_credentials(read("ca.pem"), read("client.key"), read("client.pem"))
        channel = grpc.secure_channel(address, creds)
        grpc.channel_ready_future(channel).result(timeout=10)

        refl = reflection_pb2_grpc.ServerReflectionStub(channel)
        reqs = [reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="gdrbench.v1.Agent")]
        responses = list(refl.ServerReflectionInfo(iter(reqs), timeout=10))
        services = sorted(s.name for s in responses[0].list_services_response.service)
        print("services by reflection:", ", ".join(services))
        for want in ("gdrbench.v1.Agent", "grpc.health.v1.Health"):
            assert want in services, f"{want} not listed by reflection: {services}"
        fdp = descriptor_pb2.FileDescriptorProto()
        fdp.ParseFromString(responses[1].file_descriptor_response.file_descriptor_proto[0])
        methods = [m.name for s in fdp.service if s.name == "Agent" for m in s.method]
        print("Agent methods by reflection:", ", ".join(methods))
        assert "GetNodeInfo" in methods and "RunWriteSweep" in methods, methods

        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING, health

        info = agent_pb2_grpc.AgentStub(channel).GetNodeInfo(agent_pb2.GetNodeInfoRequest(), timeout=10)
        print("GetNodeInfo over mTLS: hostname", info.hostname, "kernel", info.software.kernel)
        assert info.hostname == socket.gethostname(), (info.hostname, socket.gethostname())
        assert info.software.kernel == os.uname().release

        # Without a client certificate the same call is refused.
        bare = grpc.secure_channel(address, grpc.ssl_channel_credentials(read("ca.pem")))
        try:
            agent_pb2_grpc.AgentStub(bare).GetNodeInfo(agent_pb2.GetNodeInfoRequest(), timeout=3)
            sys.exit("FAIL: a client without a certificate was served")
        except grpc.RpcError as e:
            print("without a client certificate:", e.code().name)
        print("1 passed, 0 failed")
    finally:
        if agent is not None:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(timeout=10)
            except subprocess.TimeoutExpired:
                agent.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
