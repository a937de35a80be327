// The copy GPUDirect removes, timed: a gpu-staged test sends from a pinned
// host bounce buffer, so before each message the data has to come off the
// GPU (cuMemcpyDtoH, GpuStagedBuffer::StageToHost). The wire pass alone
// would measure host memory; TimeStaging times that copy and adds it to the
// wire time of the same messages.
//
// Model: copy then send, not overlapped (a sender that stages each message
// before posting it). Per size it times `copies` copies of one message
// (rotating over the QPs' slices, each from the slice's start, where the
// loop sends from), takes their mean, and charges it to every message the
// wire pass sent:
//   copy GB/s        = copies x size / copy time          (10^9 B/s)
//   staged BW Gb/s   = messages x size / (wire time + messages x mean copy)
// A pipeline that overlaps copy and wire is bounded by min(copy, wire), which
// both numbers give. copies = min(messages, 1000, 256 MiB / size), at least 1.
// Thread safety: the sweep's thread; `stage` runs on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/bench/bw_math.h"

namespace gdrbench::agent::bench {

// Copies [offset, offset+length) of the local buffer GPU -> pinned host;
// false with `error` set.
using StageFn = std::function<bool(uint64_t offset, uint64_t length, std::string* error)>;

struct StagingTiming {
  bool ok = false;
  std::string error;              // "staging copy at 65536 B: <CUDA error>"
  uint64_t copies = 0;            // copies timed
  int64_t copy_ns = 0;            // their total
  double copy_gbytes_per_s = 0;   // GPU -> pinned host, 10^9 B/s
  double staged_bw_avg_gbps = 0;  // copy + wire, Gb/s
};

inline constexpr uint64_t kMaxStagingCopies = 1000;
inline constexpr uint64_t kMaxStagingBytes = uint64_t{256} << 20;

// How many copies to time for `messages` messages of `size` bytes.
inline uint64_t StagingCopies(uint64_t messages, uint64_t size) {
  uint64_t by_bytes = size == 0 ? kMaxStagingCopies : kMaxStagingBytes / size;
  return std::max<uint64_t>(1, std::min({messages, kMaxStagingCopies, by_bytes}));
}

// Times the staging copies of one size (see the model above). `now_ns` is the
// sweep's clock (Ops::NowNs); `slices` and `slice_bytes` locate each QP's
// source; `messages` and `wire_ns` are the measured pass's.
template <typename Clock>
StagingTiming TimeStaging(const StageFn& stage, Clock&& now_ns, uint32_t slices,
                          uint64_t slice_bytes, uint64_t size, uint64_t messages,
                          int64_t wire_ns) {
  StagingTiming t;
  const uint64_t copies = StagingCopies(messages, size);
  const int64_t start = now_ns();
  for (uint64_t i = 0; i < copies; ++i) {
    std::string err;
    if (!stage((i % std::max<uint32_t>(slices, 1)) * slice_bytes, size, &err)) {
      t.error = absl::StrCat("staging copy (GPU -> pinned host) at ", size, " B: ", err);
      return t;
    }
  }
  t.copy_ns = now_ns() - start;
  t.copies = copies;
  if (t.copy_ns <= 0) {
    t.error = absl::StrCat("staging copy at ", size, " B: the clock did not advance over ",
                           copies, " copies");
    return t;
  }
  t.ok = true;
  t.copy_gbytes_per_s = static_cast<double>(copies * size) / static_cast<double>(t.copy_ns);
  const double per_message_ns = static_cast<double>(t.copy_ns) / static_cast<double>(copies);
  const auto staged_ns =
      static_cast<int64_t>(static_cast<double>(wire_ns) + per_message_ns * static_cast<double>(messages));
  t.staged_bw_avg_gbps = GbpsOf(messages * size, staged_ns);
  return t;
}

}  // namespace gdrbench::agent::bench
