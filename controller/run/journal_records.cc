#include "controller/run/journal_records.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "controller/run/pair_tester.h"

namespace gdrbench::controller::run::journal_records {
namespace {

// Protocol Buffers wire format (protobuf.dev/programming-guides/encoding):
// tag = field << 3 | wire type; 0 varint, 1 fixed 64-bit (little-endian), 2
// length-delimited.
char* EncodeVarint(uint64_t v, char* p) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

char* EncodeTag(int field, int wire_type, char* p) {
  return EncodeVarint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type), p);
}

// A record is encoded straight into the journal buffer: AppendTest grows it
// once by a bound on the record's size, writes through a pointer and trims
// it (an append per field was a fifth of the journal's cost). The
// sub-messages of every record (SizeResult, SweepSummary, Timestamp) are
// written field by field here, in proto3's encoding (a zero scalar and an
// empty string are absent): protobuf's own serializer cost three times as
// much per record (its output stream set up per message, and every string
// checked for UTF-8 again, though each came from a parsed message or from
// our own code). journal_test pins, by walking each message's descriptor
// with every field set, that the bytes parse back into the same message:
// a field added to the proto fails it until it is written here. Rare nested
// messages (latency, counters) still go through protobuf.
constexpr size_t kFieldOverhead = 13;  // a tag (at most 3 bytes) and a varint (at most 10)
constexpr size_t kLengthRoom = 4;      // a nested message's length: < 256 MiB (a record is < 64 MiB)

struct Writer {
  char* p;
  void Varint(int field, uint64_t v) { p = EncodeVarint(v, EncodeTag(field, 0, p)); }
  // proto3 scalars: absent when zero. int32/int64/enum values are varints of
  // their 64-bit two's complement (a negative one is 10 bytes).
  void U64(int field, uint64_t v) {
    if (v != 0) Varint(field, v);
  }
  void I64(int field, int64_t v) {
    if (v != 0) Varint(field, static_cast<uint64_t>(v));
  }
  void Fixed64(int field, uint64_t bits) {
    p = EncodeTag(field, 1, p);
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  static uint64_t Bits(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  }
  // Absent when +0.0 (-0.0 is written: its bits are not zero).
  void Double(int field, double v) {
    if (const uint64_t bits = Bits(v); bits != 0) Fixed64(field, bits);
  }
  void String(int field, const std::string& s) {
    p = EncodeVarint(s.size(), EncodeTag(field, 2, p));
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void NonEmpty(int field, const std::string& s) {
    if (!s.empty()) String(field, s);
  }
  // `m`'s size cached by ByteSizeLong before.
  void Message(int field, const google::protobuf::MessageLite& m) {
    p = EncodeVarint(static_cast<uint64_t>(m.GetCachedSize()), EncodeTag(field, 2, p));
    p = reinterpret_cast<char*>(m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p)));
  }
  // A nested message written by hand: Begin, its fields, End (which writes
  // the length in front and moves the body up to it).
  char* Begin(int field) {
    p = EncodeTag(field, 2, p);
    char* mark = p;
    p += kLengthRoom;
    return mark;
  }
  void End(char* mark) {
    const size_t n = static_cast<size_t>(p - (mark + kLengthRoom));
    char len[kLengthRoom + 7];
    const size_t k = static_cast<size_t>(EncodeVarint(n, len) - len);
    std::memcpy(mark, len, k);
    if (k < kLengthRoom) std::memmove(mark + k, mark + kLengthRoom, n);
    p = mark + k + n;
  }
};

// A bound on what WriteSize writes (it calls ByteSizeLong on the latency).
size_t SizeBound(const v1::SizeResult& z) {
  size_t n = kFieldOverhead * 16 + z.error().size() + z.perftest_command().size();
  if (z.has_latency()) n += z.latency().ByteSizeLong();
  return n;
}

void WriteSize(int field, const v1::SizeResult& z, Writer& w) {
  char* mark = w.Begin(field);
  w.U64(1, z.size_bytes());
  w.U64(2, z.iterations());
  w.Double(3, z.bw_peak_gbps());
  w.Double(4, z.bw_avg_gbps());
  w.Double(5, z.msg_rate_mpps());
  w.I64(6, z.duration_ns());
  w.I64(7, z.status());
  w.NonEmpty(8, z.error());
  w.U64(9, z.verified());
  w.U64(10, z.verify_first_bad_offset());
  w.NonEmpty(11, z.perftest_command());
  if (z.has_latency()) w.Message(12, z.latency());
  w.Double(13, z.staged_copy_gbytes_per_s());
  w.Double(14, z.staged_bw_avg_gbps());
  w.U64(15, z.staged_copies());
  w.End(mark);
}

