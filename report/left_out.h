// Nodes a run left out, grouped by their one cause (issue 32, item 1): a
// run where 16 of 16 agents did not resolve says so once, with the count,
// the nodes and the remedy for that cause, instead of 16 lines that each
// repeat it. The cause is read from the reason the probe recorded
// (common/rpc/tls_probe.cc, controller/run/probe.cc): DNS, refused, TLS,
// no answer in time, refused by the agent's admission, version, a preflight
// FAIL, or other.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::report {

struct LeftOutCause {
  std::string cause;     // "unreachable: the name does not resolve (DNS)"
  std::string remedy;    // what fixes that cause
  std::vector<std::string> nodes;
  std::string first;     // the first node's whole reason, as recorded
};

// One node's reason ("agent unreachable: ...") read as GroupLeftOut reads
// it: its cause and the remedy for that cause; nullopt when no rule knows it
// (GroupLeftOut then says "left out"). nodes and first are left empty.
std::optional<LeftOutCause> ClassifyLeftOut(const std::string& reason);

// The run's excluded_nodes ("NODE: reason") grouped by cause, the largest
// group first (ties: the order the nodes were left out).
std::vector<LeftOutCause> GroupLeftOut(const v1::Run& run);

// Every node of the run: those of its matrices and those it left out.
size_t NodesOfRun(const v1::Run& run);

// The cause's line, without its remedy: "3 of 16 nodes unreachable: ...
// (gpu01, gpu02, gpu03; first: gpu01: ...)"; at most `max_names` names.
std::string FormatLeftOutCause(const LeftOutCause& g, size_t of_nodes, size_t max_names = 8);

// One line per cause: "3 of 16 nodes unreachable: ... (gpu01, gpu02, gpu03;
// first: gpu01: ...)" and an indented "remedy: ..." line; empty when no
// node was left out. At most `max_names` names per cause, then "... (N)".
std::string FormatLeftOut(const v1::Run& run, size_t max_names = 8);

}  // namespace gdrbench::report
