#!/usr/bin/env python3
"""Trims `cmake --graphviz` output to this directory's fixtures (README.md).

  python3 trim.py FULL.dot > tree.dot

Keeps, verbatim and in order, the header and the legend, then the node and
edge lines of the targets the four shipped binaries reach, of those only the
tree's own (gdrbench*) and gRPC::* / protobuf::*.
"""
import collections
import re
import sys

BINARIES = ("gdrbench", "gdrbench-server", "gdrbench-agent", "gdrbench-preflight")
NODE = re.compile(r'^\s*"([^"]+)" \[ label = "((?:[^"\\]|\\.)*)", shape = \w+ \];$')
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"')
KEEP = re.compile(r"(gdrbench[-_]?\S*|gRPC::\S+|protobuf::\S+)")


def main(path):
    lines = open(path).read().splitlines()
    end = next(i for i, l in enumerate(lines) if l == "}")  # the legend's end
    labels, deps = {}, collections.defaultdict(set)
    for line in lines[end + 1:]:
        m = NODE.match(line)
        if m:
            labels[m.group(1)] = m.group(2)
        m = EDGE.match(line)
        if m:
            deps[m.group(1)].add(m.group(2))
    todo = [n for n, l in labels.items() if l in BINARIES]
    reached = set(todo)
    while todo:
        for d in deps[todo.pop()]:
            if d not in reached:
                reached.add(d)
                todo.append(d)
    kept = {n for n in reached if KEEP.fullmatch(labels[n])}
    out = lines[:end + 1]
    for line in lines[end + 1:]:
        m, e = NODE.match(line), EDGE.match(line)
        if (m and m.group(1) in kept) or (e and e.group(1) in kept and e.group(2) in kept):
            out.append(line)
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
