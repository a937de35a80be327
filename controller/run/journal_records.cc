#include "controller/run/journal_records.h"

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
// it (an append per field was a fifth of the journal's cost).
constexpr size_t kFieldOverhead = 13;  // a tag (at most 3 bytes) and a varint (at most 10)

struct Writer {
  char* p;
  void Varint(int field, uint64_t v) { p = EncodeVarint(v, EncodeTag(field, 0, p)); }
  void Double(int field, double v) {
    p = EncodeTag(field, 1, p);
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  void String(int field, const std::string& s) {
    p = EncodeVarint(s.size(), EncodeTag(field, 2, p));
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  // `m`'s size cached by ByteSizeLong before.
  void Message(int field, const google::protobuf::MessageLite& m) {
    p = EncodeVarint(static_cast<uint64_t>(m.GetCachedSize()), EncodeTag(field, 2, p));
    p = reinterpret_cast<char*>(m.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p)));
  }
};

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
  const bool put_src_kind = src_kind != p.summary().memory_kind();
  const bool put_src_reg = src_reg != p.summary().registration();
  const bool put_dst_kind = p.dst().memory_kind() != src_kind;
  const bool put_dst_reg = p.dst().registration() != src_reg;
  // The bound: every field at its largest; ByteSizeLong caches each
  // message's size for Writer::Message.
  size_t bound = 17 * kFieldOverhead + p.reason().size() + src_kind.size() + src_reg.size() +
                 p.dst().memory_kind().size() + p.dst().registration().size();
  for (const auto& z : p.sizes()) bound += kFieldOverhead + z.ByteSizeLong();
  for (const auto& z : p.reverse_sizes()) bound += kFieldOverhead + z.ByteSizeLong();
  if (p.has_summary()) bound += p.summary().ByteSizeLong();
  if (p.has_started_at()) bound += p.started_at().ByteSizeLong();
  const size_t at = out->size();
  out->resize(at + bound);
  Writer w{out->data() + at};
  if (src) w.Varint(v1::JournalTest::kSrcFieldNumber, src);
  if (dst) w.Varint(v1::JournalTest::kDstFieldNumber, dst);
  if (p.rail()) w.Varint(v1::JournalTest::kRailFieldNumber, p.rail());
  // Cross-rail only (optional: present even when 0, so rail 1 -> rail 0 stays that).
  if (p.has_dst_rail()) w.Varint(v1::JournalTest::kDstRailFieldNumber, p.dst_rail());
  if (p.round()) w.Varint(v1::JournalTest::kRoundFieldNumber, p.round());
  if (p.status()) w.Varint(v1::JournalTest::kStatusFieldNumber, static_cast<uint64_t>(p.status()));
  if (!p.reason().empty()) w.String(v1::JournalTest::kReasonFieldNumber, p.reason());
  for (const auto& z : p.sizes()) w.Message(v1::JournalTest::kSizesFieldNumber, z);
  if (p.has_summary()) w.Message(v1::JournalTest::kSummaryFieldNumber, p.summary());
  if (p.attempts()) w.Varint(v1::JournalTest::kAttemptsFieldNumber, p.attempts());
  if (p.has_started_at()) w.Message(v1::JournalTest::kStartedAtFieldNumber, p.started_at());
  if (p.duration_ns()) w.Varint(v1::JournalTest::kDurationNsFieldNumber, static_cast<uint64_t>(p.duration_ns()));
  if (p.expected_gbps() != plan_expected_gbps) w.Double(v1::JournalTest::kExpectedGbpsFieldNumber, p.expected_gbps());
  for (const auto& z : p.reverse_sizes()) w.Message(v1::JournalTest::kReverseSizesFieldNumber, z);
  if (put_src_kind) w.String(v1::JournalTest::kSrcMemoryKindFieldNumber, src_kind);
  if (put_src_reg) w.String(v1::JournalTest::kSrcRegistrationFieldNumber, src_reg);
  if (put_dst_kind) w.String(v1::JournalTest::kDstMemoryKindFieldNumber, p.dst().memory_kind());
  if (put_dst_reg) w.String(v1::JournalTest::kDstRegistrationFieldNumber, p.dst().registration());
  out->resize(static_cast<size_t>(w.p - out->data()));
  return absl::OkStatus();
}

absl::Status ToPairResult(v1::JournalTest&& t, const v1::JournalPlan& plan, v1::PairResult* out) {
  const auto nodes = static_cast<uint32_t>(plan.nodes_size());
  const uint32_t dst_rail = t.has_dst_rail() ? t.dst_rail() : t.rail();
  if (t.src() >= nodes || t.dst() >= nodes ||
      t.rail() >= static_cast<uint32_t>(plan.nodes(static_cast<int>(t.src())).rails_size()) ||
      dst_rail >= static_cast<uint32_t>(plan.nodes(static_cast<int>(t.dst())).rails_size())) {
    return absl::DataLossError(absl::StrCat("a record names node ", t.src(), " -> ", t.dst(), " rail ", t.rail(),
                                            t.has_dst_rail() ? absl::StrCat(" -> ", dst_rail) : "",
                                            ", outside the journal's plan of ", nodes, " nodes"));
  }
  FillEndpoint(plan.nodes(static_cast<int>(t.src())), t.rail(), out->mutable_src());
  FillEndpoint(plan.nodes(static_cast<int>(t.dst())), dst_rail, out->mutable_dst());
  out->set_rail(t.rail());
  if (t.has_dst_rail()) out->set_dst_rail(dst_rail);
  out->set_round(t.round());
  out->set_status(t.status());
  out->mutable_reason()->swap(*t.mutable_reason());
  out->mutable_sizes()->Swap(t.mutable_sizes());
  // Sub-messages change owner (both on the heap): no copy, no new message.
  if (t.has_summary()) out->set_allocated_summary(t.release_summary());
  out->set_attempts(t.attempts());
  if (t.has_started_at()) out->set_allocated_started_at(t.release_started_at());
  out->set_duration_ns(t.duration_ns());
  out->set_expected_gbps(t.has_expected_gbps() ? t.expected_gbps()
                                               : PlanExpectedGbps(plan, t.src(), t.dst(), t.rail(), dst_rail));
  out->mutable_reverse_sizes()->Swap(t.mutable_reverse_sizes());
  v1::Endpoint* s = out->mutable_src();
  s->set_memory_kind(t.has_src_memory_kind() ? t.src_memory_kind() : out->summary().memory_kind());
  s->set_registration(t.has_src_registration() ? t.src_registration() : out->summary().registration());
  out->mutable_dst()->set_memory_kind(t.has_dst_memory_kind() ? t.dst_memory_kind() : s->memory_kind());
  out->mutable_dst()->set_registration(t.has_dst_registration() ? t.dst_registration() : s->registration());
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
