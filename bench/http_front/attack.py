#!/usr/bin/python3
"""Issue 31's attack on one HTTP server (PORT, PID): the cases of
tests/integration/server/hostile_test.py, whose clients it reuses, measured
and printed as one JSON line. Run by bench/http_front.sh against
gdrbench-server and against libmicrohttpd (mhd_probe.c) in the same session."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration",
                                "server"))
import hostile_test as ht  # noqa: E402


def main():
    port, pid, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    out = {}
    out["idle_rss_mb"] = round(ht.rss_mb(pid), 1)
    code, took = ht.raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * 500_000 + b"\r\n")
    out["headers_500k"] = f"{code} in {took:.2f} s"
    code, took = ht.raw(port, b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n"
                              b"Authorization: Bearer " + token.encode() + b"\r\n\r\n")
    out["content_length_1gib_with_token"] = f"{code} in {took:.2f} s"
    rss = ht.RssPeak(pid)
    t0 = time.time()
    slow = ht.SlowClients(port, 300, [f"127.0.0.{i}" for i in range(2, 12)])
    flood = ht.ChunkedFlood(port, "127.0.0.12")
    health = []
    for at in (2, 4, 8):
        time.sleep(max(0, t0 + at - time.time()))
        code, took = ht.timed_get(port, "/healthz")
        health.append(f"t+{at}: {code} in {took * 1000:.0f} ms")
    out["healthz_during_attack"] = health
    code, took = ht.timed_get(port, "/api/v1/runs", token=token, body="{}", method="POST")
    out["authorised_post_during_attack"] = f"{code} in {took:.2f} s"
    flood.thread.join(25)
    out["chunked_1gib_without_token"] = f"{flood.status} after {flood.sent // ht.MB} MiB sent"
    time.sleep(max(0, t0 + 15 - time.time()))
    out["slow_closed_by_server_at_15s"] = slow.closed_by_server
    out["slow_answered_408"] = slow.answers_408
    slow.close()
    rss.stop()
    out["rss_above_idle_mb"] = round(rss.peak - out["idle_rss_mb"], 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
