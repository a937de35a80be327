// One preflight check's result: the shape every check returns and the v1
// PreflightReport carries (agent/service/preflight_proto.cc converts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gdrbench::agent::preflight {

// Ordered by severity; SKIP ranks with PASS when a report is summarised.
enum class Status { kPass, kSkip, kWarn, kFail };

// "PASS", "WARN", "FAIL", "SKIP".
const char* StatusName(Status s);

// One thing a check read, and where.
struct Evidence {
  std::string source;    // "/sys/module/nvidia_peermem", "ibv_query_port(mlx5_0, 1)"
  std::string observed;  // what was found there
};

struct CheckResult {
  std::string id;
  Status status = Status::kSkip;
  std::string summary;      // one sentence
  std::vector<Evidence> evidence;
  std::string remediation;  // the command or setting that fixes it; empty on PASS and SKIP
  int64_t duration_ns = 0;

  CheckResult& Saw(std::string source, std::string observed) {
    evidence.push_back(Evidence{std::move(source), std::move(observed)});
    return *this;
  }
};

// Pinned versions for stack_version_alignment, minimum MTU for mtu. Empty or
// 0 means not pinned.
struct Expectations {
  std::string nvidia_driver;
  std::string cuda_driver;
  std::string rdma_core;
  std::string ofed;
  uint32_t min_mtu_bytes = 0;
};

struct Report {
  std::string hostname;
  std::string fs_root;
  std::vector<CheckResult> checks;
  Status overall = Status::kPass;  // the worst status, SKIP counted as PASS
  int64_t duration_ns = 0;
};

}  // namespace gdrbench::agent::preflight
