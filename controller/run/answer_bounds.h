// What an agent may answer to a RunWriteSweep (issue 12, item 7): only the
// sizes asked for, each once, then one summary; every rate finite, not
// negative and within the link rate times a margin (or, with the rate
// unknown, limits::kMaxPlausibleGbps). The first impossible message is the
// test's error; the rest of the stream is dropped, never kept.
//
// Thread safety: one per test, one thread.
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "gdrbench/v1/agent.pb.h"

namespace gdrbench::controller::run {

class AnswerBounds {
 public:
  // `link_gbps` 0: unknown.
  AnswerBounds(const v1::SweepParams& asked, double link_gbps);

  // OK to keep `m`; INVALID_ARGUMENT with the sentence otherwise (and for
  // every message after the first bad one).
  absl::Status Check(const v1::RunWriteSweepResponse& m);
  const absl::Status& first_error() const { return error_; }

 private:
  absl::Status CheckRate(const char* what, double v) const;

  // Sizes asked and not answered yet, sorted, no repeats (inline: a set's
  // node per size was an allocation per test in the controller bench).
  absl::InlinedVector<uint64_t, 8> pending_;
  double ceiling_gbps_;
  bool summary_seen_ = false;
  absl::Status error_;
};

}  // namespace gdrbench::controller::run