size_t SummaryBound(const v1::SweepSummary& m) {
  size_t n = kFieldOverhead * 23 + m.error().size() + m.memory_kind().size() + m.registration().size() +
             m.device().size() + m.gid().size() + m.gid_type().size() + m.local_address().size() +
             m.remote_address().size() + m.perftest_command().size() + m.gid_choice().size();
  for (const auto& z : m.reverse_checks()) n += kFieldOverhead + SizeBound(z);
  if (m.has_counters()) n += m.counters().ByteSizeLong();
  return n;
}

void WriteSummary(int field, const v1::SweepSummary& m, Writer& w) {
  char* mark = w.Begin(field);
  w.I64(1, m.status());
  w.NonEmpty(2, m.error());
  w.NonEmpty(3, m.memory_kind());
  w.NonEmpty(4, m.registration());
  w.NonEmpty(5, m.device());
  w.U64(6, m.port());
  w.I64(7, m.gid_index());
  w.NonEmpty(8, m.gid());
  w.NonEmpty(9, m.gid_type());
  w.U64(10, m.qps());
  w.U64(11, m.total_bytes());
  w.I64(12, m.duration_ns());
  w.Double(13, m.bw_avg_gbps_best());
  w.NonEmpty(14, m.local_address());
  w.NonEmpty(15, m.remote_address());
  w.U64(16, m.path_mtu_bytes());
  w.NonEmpty(17, m.perftest_command());
  for (const auto& z : m.reverse_checks()) WriteSize(18, z, w);
  w.I64(19, m.cm());
  w.NonEmpty(20, m.gid_choice());
  if (m.has_counters()) w.Message(21, m.counters());
  w.U64(22, m.sizes_in_lockstep());  // bool: the same varint
  w.End(mark);
}

void WriteTimestamp(int field, const google::protobuf::Timestamp& t, Writer& w) {
  char* mark = w.Begin(field);
  w.I64(1, t.seconds());
  w.I64(2, t.nanos());
  w.End(mark);
}

bool SameEndpoint(const v1::Endpoint& e, const v1::JournalPlanNode& n, uint32_t rail) {
  const v1::JournalPlanRail& r = n.rails(static_cast<int>(rail));
  return e.node() == n.name() && e.agent_address() == n.agent_address() && e.nic_device() == r.nic_device() &&
         e.memory() == r.memory();
}

void FillEndpoint(const v1::JournalPlanNode& n, uint32_t rail, v1::Endpoint* e) {
  const v1::JournalPlanRail& r = n.rails(static_cast<int>(rail));
  e->set_node(n.name());
  e->set_agent_address(n.agent_address());
  e->set_nic_device(r.nic_device());
  e->set_memory(r.memory());
}

}  // namespace

double PlanExpectedGbps(const v1::JournalPlan& plan, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) {
  return ExpectedGbps(plan.nodes(static_cast<int>(src)).rails(static_cast<int>(rail)).link_gbps(),
                      plan.nodes(static_cast<int>(dst)).rails(static_cast<int>(dst_rail)).link_gbps());
}

