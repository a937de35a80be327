#include "report/matrix_blob.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::report {
namespace {

void AppendU32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 4);
}

void Pad8(std::string* out) { out->append((8 - out->size() % 8) % 8, '\0'); }

// Typed arrays are little-endian on every platform gdrbench builds for; the
// static_assert keeps a big-endian port from writing garbage silently.
template <typename T>
void AppendArray(std::string* out, const std::vector<T>& v) {
  static_assert(std::endian::native == std::endian::little, "the blob format is little-endian");
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  Pad8(out);
}

google::protobuf::Value Num(double v) {
  google::protobuf::Value x;
  x.set_number_value(v);
  return x;
}

google::protobuf::Value Str(std::string_view s) {
  google::protobuf::Value x;
  x.set_string_value(std::string(s));
  return x;
}

google::protobuf::Value Section(const char* name, const char* type) {
  google::protobuf::Value x;
  auto& f = *x.mutable_struct_value()->mutable_fields();
  f["name"] = Str(name);
  f["type"] = Str(type);
  return x;
}

}  // namespace

uint8_t CellCode(v1::ResultStatus status, std::string_view verdict) {
  uint8_t v = verdict == "pass" ? 1 : verdict == "low" ? 2 : verdict == "fail" ? 3 : 0;
  return static_cast<uint8_t>((static_cast<uint32_t>(status) & 7) | (v << 3));
}

MatrixBlobBuilder::MatrixBlobBuilder(std::vector<std::string> nodes, uint32_t rail, uint64_t size_bytes)
    : n_(static_cast<uint32_t>(nodes.size())), rail_(rail), size_bytes_(size_bytes), names_(std::move(nodes)) {
  const size_t cells = size_t{n_} * n_;
  gbps_.assign(cells, std::numeric_limits<float>::quiet_NaN());
  code_.assign(cells, 0);
}

void MatrixBlobBuilder::Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps,
                            std::string_view verdict, double expected_gbps, double baseline_gbps,
                            std::string_view reason) {
  if (src >= n_ || dst >= n_) return;
  const size_t i = size_t{src} * n_ + dst;
  gbps_[i] = status == v1::RESULT_STATUS_OK ? static_cast<float>(gbps) : std::numeric_limits<float>::quiet_NaN();
  code_[i] = CellCode(status, verdict);
  const float e = static_cast<float>(expected_gbps);
  if (!have_expected_) {
    have_expected_ = true;
    expected_first_ = e;
  } else if (e != expected_first_ && !expected_varies_) {
    expected_varies_ = true;
  }
  if (expected_varies_ || !expected_.empty()) {
    if (expected_.empty()) expected_.assign(gbps_.size(), expected_first_);
    expected_[i] = e;
  }
  if (baseline_gbps > 0) {
    if (baseline_.empty()) baseline_.assign(gbps_.size(), 0.0f);
    baseline_[i] = static_cast<float>(baseline_gbps);
    any_baseline_ = true;
  }
  if (!reason.empty()) {
    if (reason_.empty()) reason_.assign(gbps_.size(), 0);
    auto it = reason_index_.find(std::string(reason));
    uint16_t k;
    if (it != reason_index_.end()) {
      k = it->second;
    } else if (reasons_.size() < kMaxBlobReasons) {
      k = static_cast<uint16_t>(reasons_.size());
      reasons_.emplace_back(reason);
      reason_index_.emplace(std::string(reason), k);
    } else {
      auto dropped = reason_index_.find(kReasonsDropped);
      if (dropped == reason_index_.end()) {
        // The last slot names the overflow.
        k = static_cast<uint16_t>(reasons_.size() - 1);
        reasons_.back() = kReasonsDropped;
        reason_index_.emplace(kReasonsDropped, k);
      } else {
        k = dropped->second;
      }
    }
    reason_[i] = k;
    any_reason_ = true;
  }
}

void MatrixBlobBuilder::AddCell(const v1::MatrixCell& c) {
  Add(c.src(), c.dst(), c.status(), c.bw_avg_gbps(), c.verdict(), c.expected_gbps(), c.baseline_gbps(),
      c.reason());
}

std::string MatrixBlobBuilder::Finish() const {
  google::protobuf::Struct head;
  auto& f = *head.mutable_fields();
  f["version"] = Num(kMatrixBlobVersion);
  f["n"] = Num(n_);
  f["rail"] = Num(rail_);
  if (dst_rail_ && *dst_rail_ != rail_) f["dstRail"] = Num(*dst_rail_);
  f["sizeBytes"] = Num(static_cast<double>(size_bytes_));
  auto* nodes = f["nodes"].mutable_list_value();
  for (const auto& n : names_) *nodes->add_values() = Str(n);
  auto* reasons = f["reasons"].mutable_list_value();
  for (const auto& r : reasons_) *reasons->add_values() = Str(r);
  f["expectedGbps"] = Num(expected_varies_ ? 0 : expected_first_);
  if (has_fleet_) {
    auto& fl = *f["fleet"].mutable_struct_value()->mutable_fields();
    fl["minGbps"] = Num(fleet_.min_gbps());
    fl["medianGbps"] = Num(fleet_.median_gbps());
    fl["maxGbps"] = Num(fleet_.max_gbps());
    fl["okCells"] = Num(fleet_.ok_cells());
    fl["lowCells"] = Num(fleet_.low_cells());
    fl["badCells"] = Num(fleet_.bad_cells());
  }
  auto* sections = f["sections"].mutable_list_value();
  *sections->add_values() = Section("gbps", "f32");
  *sections->add_values() = Section("code", "u8");
  if (expected_varies_) *sections->add_values() = Section("expected", "f32");
  if (any_baseline_) *sections->add_values() = Section("baseline", "f32");
  if (any_reason_) *sections->add_values() = Section("reason", "u16");
  std::string json;
  // A Struct of numbers, strings and lists always converts.
  (void)google::protobuf::util::MessageToJsonString(head, &json);

  std::string out = "GDRM";
  AppendU32(&out, kMatrixBlobVersion);
  AppendU32(&out, static_cast<uint32_t>(json.size()));
  out += json;
  Pad8(&out);
  AppendArray(&out, gbps_);
  AppendArray(&out, code_);
  if (expected_varies_) AppendArray(&out, expected_);
  if (any_baseline_) AppendArray(&out, baseline_);
  if (any_reason_) AppendArray(&out, reason_);
  return out;
}

std::string EncodeMatrix(const v1::BandwidthMatrix& m) {
  MatrixBlobBuilder b(std::vector<std::string>(m.nodes().begin(), m.nodes().end()), m.rail(), m.size_bytes());
  for (const auto& c : m.cells()) b.AddCell(c);
  if (m.has_fleet()) b.SetFleet(m.fleet());
  if (m.has_dst_rail()) b.SetDstRail(m.dst_rail());
  return b.Finish();
}

}  // namespace gdrbench::report
