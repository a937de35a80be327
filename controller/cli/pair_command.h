// `gdrbench pair --server A --client B [sweep options]`: one pair test through
// two agents, run by the sweep's own pair tester (run::RunPairTest: OpenTarget
// on the server's agent, RunWriteSweep on the client's, VerifyTarget for
// verify or bidirectional, CloseTarget always), printed as a perftest-like
// table or, with --json, as a v1::PairResult; a failed test also gets one
// line on stderr with its reason.
#pragma once

#include <string>

#include "controller/cli/commands.h"
#include "controller/cli/sweep_flags.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::cli {

struct PairOptions {
  CommonOptions common;
  std::string server;         // the target's agent, HOST:PORT
  std::string client;         // the initiator's agent, HOST:PORT
  std::string server_device;  // empty: the agent's only owned device, else its first active one
  std::string client_device;
  std::string server_bind;    // rdma_cm addresses; empty: the device's first IPv4
  std::string client_bind;
  SweepFlags sweep;
  double sweep_timeout_s = 1800;  // bound on the whole RunWriteSweep stream
  double lease_s = 0;             // target lease; 0 = sweep timeout + 60 s
};

// Exit code: 0 when every size of every --memory kind passed (and verified,
// with --verify), 1 when a kind's test failed or could not run, 2 for bad flags or parameters an agent
// refused (INVALID_ARGUMENT).
int PairCommand(const PairOptions& options);

// The perftest-like table of a finished pair result (header line, one row
// per size, the ib_write_bw equivalent, the verdict line).
std::string FormatPairTable(const v1::PairResult& result, bool bidirectional);

// --memory host,gpu: the first kind's table, each later kind's, then the
// kinds side by side (FormatMemoryKinds). One kind: FormatPairTable.
std::string FormatPairReport(const v1::PairResult& result, bool bidirectional);

// The kinds of a pair side by side (largest OK size each; staged copy + wire),
// the gpu/host and gpu-staged/host ratios and the gdr blame under the
// default policy; "" without memory_halves.
std::string FormatMemoryKinds(const v1::PairResult& result);

}  // namespace gdrbench::controller::cli
