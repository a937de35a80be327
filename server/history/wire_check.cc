#include "server/history/wire_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gdrbench/v1/controller.pb.h"
#include "google/protobuf/stubs/common.h"
#include "server/history/names.h"
#include "server/history/run_fields.h"

namespace gdrbench::server::history {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

constexpr int kMaxDepth = 32;

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }
absl::Status Lost() { return absl::DataLossError("not a serialized message"); }

// A base-128 varint at `*at` of `b` (the encoding's varints); false past the
// end or past 10 bytes.
bool Varint(absl::string_view b, size_t* at, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 70 && *at < b.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(b[(*at)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// One field of a message's bytes: wire type 0 in `varint`, 1 and 5 and 2
// (the payload) in `bytes`.
struct WireField {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;
  absl::string_view bytes;
};

// The fields of one message's bytes in order; Next is false at the end and
// when the bytes are not a message (then bad()).
class WireReader {
 public:
  explicit WireReader(absl::string_view b) : b_(b) {}
  bool Next(WireField* f) {
    if (at_ >= b_.size()) return false;
    uint64_t tag = 0;
    if (!Varint(b_, &at_, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) return Fail();
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire_type = static_cast<int>(tag & 7);
    switch (f->wire_type) {
      case 0: return Varint(b_, &at_, &f->varint) || Fail();
      case 1: return Take(8, f);
      case 5: return Take(4, f);
      case 2: {
        uint64_t len = 0;
        return (Varint(b_, &at_, &len) && Take(len, f)) || Fail();
      }
      default: return Fail();  // groups (3, 4) are not in proto3; 6, 7 are no wire type
    }
  }
  bool bad() const { return bad_; }

 private:
  bool Fail() {
    bad_ = true;
    return false;
  }
  bool Take(uint64_t n, WireField* f) {
    if (n > b_.size() - at_) return Fail();
    f->bytes = b_.substr(at_, n);
    at_ += n;
    return true;
  }
  absl::string_view b_;
  size_t at_ = 0;
  bool bad_ = false;
};

// What the check does with each field number of a type. Built once per type
// and thread.
struct Plan {
  enum Kind : uint8_t { kUnknown, kVarint, kFixed64, kFixed32, kString, kBytes, kMessage };
  struct Field {
    Kind kind = kUnknown;
    bool packed_ok = false;  // a repeated scalar: wire type 2 is its packed form
    const FieldDescriptor* descriptor = nullptr;
    const Plan* sub = nullptr;  // kMessage
  };
  std::vector<Field> fields;  // by number
};

Plan::Kind KindOf(const FieldDescriptor* f) {
  switch (f->type()) {
    case FieldDescriptor::TYPE_STRING: return Plan::kString;
    case FieldDescriptor::TYPE_BYTES: return Plan::kBytes;
    case FieldDescriptor::TYPE_MESSAGE: return Plan::kMessage;
    case FieldDescriptor::TYPE_GROUP: return Plan::kUnknown;  // none in proto3: refused by the reader
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64: return Plan::kFixed64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32: return Plan::kFixed32;
    default: return Plan::kVarint;  // int32/64, uint32/64, sint32/64, bool, enum
  }
}

const Plan& PlanOf(const Descriptor* type) {
  thread_local std::unordered_map<const Descriptor*, Plan> plans;  // nodes: stable
  auto [it, added] = plans.try_emplace(type);
  Plan& p = it->second;
  if (!added) return p;
  int top = 0;
  for (int i = 0; i < type->field_count(); ++i) top = std::max(top, type->field(i)->number());
  top = std::min(top, 4096);  // larger numbers are checked as unknown fields
  p.fields.assign(top + 1, Plan::Field{});
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* f = type->field(i);
    if (f->number() > top) continue;
    Plan::Field& pf = p.fields[f->number()];
    pf.kind = KindOf(f);
    pf.packed_ok = f->is_packable();
    pf.descriptor = f;
    // A type that holds itself (PairResult's memory_halves) finds its own,
    // still unfinished, plan: the pointer is what it needs.
    if (pf.kind == Plan::kMessage) pf.sub = &PlanOf(f->message_type());
  }
  return p;
}

int WireTypeOf(Plan::Kind k) {
  switch (k) {
    case Plan::kVarint: return 0;
    case Plan::kFixed64: return 1;
    case Plan::kFixed32: return 5;
    default: return 2;
  }
}

// The payload of a packed repeated scalar: whole values only.
bool PackedOk(Plan::Kind kind, absl::string_view b) {
  if (kind == Plan::kFixed64) return b.size() % 8 == 0;
  if (kind == Plan::kFixed32) return b.size() % 4 == 0;
  uint64_t v = 0;
  for (size_t at = 0; at < b.size();) {
    if (!Varint(b, &at, &v)) return false;
  }
  return true;
}

absl::Status CheckString(absl::string_view v) {
  if (!google::protobuf::internal::IsStructurallyValidUTF8(v.data(), static_cast<int>(v.size()))) {
    return Bad(": not UTF-8 (a protobuf string must be)");
  }
  return ValidateText(v, "");
}

// The check of ValidateSerializedMessage, over the bytes in place (no copy,
// no parser object per submessage). The field path is built only on the way
// out of an error.
absl::Status CheckMessage(const Plan& plan, absl::string_view b, int depth) {
  if (depth > kMaxDepth) return absl::DataLossError("messages nest more than 32 deep");
  int seen[64] = {};  // occurrences per field number, for the error's [index]
  WireReader r(b);
  WireField f;
  while (r.Next(&f)) {
    const int index = f.number < 64 ? seen[f.number]++ : 0;
    if (f.number >= plan.fields.size()) continue;
    const Plan::Field& pf = plan.fields[f.number];
    if (pf.kind == Plan::kUnknown) continue;
    if (f.wire_type != WireTypeOf(pf.kind)) {
      // A repeated scalar's packed form; any other wire type is an unknown field.
      if (f.wire_type == 2 && pf.packed_ok && !PackedOk(pf.kind, f.bytes)) return Lost();
      continue;
    }
    absl::Status st;
    if (pf.kind == Plan::kString) {
      st = CheckString(f.bytes);
    } else if (pf.kind == Plan::kMessage) {
      st = CheckMessage(*pf.sub, f.bytes, depth + 1);
    } else {
      continue;
    }
    if (!st.ok()) {
      if (absl::IsDataLoss(st)) return st;
      const FieldDescriptor* d = pf.descriptor;
      const std::string name = d->is_repeated() ? absl::StrCat(d->name(), "[", index, "]") : d->name();
      const absl::string_view rest = st.message();
      return Bad(absl::StrCat(name, rest.empty() || rest[0] == ' ' || rest[0] == ':' ? "" : ".", rest));
    }
  }
  return r.bad() ? Lost() : absl::OkStatus();
}

double AsDouble(absl::string_view eight) {
  double d = 0;
  std::memcpy(&d, eight.data(), sizeof d);
  return d;
}

// What the ingest requires of one pair (`b`, structurally a message: the
// whole chunk was read before). A message field that appears more than once
// is merged by the parser: its last node name wins.
absl::Status CheckPair(absl::string_view b, uint32_t i) {
  absl::string_view node[2];
  int32_t status = 0;
  WireReader r(b);
  WireField f;
  while (r.Next(&f)) {
    if (f.wire_type == 2 &&
        (f.number == v1::PairResult::kSrcFieldNumber || f.number == v1::PairResult::kDstFieldNumber)) {
      WireReader e(f.bytes);
      WireField g;
      while (e.Next(&g)) {
        if (g.number == v1::Endpoint::kNodeFieldNumber && g.wire_type == 2) {
          node[f.number == v1::PairResult::kSrcFieldNumber ? 0 : 1] = g.bytes;
        }
      }
    } else if (f.number == v1::PairResult::kStatusFieldNumber && f.wire_type == 0) {
      status = static_cast<int32_t>(static_cast<uint32_t>(f.varint));  // as the parser reads an enum
    }
  }
  const auto where = [i] { return absl::StrCat("pair ", i); };
  for (absl::string_view n : node) {
    if (!ValidNodeName(n)) return CheckNodeName(n, where());
  }
  if (!v1::ResultStatus_IsValid(status)) {
    return Bad(absl::StrCat(where(), ": status ", status, " is not a result status"));
  }
  WireReader again(b);
  while (again.Next(&f)) {
    if (f.number != v1::PairResult::kSizesFieldNumber || f.wire_type != 2) continue;
    uint64_t size_bytes = 0;
    double avg = 0, peak = 0;
    WireReader e(f.bytes);
    WireField g;
    while (e.Next(&g)) {
      if (g.number == v1::SizeResult::kSizeBytesFieldNumber && g.wire_type == 0) size_bytes = g.varint;
      if (g.number == v1::SizeResult::kBwAvgGbpsFieldNumber && g.wire_type == 1) avg = AsDouble(g.bytes);
      if (g.number == v1::SizeResult::kBwPeakGbpsFieldNumber && g.wire_type == 1) peak = AsDouble(g.bytes);
    }
    if (!std::isfinite(avg) || !std::isfinite(peak) || avg < 0) {
      return Bad(absl::StrCat(where(), ": size ", size_bytes, " B: bandwidth is not a finite value >= 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSerializedMessage(const Descriptor* type, absl::string_view bytes) {
  return CheckMessage(PlanOf(type), bytes, 0);
}

absl::StatusOr<uint32_t> CheckPairChunk(absl::string_view bytes, uint64_t first_pair) {
  // The structure first: the pass below reads what it checked. What the
  // ingest requires of each pair is reported before a string's fault, as
  // when the pairs were parsed and checked before their strings.
  const absl::Status strings = ValidateSerializedMessage(v1::PairChunk::descriptor(), bytes);
  if (absl::IsDataLoss(strings)) {
    return Bad(absl::StrCat("not a serialized gdrbench.v1.PairChunk (", strings.message(), ")"));
  }
  uint32_t pairs = 0;
  WireReader r(bytes);
  WireField f;
  while (r.Next(&f)) {
    if (f.number != v1::PairChunk::kPairsFieldNumber || f.wire_type != 2) continue;
    if (absl::Status st = CheckPair(f.bytes, pairs); !st.ok()) return st;
    ++pairs;
  }
  if (!strings.ok())
    return Bad(absl::StrCat("the pair chunk from pair ", first_pair, ": ", strings.message()));
  return pairs;
}

std::optional<absl::string_view> SinglePairChunk(absl::string_view run_chunk) {
  std::optional<absl::string_view> pairs;
  int items = 0;  // occurrences of the oneof's fields
  WireReader r(run_chunk);
  WireField f;
  while (r.Next(&f)) {
    const bool item = f.number == v1::RunChunk::kHeaderFieldNumber ||
                      f.number == v1::RunChunk::kCellsFieldNumber ||
                      f.number == v1::RunChunk::kPairsFieldNumber;
    if (f.wire_type != 2 || !item) continue;  // unknown fields
    ++items;
    if (f.number == v1::RunChunk::kPairsFieldNumber) pairs = f.bytes;
  }
  if (r.bad() || items != 1) return std::nullopt;
  return pairs;
}

}  // namespace gdrbench::server::history
