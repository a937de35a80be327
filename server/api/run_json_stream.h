// POST /api/v1/runs without the whole run in memory (issue 31, finding 12:
// a 250 MiB run.json peaked at 1,845 MiB RSS when the body, then the parsed
// v1::Run, were held whole).
//
// The body is fed in the pieces the connection reads. yajl (Debian's
// libyajl, a push parser) reports its tokens; each element of the run's two
// bulky arrays, `pairs` and `matrices`, is rebuilt as JSON text by yajl's
// generator, parsed by protobuf's JSON parser with the same rules as every
// other body (unknown fields refused) and spilled, serialized, to an
// anonymous temporary file; every other top-level field goes into the
// header, parsed at the end. Replay() then hands the ingest the header and
// the chunks that report/run_chunks.h would have cut from the
// whole run: matrices' cells first, then pairs. Memory is bounded by the
// header plus one element (one matrix, one pair); the spill file by the
// body's size limit.
//
// Not thread-safe: one per request.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gdrbench/v1/controller.pb.h"

namespace gdrbench::server::api {

class RunJsonStream {
 public:
  RunJsonStream();
  ~RunJsonStream();
  RunJsonStream(const RunJsonStream&) = delete;
  RunJsonStream& operator=(const RunJsonStream&) = delete;

  // The next piece of the body. INVALID_ARGUMENT naming what is wrong (the
  // JSON, a field, the nesting); once it fails it stays failed.
  absl::Status Feed(std::string_view data);
  // The body ended: the header parsed. INVALID_ARGUMENT when it is not one
  // whole JSON object of a v1.Run.
  absl::Status Finish();

  // After Finish: the header chunk, then matrices' cell chunks, then pair
  // chunks (at most `pairs_per_chunk` pairs each). Stops at fn's first error.
  // With `serialized_pairs`, the pair chunks go to it instead, each a
  // serialized v1.PairChunk made of the spilled pairs' bytes (none parsed).
  absl::Status Replay(const std::function<absl::Status(const v1::RunChunk&)>& fn,
                      size_t pairs_per_chunk = 1024,
                      const std::function<absl::Status(absl::string_view)>& serialized_pairs = nullptr);

  // After Finish: the run without pairs and without its matrices' cells.
  const v1::Run& header() const { return header_; }
  uint64_t pairs() const { return pairs_; }
  uint64_t matrices() const { return matrices_; }
  // The largest element (JSON text of one pair or matrix) held at once.
  size_t largest_element_bytes() const { return largest_element_; }

  struct Parser;  // the yajl callbacks' state (run_json_stream.cc)

 private:
  absl::Status Spill(int kind, const google::protobuf::Message& m);

  std::unique_ptr<Parser> parser_;
  std::FILE* spill_ = nullptr;  // tmpfile(): (kind, length, bytes) records
  v1::Run header_;
  std::vector<v1::BandwidthMatrix> matrix_heads_;  // each matrix without its cells
  uint64_t pairs_ = 0, matrices_ = 0;
  size_t largest_element_ = 0;
  uint64_t fed_ = 0;
  bool finished_ = false;
  absl::Status failed_;
  friend struct Parser;
};

}  // namespace gdrbench::server::api
