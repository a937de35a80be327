#include "server/history/pair_check.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"
#include "server/history/names.h"
#include "server/history/run_fields.h"

namespace gdrbench::server::history {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

// A string's fault under the field that holds it: "name" + ": 20000 bytes
// ..." or " 'x' has the control character ..." or ".sub.field ...". Built
// only on the way out of an error.
absl::Status Under(absl::string_view name, const absl::Status& st) {
  const absl::string_view rest = st.message();
  return Bad(absl::StrCat(name, rest.empty() || rest[0] == ' ' || rest[0] == ':' ? "" : ".", rest));
}
absl::Status Under(absl::string_view name, int index, const absl::Status& st) {
  return Under(absl::StrCat(name, "[", index, "]"), st);
}

// The string fields of one message, by name.
absl::Status Texts(std::initializer_list<std::pair<absl::string_view, const std::string*>> fields) {
  for (const auto& [name, value] : fields) {
    if (value->empty() || IsPlainText(*value)) continue;  // most are empty; the rest plain
    if (absl::Status st = ValidateText(*value, ""); !st.ok()) return Under(name, st);
  }
  return absl::OkStatus();
}

// Every string of each message type a pair holds, by its generated
// accessors (a test walks the descriptors: a string field added to any of
// these types and not checked here fails it).
absl::Status Strings(const v1::Endpoint& e) {
  return Texts({{"node", &e.node()},
                {"agent_address", &e.agent_address()},
                {"nic_device", &e.nic_device()},
                {"memory", &e.memory()},
                {"memory_kind", &e.memory_kind()},
                {"registration", &e.registration()}});
}

absl::Status Strings(const v1::SizeResult& s) {
  return Texts({{"error", &s.error()}, {"perftest_command", &s.perftest_command()}});
}

absl::Status Strings(const v1::PortCounters& c) {
  if (absl::Status st = Texts({{"device", &c.device()}, {"absent", &c.absent()}}); !st.ok()) return st;
  for (int i = 0; i < c.changes_size(); ++i) {
    const v1::CounterChange& ch = c.changes(i);
    if (absl::Status st = Texts({{"name", &ch.name()}, {"note", &ch.note()}}); !st.ok()) {
      return Under("changes", i, st);
    }
  }
  return absl::OkStatus();
}

absl::Status Strings(const v1::PairResult& p);  // memory_halves holds pairs

template <typename Repeated>
absl::Status EachOf(absl::string_view name, const Repeated& items) {
  for (int i = 0; i < items.size(); ++i) {
    if (absl::Status st = Strings(items.Get(i)); !st.ok()) return Under(name, i, st);
  }
  return absl::OkStatus();
}

absl::Status Strings(const v1::SweepSummary& s) {
  if (absl::Status st = Texts({{"error", &s.error()},
                               {"memory_kind", &s.memory_kind()},
                               {"registration", &s.registration()},
                               {"device", &s.device()},
                               {"gid", &s.gid()},
                               {"gid_type", &s.gid_type()},
                               {"local_address", &s.local_address()},
                               {"remote_address", &s.remote_address()},
                               {"perftest_command", &s.perftest_command()},
                               {"gid_choice", &s.gid_choice()}});
      !st.ok()) {
    return st;
  }
  if (absl::Status st = EachOf("reverse_checks", s.reverse_checks()); !st.ok()) return st;
  if (s.has_counters()) {
    if (absl::Status st = Strings(s.counters()); !st.ok()) return Under("counters", st);
  }
  return absl::OkStatus();
}

absl::Status Strings(const v1::PairResult& p) {
  if (absl::Status st = Texts({{"reason", &p.reason()}, {"link_flag", &p.link_flag()}}); !st.ok()) return st;
  if (p.has_src()) {
    if (absl::Status st = Strings(p.src()); !st.ok()) return Under("src", st);
  }
  if (p.has_dst()) {
    if (absl::Status st = Strings(p.dst()); !st.ok()) return Under("dst", st);
  }
  if (absl::Status st = EachOf("sizes", p.sizes()); !st.ok()) return st;
  if (p.has_summary()) {
    if (absl::Status st = Strings(p.summary()); !st.ok()) return Under("summary", st);
  }
  if (absl::Status st = EachOf("reverse_sizes", p.reverse_sizes()); !st.ok()) return st;
  if (p.has_src_counters()) {
    if (absl::Status st = Strings(p.src_counters()); !st.ok()) return Under("src_counters", st);
  }
  if (p.has_dst_counters()) {
    if (absl::Status st = Strings(p.dst_counters()); !st.ok()) return Under("dst_counters", st);
  }
  // Nested no deeper than the parser allowed (its recursion limit).
  return EachOf("memory_halves", p.memory_halves());
}

// What the ingest requires of pair `i`.
absl::Status CheckPair(const v1::PairResult& p, uint32_t i) {
  const auto where = [i] { return absl::StrCat("pair ", i); };
  for (const std::string* n : {&p.src().node(), &p.dst().node()}) {
    if (!ValidNodeName(*n)) return CheckNodeName(*n, where());
  }
  if (!v1::ResultStatus_IsValid(p.status())) {
    return Bad(absl::StrCat(where(), ": status ", p.status(), " is not a result status"));
  }
  for (const v1::SizeResult& s : p.sizes()) {
    if (!std::isfinite(s.bw_avg_gbps()) || !std::isfinite(s.bw_peak_gbps()) || s.bw_avg_gbps() < 0) {
      return Bad(
          absl::StrCat(where(), ": size ", s.size_bytes(), " B: bandwidth is not a finite value >= 0"));
    }
  }
  return absl::OkStatus();
}

// Why the parser refused `bytes`: the first pair that does not parse alone,
// or the chunk's own structure. Only on the way out of an error.
std::string WhyNotAChunk(absl::string_view bytes) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  uint32_t pair = 0;
  v1::PairResult one;
  for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    if (tag != WireFormatLite::MakeTag(v1::PairChunk::kPairsFieldNumber,
                                       WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!WireFormatLite::SkipField(&in, tag)) break;
      continue;
    }
    uint32_t len = 0;
    const void* data = nullptr;
    int avail = 0;
    if (!in.ReadVarint32(&len)) return absl::StrCat("pair ", pair, " is cut short");
    if (len == 0) {  // an empty pair parses (the ingest's check refuses it later)
      ++pair;
      continue;
    }
    if (!in.GetDirectBufferPointer(&data, &avail) || len > static_cast<uint32_t>(avail)) {
      return absl::StrCat("pair ", pair, " is cut short");
    }
    if (!one.ParseFromArray(data, static_cast<int>(len))) {
      return absl::StrCat(
          "pair ", pair,
          " does not parse as a gdrbench.v1.PairResult: a malformed field, or a string that is "
          "not UTF-8");
    }
    in.Skip(static_cast<int>(len));
    ++pair;
  }
  return "the bytes are not a message";
}

}  // namespace