absl::Status AppendTest(const v1::PairResult& p, uint32_t src, uint32_t dst, double plan_expected_gbps,
                        const v1::JournalPlan& plan, std::string* out) {
  const auto& s = plan.nodes(static_cast<int>(src));
  const auto& d = plan.nodes(static_cast<int>(dst));
  const uint32_t dst_rail = p.has_dst_rail() ? p.dst_rail() : p.rail();
  if (p.rail() >= static_cast<uint32_t>(s.rails_size()) || dst_rail >= static_cast<uint32_t>(d.rails_size()) ||
      !SameEndpoint(p.src(), s, p.rail()) || !SameEndpoint(p.dst(), d, dst_rail)) {
    return absl::InternalError(absl::StrCat("journal: the result of ", p.src().node(), "->", p.dst().node(),
                                            " rail ", p.rail(), p.has_dst_rail() ? absl::StrCat("->", dst_rail) : "",
                                            " does not carry the plan's endpoints"));
  }
  const std::string& src_kind = p.src().memory_kind();
  const std::string& src_reg = p.src().registration();
  // The bound: every field at its largest.
  size_t bound = 18 * kFieldOverhead + p.reason().size() + src_kind.size() + src_reg.size() +
                 p.dst().memory_kind().size() + p.dst().registration().size();
  for (const auto& z : p.sizes()) bound += kFieldOverhead + SizeBound(z);
  for (const auto& z : p.reverse_sizes()) bound += kFieldOverhead + SizeBound(z);
  if (p.has_summary()) bound += SummaryBound(p.summary());
  // ByteSizeLong also caches the sizes Writer::Message writes.
  if (p.has_src_counters()) bound += kFieldOverhead + p.src_counters().ByteSizeLong();
  if (p.has_dst_counters()) bound += kFieldOverhead + p.dst_counters().ByteSizeLong();
  const size_t at = out->size();
  out->resize(at + bound);
  Writer w{out->data() + at};
  if (src) w.Varint(v1::JournalTest::kSrcFieldNumber, src);
  if (dst) w.Varint(v1::JournalTest::kDstFieldNumber, dst);
  if (p.rail()) w.Varint(v1::JournalTest::kRailFieldNumber, p.rail());
  // Cross-rail only (optional: present even when 0, so rail 1 -> rail 0 stays that).
  if (p.has_dst_rail()) w.Varint(v1::JournalTest::kDstRailFieldNumber, p.dst_rail());
  if (p.round()) w.Varint(v1::JournalTest::kRoundFieldNumber, p.round());
  w.I64(v1::JournalTest::kStatusFieldNumber, p.status());
  if (!p.reason().empty()) w.String(v1::JournalTest::kReasonFieldNumber, p.reason());
  for (const auto& z : p.sizes()) WriteSize(v1::JournalTest::kSizesFieldNumber, z, w);
  if (p.has_summary()) WriteSummary(v1::JournalTest::kSummaryFieldNumber, p.summary(), w);
  if (p.attempts()) w.Varint(v1::JournalTest::kAttemptsFieldNumber, p.attempts());
  w.U64(v1::JournalTest::kVerifySeedFieldNumber, p.verify_seed());
  if (p.has_started_at()) WriteTimestamp(v1::JournalTest::kStartedAtFieldNumber, p.started_at(), w);
  w.I64(v1::JournalTest::kDurationNsFieldNumber, p.duration_ns());
  // Present even when 0 (optional): the plan's rate is not this pair's.
  if (p.expected_gbps() != plan_expected_gbps) {
    w.Fixed64(v1::JournalTest::kExpectedGbpsFieldNumber, Writer::Bits(p.expected_gbps()));
  }
  for (const auto& z : p.reverse_sizes()) WriteSize(v1::JournalTest::kReverseSizesFieldNumber, z, w);
  if (src_kind != p.summary().memory_kind()) w.String(v1::JournalTest::kSrcMemoryKindFieldNumber, src_kind);
  if (src_reg != p.summary().registration()) w.String(v1::JournalTest::kSrcRegistrationFieldNumber, src_reg);
  if (p.dst().memory_kind() != src_kind) {
    w.String(v1::JournalTest::kDstMemoryKindFieldNumber, p.dst().memory_kind());
  }
  if (p.dst().registration() != src_reg) {
    w.String(v1::JournalTest::kDstRegistrationFieldNumber, p.dst().registration());
  }
  if (p.has_src_counters()) w.Message(v1::JournalTest::kSrcCountersFieldNumber, p.src_counters());
  if (p.has_dst_counters()) w.Message(v1::JournalTest::kDstCountersFieldNumber, p.dst_counters());
  out->resize(static_cast<size_t>(w.p - out->data()));
  return absl::OkStatus();
}

namespace {

absl::Status OutsidePlan(uint32_t src, uint32_t dst, uint32_t rail, bool has_dst_rail, uint32_t dst_rail,
                         uint32_t nodes) {
  return absl::DataLossError(absl::StrCat("a record names node ", src, " -> ", dst, " rail ", rail,
                                          has_dst_rail ? absl::StrCat(" -> ", dst_rail) : "",
                                          ", outside the journal's plan of ", nodes, " nodes"));
}

}  // namespace

absl::Status CheckIndices(const v1::JournalPlan& plan, uint32_t src, uint32_t dst, uint32_t rail,
                          bool has_dst_rail, uint32_t dst_rail) {
  const auto nodes = static_cast<uint32_t>(plan.nodes_size());
  if (src >= nodes || dst >= nodes ||
      rail >= static_cast<uint32_t>(plan.nodes(static_cast<int>(src)).rails_size()) ||
      dst_rail >= static_cast<uint32_t>(plan.nodes(static_cast<int>(dst)).rails_size())) {
    return OutsidePlan(src, dst, rail, has_dst_rail, dst_rail, nodes);
  }
  return absl::OkStatus();
}

