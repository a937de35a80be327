// --memory with a list ("host,gpu", "host,gpu,gpu-staged"): host and GPU
// memory measured on the same pair in the same test, so a low GPU number can
// be told apart from a bad link (issue 11 item 3).
//
// Design: one connection per kind, back to back within one test: the whole
// OpenTarget -> RunWriteSweep -> VerifyTarget -> CloseTarget sequence
// (RunPairTest) runs once per kind in list order between the same two NICs
// with the same QP count and parameters. Not one QP set with a region per
// kind: that needs a target that registers every kind at once and a sweep
// request that switches regions, which the agent protocol does not have; a
// new connection per kind costs one connection setup (milliseconds on warm
// agents) and measures the same link.
//
// The first kind's result is the PairResult itself (the bandwidth matrix,
// verdicts and blame other than "gdr" see only it); the later kinds are its
// memory_halves. A kind that cannot run (no GPU near the NIC, the agent
// refusing the memory) fails only its own half, with its reason.
// Thread safety: pure functions, and RunPairTestPerKind as RunPairTest.
#pragma once

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "controller/run/pair_tester.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

// "host,gpu" -> {"host", "gpu"}; one item is a list of one. INVALID_ARGUMENT
// for an empty item ("host,,gpu") or a kind named twice.
absl::StatusOr<std::vector<std::string>> SplitMemoryKinds(absl::string_view memory);

// The memory each side asks its agent for in one kind's test, or why the
// kind cannot run on this pair (`unavailable`, one sentence: the half fails
// with it and no RPC is made).
struct KindSides {
  std::string initiator_memory;
  std::string target_memory;
  std::string unavailable;
};

// Runs RunPairTest once per kind, in order, between `initiator` and `target`
// (their `memory` is replaced by each kind's). `result` (its identity filled
// by the caller) gets the first kind's test; each later kind a memory_halves
// entry with the same identity and that kind's endpoint memory. Then the
// ratios (analysis::FillMemoryRatios). Returns the first RPC error of any kind's test
// (as RunPairTest). `kinds` must not be empty.
absl::Status RunPairTestPerKind(const PairSide& initiator, const PairSide& target,
                                absl::Span<const KindSides> kinds, const v1::SweepParams& params,
                                bool bidirectional, const PairTestOptions& options,
                                v1::PairResult* result,
                                absl::FunctionRef<void(bool target, const absl::Status&)> on_answer);

}  // namespace gdrbench::controller::run
