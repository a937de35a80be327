#!/usr/bin/env python3
"""`gdrbench sweep --dry-run` for a person (issue 32, item 5): a short text
plan that says what was read from the inventory; the round list only with
--verbose (and in --json).

The facts checked come from the inventory file itself, read here with PyYAML
(not with gdrbench's parser): its node count (hostlists expanded here), the
distinct leaf: and spine_group: labels per rail, the tls: files with their
lines, every expect: key and value. The plan's round count is the JSON plan's.

  dry_run_text_test.py BIN_DIR SOURCE_DIR
"""
import json
import re
import subprocess
import sys

import yaml

bin_dir, src = sys.argv[1], sys.argv[2]
gdrbench = f"{bin_dir}/gdrbench"
inv_path = f"{src}/docs/examples/ib-8rail-gpu.yaml"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    return subprocess.run([gdrbench, "sweep", *args], capture_output=True, text=True, timeout=60)


def expand(hostlist):  # "dgx-a[01-16]" -> 16 names (the form the example uses)
    m = re.fullmatch(r"(.*)\[(\d+)-(\d+)\](.*)", hostlist)
    if not m:
        return [hostlist]
    width = len(m.group(2))
    return [f"{m.group(1)}{i:0{width}d}{m.group(4)}" for i in range(int(m.group(2)), int(m.group(3)) + 1)]


inv = yaml.safe_load(open(inv_path))
names, leaves, spines = [], {}, set()
rails = len(inv["rails"])
for entry in inv["nodes"]:
    hosts = expand(entry["hostlist"]) if "hostlist" in entry else [entry["name"]]
    names += hosts
    for r in range(rails):
        leaves.setdefault(r, set()).add(entry["leaf"].replace("{rail}", str(r)))
    spines.add(entry["spine_group"])
leaf_counts = {len(v) for v in leaves.values()}
assert len(leaf_counts) == 1, leaf_counts

text = run("--inventory", inv_path, "--dry-run")
if text.returncode != 0:
    fail(f"--dry-run exited {text.returncode}: {text.stderr}")
out = text.stdout
lines = out.splitlines()
print(out)
if len(lines) > 12 or len(out) > 2500:
    fail(f"the text plan of {len(names)} nodes x {rails} rails is {len(lines)} lines, {len(out)} bytes "
         "(at most 12 lines, 2,500 bytes)")
if any(l.startswith("round 0:") for l in lines):
    fail("the text plan lists rounds without --verbose")


def line(prefix):
    got = [l for l in lines if l.startswith(prefix)]
    if len(got) != 1:
        fail(f"expected one line starting '{prefix}', got {len(got)}")
        return ""
    return got[0]


if f", {len(names)} nodes, {rails} rail(s)," not in line("plan "):
    fail(f"plan line does not say {len(names)} nodes, {rails} rails")
if not re.match(r"estimated duration: [0-9.]+ (s|min [0-9]{2} s|h [0-9]{2} min) \(", line("estimated duration:")):
    fail("the estimate carries no unit")
inv_line = line("inventory:")
want = f"{next(iter(leaf_counts))} leaves per rail (leaf: on {len(names)} of {len(names)} nodes)"
if want not in inv_line:
    fail(f"inventory line lacks '{want}': {inv_line}")
if f"{len(spines)} spine group per rail" not in inv_line:
    fail(f"inventory line lacks the {len(spines)} spine group: {inv_line}")
agents = line("agents:")
raw = open(inv_path).read().splitlines()
for key in ("ca", "cert", "key"):
    n = next(i + 1 for i, l in enumerate(raw) if l.strip().startswith(f"{key}:"))
    if f"{inv['tls'][key]} ({inv_path}:{n}: tls.{key})" not in agents:
        fail(f"agents line does not name tls.{key} {inv['tls'][key]} at line {n}: {agents}")
if "(mTLS)" not in agents or inv["tls"]["server_name"] not in agents:
    fail(f"agents line: {agents}")
expect = line("expect:")
for key, value in inv["expect"].items():
    shown = {"link_gbps": f"link_gbps >= {value}", "min_mtu": f"min_mtu {value}"}.get(key, f"{key} {value}")
    if shown not in expect:
        fail(f"expect line lacks '{shown}': {expect}")
if "sizes 4 KiB, 2 MiB, 50 iterations per size" not in run("--inventory", inv_path, "--dry-run", "--sizes", "4K,2M",
                                                          "--iterations", "50").stdout:
    fail("--sizes 4K,2M --iterations 50 not shown in the tests line")

plan = json.loads(run("--inventory", inv_path, "--dry-run", "--json").stdout)
verbose = run("--inventory", inv_path, "--dry-run", "--verbose").stdout.splitlines()
listed = [l for l in verbose if re.match(r"round \d+: ", l)]
if len(listed) != plan["rounds_total"]:
    fail(f"--verbose lists {len(listed)} rounds, the JSON plan has {plan['rounds_total']}")
if f"rounds: {plan['rounds_total']}, tests: {plan['tests']}," not in line("rounds:"):
    fail("the rounds line disagrees with the JSON plan")

alone = run("--agents", "a:1", "--verbose", "--out", "/nonexistent/x")
if alone.returncode != 2 or "--verbose" not in alone.stderr:
    fail(f"--verbose without --dry-run: exit {alone.returncode}: {alone.stderr}")

print("FAIL" if failures else "PASS")
sys.exit(1 if failures else 0)