FlatPlan::FlatPlan(const v1::JournalPlan& plan) : nodes_(static_cast<uint32_t>(plan.nodes_size())) {
  for (const auto& n : plan.nodes()) max_rails_ = std::max(max_rails_, static_cast<uint32_t>(n.rails_size()));
  rails_.reserve(nodes_);
  link_gbps_.resize(size_t{nodes_} * max_rails_);
  for (uint32_t i = 0; i < nodes_; ++i) {
    const auto& n = plan.nodes(static_cast<int>(i));
    rails_.push_back(static_cast<uint32_t>(n.rails_size()));
    for (int r = 0; r < n.rails_size(); ++r) link_gbps_[size_t{i} * max_rails_ + r] = n.rails(r).link_gbps();
  }
}

absl::Status FlatPlan::Check(uint32_t src, uint32_t dst, uint32_t rail, bool has_dst_rail,
                             uint32_t dst_rail) const {
  if (src >= nodes_ || dst >= nodes_ || rail >= rails_[src] || dst_rail >= rails_[dst]) {
    return OutsidePlan(src, dst, rail, has_dst_rail, dst_rail, nodes_);
  }
  return absl::OkStatus();
}

double FlatPlan::ExpectedGbps(uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) const {
  return run::ExpectedGbps(link_gbps_[size_t{src} * max_rails_ + rail],
                           link_gbps_[size_t{dst} * max_rails_ + dst_rail]);
}

absl::Status ToPairResult(const v1::JournalTest& t, const v1::JournalPlan& plan, v1::PairResult* out) {
  const uint32_t dst_rail = t.has_dst_rail() ? t.dst_rail() : t.rail();
  if (absl::Status st = CheckIndices(plan, t.src(), t.dst(), t.rail(), t.has_dst_rail(), dst_rail);
      !st.ok()) {
    return st;
  }
  // Every field assigned, none cleared first: `out`'s strings, sizes and
  // sub-messages from the record before are reused (a Clear deletes the
  // sub-messages; new/delete of them was a sixth of a resume's read).
  FillEndpoint(plan.nodes(static_cast<int>(t.src())), t.rail(), out->mutable_src());
  FillEndpoint(plan.nodes(static_cast<int>(t.dst())), dst_rail, out->mutable_dst());
  out->set_rail(t.rail());
  if (t.has_dst_rail()) {
    out->set_dst_rail(dst_rail);
  } else {
    out->clear_dst_rail();
  }
  out->set_round(t.round());
  out->set_status(t.status());
  out->set_reason(t.reason());
  *out->mutable_sizes() = t.sizes();
  if (t.has_summary()) {
    *out->mutable_summary() = t.summary();
  } else {
    out->clear_summary();
  }
  out->set_attempts(t.attempts());
  out->set_verify_seed(t.verify_seed());
  if (t.has_started_at()) {
    *out->mutable_started_at() = t.started_at();
  } else {
    out->clear_started_at();
  }
  out->set_duration_ns(t.duration_ns());
  out->set_expected_gbps(t.has_expected_gbps() ? t.expected_gbps()
                                               : PlanExpectedGbps(plan, t.src(), t.dst(), t.rail(), dst_rail));
  *out->mutable_reverse_sizes() = t.reverse_sizes();
  v1::Endpoint* s = out->mutable_src();
  const v1::SweepSummary& sum = t.summary();
  s->set_memory_kind(t.has_src_memory_kind() ? t.src_memory_kind() : sum.memory_kind());
  s->set_registration(t.has_src_registration() ? t.src_registration() : sum.registration());
  out->mutable_dst()->set_memory_kind(t.has_dst_memory_kind() ? t.dst_memory_kind() : s->memory_kind());
  out->mutable_dst()->set_registration(t.has_dst_registration() ? t.dst_registration() : s->registration());
  if (t.has_src_counters()) {
    *out->mutable_src_counters() = t.src_counters();
  } else {
    out->clear_src_counters();
  }
  if (t.has_dst_counters()) {
    *out->mutable_dst_counters() = t.dst_counters();
  } else {
    out->clear_dst_counters();
  }
  return absl::OkStatus();
}

// Record checksum: a word-at-a-time multiplicative hash (FNV-1a's byte loop
// was the largest single cost of journaling zero-time tests). Detects torn
// and garbled records; not cryptographic.
uint32_t FrameChecksum(const char* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + i, n - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace gdrbench::controller::run::journal_records
