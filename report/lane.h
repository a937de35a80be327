// A lane: the (initiators' rail, targets' rail) of a matrix or a pair. Every
// mode but cross-rail tests rail r to rail r, and its lanes are its rails;
// --mode cross-rail tests rail i of A to rail j != i of B, one lane per
// (i, j). The v1 messages leave dst_rail absent for same-rail lanes.
// Header-only: the reports, the server's pages and controller/analysis use it.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::report {

// A key unique per lane; a same-rail lane's key is its rail number.
inline uint64_t LaneKey(uint32_t rail, uint32_t dst_rail) {
  return rail == dst_rail ? rail : (uint64_t{dst_rail} + 1) << 32 | rail;
}

// "rail 2", or "rail 0->1" for a cross-rail lane.
inline std::string LaneName(uint32_t rail, uint32_t dst_rail) {
  return rail == dst_rail ? absl::StrCat("rail ", rail) : absl::StrCat("rail ", rail, "->", dst_rail);
}

// The targets' rail of a v1 matrix or pair (absent: `rail`).
inline uint32_t DstRail(const v1::BandwidthMatrix& m) { return m.has_dst_rail() ? m.dst_rail() : m.rail(); }
inline uint32_t DstRail(const v1::PairResult& p) { return p.has_dst_rail() ? p.dst_rail() : p.rail(); }
inline std::string LaneName(const v1::BandwidthMatrix& m) { return LaneName(m.rail(), DstRail(m)); }
inline std::string LaneName(const v1::PairResult& p) { return LaneName(p.rail(), DstRail(p)); }

}  // namespace gdrbench::report
