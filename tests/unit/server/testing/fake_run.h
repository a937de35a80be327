// Runs for the server's tests and benchmarks, made by the controller itself:
// a sweep of controller/run's FakeCluster through the real runner, matrix,
// verdicts and blame (the producer of every stored run), not hand-written
// protos.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "controller/run/testing/fake_cluster.h"
#include "controller/schedule/schedule.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::server::testing {

struct FakeRunSpec {
  uint32_t nodes = 4;
  uint32_t rails = 1;
  double link_gbps = 400;
  std::string run_id = "run-1";
  std::string cluster = "lab";
  int64_t started_unix_s = 1767225600;  // 2026-01-01T00:00:00Z
  std::vector<uint64_t> sizes = {65536, 1 << 20};
  // The sweep's plan: all-pairs, or (for runs too big for it) quick or ring.
  controller::schedule::Mode mode = controller::schedule::Mode::kAllPairs;
  uint32_t quick_rounds = sweep_limits::kDefaultQuickRounds;
  // Gb/s of src -> dst on a NIC; default: 376..387 (94-97 % of 400).
  controller::run::FakeCluster::BandwidthModel model;
  bool keep_pairs = true;
  // Nodes whose fake agent's preflight FAILs (peermem not loaded) or WARNs;
  // when any is set, every node's preflight report is in the run.
  std::vector<uint32_t> preflight_fail, preflight_warn;
};

double DefaultModel(uint32_t src, uint32_t dst, const std::string& nic);

// Runs the sweep. With keep_pairs = false the run has no pairs (matrices
// only), which is what large benchmarks can hold in memory.
v1::Run FakeRun(const FakeRunSpec& spec);

// The same sweep, streaming: `on_pair` gets every pair result as it finishes.
v1::Run FakeRunStreaming(const FakeRunSpec& spec,
                         const std::function<void(const v1::PairResult&)>& on_pair);

}  // namespace gdrbench::server::testing
