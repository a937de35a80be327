// The verdict of one pair test (pair_tester.h) from what its steps left:
// each RPC's status, the stream's first impossible answer and the sizes the
// agents answered. Internal to controller/run.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gdrbench/v1/agent.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

inline void Fail(v1::PairResult* r, v1::ResultStatus status, std::string reason) {
  r->set_status(status);
  r->set_reason(std::move(reason));
}

// "<rpc> on <name>: <message>". The real agent client already begins its
// messages with "<rpc> on <address>: " (agent_api.h): for `gdrbench pair`
// the name is that address and the message goes as it is; in a sweep the node
// name goes before it ("node1: OpenTarget on 10.0.0.1:7470: ..."), never the
// RPC twice.
std::string AgentError(absl::string_view rpc, absl::string_view name, absl::string_view message);

// Copies VerifyTarget's answer into the sizes (verified, first bad offset;
// a mismatch fails the size) and takes the reverse direction's results.
void ApplyVerify(const v1::VerifyTargetResponse& v, bool verify, v1::PairResult* r);

// What the steps after OpenTarget left. The references must outlive the call.
struct PairSteps {
  const absl::Status& bounds;   // the stream's first impossible answer
  const absl::Status& connect;  // ConnectTarget (out of band)
  const absl::Status& sweep;    // RunWriteSweep
  bool got_summary;             // the stream ended with a summary
  const absl::Status& verify;   // VerifyTarget, when it ran
};

// Sets the result's status and reason: the first failed step, in the order
// of PairSteps, then the summary's status, then every size not OK.
void SetVerdict(absl::string_view initiator, absl::string_view target, const PairSteps& steps,
                v1::PairResult* r);

}  // namespace gdrbench::controller::run
