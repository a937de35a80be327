// A resume's decode of a test record (journal_records.h: DecodeFinished):
// the JournalTest's wire bytes walked once with protobuf's CodedInputStream,
// the fields a resume needs read and every other one skipped by its wire
// length. Parsing the whole message and rebuilding the PairResult (strings
// of both endpoints, the summary, the timestamp) was most of a resume's read
// of a 1024 x 8 journal (bench/results/2026-12-05-journal-read-back-2.txt).
#include <cstring>

#include "common/status.h"
#include "controller/run/journal_records.h"
#include "google/protobuf/io/coded_stream.h"

namespace gdrbench::controller::run::journal_records {
namespace {

using google::protobuf::io::CodedInputStream;
using Rate = analysis::MeasuredTest::Rate;

// Protocol Buffers wire format (protobuf.dev/programming-guides/encoding):
// tag = field << 3 | wire type; 0 varint, 1 fixed 64-bit, 2 length-delimited,
// 5 fixed 32-bit (3 and 4, groups, are never written).
constexpr uint32_t Tag(int field, int wire_type) {
  return static_cast<uint32_t>(field) << 3 | static_cast<uint32_t>(wire_type);
}

// Skips the field whose `tag` was just read; false when it is malformed.
bool SkipField(CodedInputStream& in, uint32_t tag) {
  uint64_t v = 0;
  uint32_t n = 0;
  switch (tag & 7) {
    case 0: return in.ReadVarint64(&v);
    case 1: return in.Skip(8);
    case 2: return in.ReadVarint32(&n) && in.Skip(static_cast<int>(n));
    case 5: return in.Skip(4);
    default: return false;
  }
}

bool ReadDouble(CodedInputStream& in, double* v) {
  uint64_t bits = 0;
  if (!in.ReadLittleEndian64(&bits)) return false;
  std::memcpy(v, &bits, sizeof bits);
  return true;
}

// A string field as a view into `base` (the bytes `in` reads).
bool ReadView(CodedInputStream& in, const char* base, std::string_view* out) {
  uint32_t n = 0;
  if (!in.ReadVarint32(&n)) return false;
  const int at = in.CurrentPosition();
  if (!in.Skip(static_cast<int>(n))) return false;
  *out = std::string_view(base + at, n);
  return true;
}

// One SizeResult: its size and BW average (the rest skipped), appended.
bool ReadRate(CodedInputStream& in, std::vector<Rate>* out) {
  uint32_t n = 0;
  if (!in.ReadVarint32(&n)) return false;
  const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(n));
  Rate r;
  while (const uint32_t tag = in.ReadTag()) {
    const bool ok = tag == Tag(v1::SizeResult::kSizeBytesFieldNumber, 0)   ? in.ReadVarint64(&r.size_bytes)
                    : tag == Tag(v1::SizeResult::kBwAvgGbpsFieldNumber, 1) ? ReadDouble(in, &r.bw_avg_gbps)
                                                                           : SkipField(in, tag);
    if (!ok) return false;
  }
  if (in.BytesUntilLimit() != 0) return false;  // a zero tag, or the bytes ran out
  in.PopLimit(limit);
  out->push_back(r);
  return true;
}

// The record's fields a resume needs; false when the bytes are malformed.
bool ReadFields(CodedInputStream& in, const char* base, FinishedTest* out, bool* has_dst_rail,
                bool* has_expected) {
  analysis::MeasuredTest& m = out->measured;
  uint32_t status = 0;
  while (const uint32_t tag = in.ReadTag()) {
    bool ok = true;
    switch (tag) {
      case Tag(v1::JournalTest::kSrcFieldNumber, 0): ok = in.ReadVarint32(&out->src); break;
      case Tag(v1::JournalTest::kDstFieldNumber, 0): ok = in.ReadVarint32(&out->dst); break;
      case Tag(v1::JournalTest::kRailFieldNumber, 0): ok = in.ReadVarint32(&m.rail); break;
      case Tag(v1::JournalTest::kRoundFieldNumber, 0): ok = in.ReadVarint32(&out->round); break;
      case Tag(v1::JournalTest::kStatusFieldNumber, 0): ok = in.ReadVarint32(&status); break;
      case Tag(v1::JournalTest::kReasonFieldNumber, 2): ok = ReadView(in, base, &m.reason); break;
      case Tag(v1::JournalTest::kSizesFieldNumber, 2): ok = ReadRate(in, &m.sizes); break;
      case Tag(v1::JournalTest::kReverseSizesFieldNumber, 2): ok = ReadRate(in, &m.reverse_sizes); break;
      case Tag(v1::JournalTest::kExpectedGbpsFieldNumber, 1):
        ok = ReadDouble(in, &m.expected_gbps);
        *has_expected = true;
        break;
      case Tag(v1::JournalTest::kDstRailFieldNumber, 0):
        ok = in.ReadVarint32(&m.dst_rail);
        *has_dst_rail = true;
        break;
      default: ok = SkipField(in, tag);
    }
    if (!ok) return false;
  }
  m.status = static_cast<v1::ResultStatus>(static_cast<int32_t>(status));
  return true;
}

}  // namespace

absl::Status DecodeFinished(const char* p, size_t n, const FlatPlan& plan, FinishedTest* out) {
  out->src = out->dst = out->round = 0;
  out->src_node = out->dst_node = {};
  analysis::MeasuredTest& m = out->measured;
  m.rail = m.dst_rail = 0;
  m.status = v1::RESULT_STATUS_UNSPECIFIED;
  m.reason = {};
  m.expected_gbps = 0;
  m.sizes.clear();
  m.reverse_sizes.clear();
  bool has_dst_rail = false, has_expected = false;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(p), static_cast<int>(n));
  if (!ReadFields(in, p, out, &has_dst_rail, &has_expected) ||
      static_cast<size_t>(in.CurrentPosition()) != n) {
    return absl::DataLossError("bad test record");
  }
  if (!has_dst_rail) m.dst_rail = m.rail;
  GDR_RETURN_IF_ERROR(plan.Check(out->src, out->dst, m.rail, has_dst_rail, m.dst_rail));
  if (!has_expected) m.expected_gbps = plan.ExpectedGbps(out->src, out->dst, m.rail, m.dst_rail);
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::run::journal_records