absl::StatusOr<uint32_t> CheckPairChunk(const v1::PairChunk& chunk, uint64_t first_pair) {
  const int n = chunk.pairs_size();
  for (int i = 0; i < n; ++i) {
    if (absl::Status st = CheckPair(chunk.pairs(i), static_cast<uint32_t>(i)); !st.ok()) return st;
  }
  for (int i = 0; i < n; ++i) {
    if (absl::Status st = Strings(chunk.pairs(i)); !st.ok()) {
      return Bad(
          absl::StrCat("the pair chunk from pair ", first_pair, ": ", Under("pairs", i, st).message()));
    }
  }
  return static_cast<uint32_t>(n);
}

PairChunkCheck::PairChunkCheck() : first_block_(std::make_unique_for_overwrite<char[]>(kFirstBlockBytes)) {
  google::protobuf::ArenaOptions o;
  o.initial_block = first_block_.get();
  o.initial_block_size = kFirstBlockBytes;
  arena_ = std::make_unique<google::protobuf::Arena>(o);
}

PairChunkCheck::~PairChunkCheck() = default;

absl::StatusOr<uint32_t> PairChunkCheck::Check(absl::string_view bytes, uint64_t first_pair) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Bad(absl::StrCat("a pair chunk of ", bytes.size(), " bytes, more than a message may hold"));
  }
  arena_->Reset();  // the last chunk's messages; the first block stays
  auto* chunk = google::protobuf::Arena::CreateMessage<v1::PairChunk>(arena_.get());
  if (!chunk->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Bad(absl::StrCat("not a serialized gdrbench.v1.PairChunk (", WhyNotAChunk(bytes), ")"));
  }
  return CheckPairChunk(*chunk, first_pair);
}

std::optional<absl::string_view> SinglePairChunk(absl::string_view run_chunk) {
  // Only the shape every serializer writes: the pairs field's tag (one
  // byte), its length (the shortest varint, below 1 GiB), its payload, and
  // nothing else. Then the RunChunk parses exactly when the payload parses
  // as a PairChunk. Anything else (unknown fields, another item, a tag or a
  // length written long, on which CodedInputStream and the generated parser
  // differ: fuzz_pair_chunk found one) goes to the parser whole.
  constexpr uint32_t kPairsTag =
      WireFormatLite::MakeTag(v1::RunChunk::kPairsFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  static_assert(kPairsTag < 0x80, "a one-byte tag");
  if (run_chunk.size() < 2 || static_cast<uint8_t>(run_chunk[0]) != kPairsTag) return std::nullopt;
  const absl::string_view rest = run_chunk.substr(1);
  CodedInputStream in(reinterpret_cast<const uint8_t*>(rest.data()),
                      static_cast<int>(std::min<size_t>(rest.size(), 16)));
  uint32_t len = 0;
  if (!in.ReadVarint32(&len) || len >= (1u << 30)) return std::nullopt;
  const size_t header = static_cast<size_t>(in.CurrentPosition());
  if (header != google::protobuf::io::CodedOutputStream::VarintSize32(len) || rest.size() - header != len) {
    return std::nullopt;
  }
  return rest.substr(header);
}

}  // namespace gdrbench::server::history
