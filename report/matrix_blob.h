// One bandwidth matrix (a rail at a message size) in the compact binary form
// that the heatmap (report/web/heatmap.js) draws: what the sweep's
// report.html embeds (base64) and what gdrbench-server's dashboard fetches
// (/ui/data/runs/ID/matrix). One float per cell instead of one SVG element or
// one JSON object: 1024 nodes (a million cells) are ~5 MB and decode without
// parsing.
//
// Layout (little-endian, as every browser's typed arrays on x86 and arm64):
//   "GDRM"  u32 version (1)  u32 J  J bytes of JSON  zero padding to 8
//   then the sections the JSON lists, in order, each padded to 8:
//     gbps     f32[n*n]  BW average, row = initiator (src), column = target
//                        (dst); NaN where no test ran
//     code     u8[n*n]   bits 0-2: v1.ResultStatus (0 = not tested),
//                        bits 3-4: verdict (0 none, 1 pass, 2 low, 3 fail)
//     expected f32[n*n]  link rate of the cell (only when cells differ; else
//                        the JSON's "expectedGbps")
//     baseline f32[n*n]  the baseline run's value, 0 = none (only when any)
//     reason   u16[n*n]  index into the JSON's "reasons" (0 = ""; only when any)
//   JSON: {"version":1,"n":N,"rail":R,"sizeBytes":S,"nodes":[...],
//          "dstRail":D (only a cross-rail lane: the targets' rail, R the initiators'),
//          "reasons":["",...],"expectedGbps":X,"fleet":{...},
//          "sections":[{"name":"gbps","type":"f32"},...]}
// Thread safety: a builder is used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::report {

inline constexpr uint32_t kMatrixBlobVersion = 1;
// Distinct reasons kept per matrix; the rest show as kReasonsDropped.
inline constexpr size_t kMaxBlobReasons = 65535;
inline constexpr char kReasonsDropped[] = "(one of too many distinct reasons: see the cells API)";

class MatrixBlobBuilder {
 public:
  MatrixBlobBuilder(std::vector<std::string> nodes, uint32_t rail, uint64_t size_bytes);

  // A cell; src/dst index `nodes`. Out-of-range indices are ignored (the
  // producers validate them). verdict: "pass", "low", "fail" or "".
  void Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps, std::string_view verdict,
           double expected_gbps, double baseline_gbps, std::string_view reason);
  void AddCell(const v1::MatrixCell& cell);
  // The matrix's fleet statistics (optional; shown in the legend).
  void SetFleet(const v1::AxisStats& fleet) { fleet_ = fleet; has_fleet_ = true; }
  // A cross-rail lane's targets' rail (--mode cross-rail); unset: `rail`.
  void SetDstRail(uint32_t dst_rail) { dst_rail_ = dst_rail; }

  std::string Finish() const;
  uint32_t nodes() const { return n_; }

 private:
  uint32_t n_;
  uint32_t rail_;
  std::optional<uint32_t> dst_rail_;
  uint64_t size_bytes_;
  std::vector<std::string> names_;
  std::vector<float> gbps_, expected_, baseline_;
  std::vector<uint8_t> code_;
  std::vector<uint16_t> reason_;
  std::vector<std::string> reasons_{""};
  std::unordered_map<std::string, uint16_t> reason_index_;
  bool any_baseline_ = false;
  bool any_reason_ = false;
  bool expected_varies_ = false;
  bool have_expected_ = false;
  float expected_first_ = 0;
  v1::AxisStats fleet_;
  bool has_fleet_ = false;
};

// The code byte of a cell (see the layout above).
uint8_t CellCode(v1::ResultStatus status, std::string_view verdict);

// A whole v1.BandwidthMatrix.
std::string EncodeMatrix(const v1::BandwidthMatrix& m);

}  // namespace gdrbench::report
