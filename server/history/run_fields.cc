#include "server/history/run_fields.h"
#include "server/history/names.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gdrbench::server::history {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

absl::Status Bad(const std::string& what) { return absl::InvalidArgumentError(what); }

// A printable, quoted excerpt of a refused value for the error sentence.
std::string Excerpt(absl::string_view v) {
  std::string out;
  for (char c : v.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? absl::StrCat("\\x", absl::Hex(u, absl::kZeroPad2)) : std::string(1, c);
  }
  return absl::StrCat("'", out, v.size() > 40 ? "...'" : "'");
}

// True when no byte of `v` is below 0x20 or 0x7f, eight at a time (the
// "has a byte less than n" and "has a zero byte" tests of
// https://graphics.stanford.edu/~seander/bithacks.html#HasLessInWord; bytes
// of 0x80 and above, UTF-8's, never match). The common case of CheckText.
bool NoControlByte(absl::string_view v) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, v.data() + i, 8);
    const uint64_t below = (x - kOnes * 0x20) & ~x & kHigh;
    const uint64_t del = x ^ (kOnes * 0x7f);
    if ((below | ((del - kOnes) & ~del & kHigh)) != 0) return false;
  }
  for (; i < v.size(); ++i) {
    const auto u = static_cast<unsigned char>(v[i]);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

absl::Status CheckText(absl::string_view v, const std::string& where) {
  if (v.size() > kMaxTextBytes) {
    return Bad(absl::StrCat(where, ": ", v.size(), " bytes, more than ", kMaxTextBytes));
  }
  if (NoControlByte(v)) return absl::OkStatus();
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) {
      return Bad(absl::StrCat(where, " ", Excerpt(v), " has the control character \\x",
                              absl::Hex(u, absl::kZeroPad2), " (only tab and newline are allowed)"));
    }
  }
  return absl::OkStatus();
}

// Every string field of `m`, at any depth, through reflection (a field added
// to the proto later is checked too).
absl::Status CheckStrings(const Message& m, const std::string& path) {
  const auto* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string name = path.empty() ? f->name() : absl::StrCat(path, ".", f->name());
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string where = f->is_repeated() ? absl::StrCat(name, "[", i, "]") : name;
      if (f->type() == FieldDescriptor::TYPE_STRING) {
        const std::string v = f->is_repeated() ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
        if (absl::Status st = CheckText(v, where); !st.ok()) return st;
      } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
        if (absl::Status st = CheckStrings(sub, where); !st.ok()) return st;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckExcluded(const v1::Run& h) {
  for (int i = 0; i < h.excluded_nodes_size(); ++i) {
    const std::string& e = h.excluded_nodes(i);
    const size_t colon = e.find(": ");
    if (colon == std::string::npos || !ValidNodeName(absl::string_view(e).substr(0, colon))) {
      return Bad(absl::StrCat("excluded_nodes[", i, "] ", Excerpt(e), " is not 'NODE: reason'"));
    }
  }
  return absl::OkStatus();
}

// Reports: at most one per node of the run, each hostname a node name (a
// real run may name the agents' host for every node: tests/testdata/runs/
// slurm-lab-node4.json), at most kMaxChecks checks with valid, distinct ids.
absl::Status CheckPreflight(const v1::Run& h) {
  if (absl::Status st = CheckExcluded(h); !st.ok()) return st;
  const size_t nodes = RunNodeNames(h).size();
  if (static_cast<size_t>(h.preflight_size()) > nodes) {
    return Bad(absl::StrCat(h.preflight_size(), " preflight reports for ", nodes, " nodes"));
  }
  for (int i = 0; i < h.preflight_size(); ++i) {
    const auto& rep = h.preflight(i);
    const std::string where = absl::StrCat("preflight[", i, "]");
    const std::string& host = rep.hostname();
    if (!ValidNodeName(host)) {
      return Bad(absl::StrCat(where, ": hostname ", Excerpt(host), " must be 1 to 253 printable characters"));
    }
    if (rep.checks_size() > kMaxChecks) {
      return Bad(absl::StrCat(where, " (", host, "): ", rep.checks_size(), " checks, more than ", kMaxChecks));
    }
    std::set<std::string> ids;
    for (int j = 0; j < rep.checks_size(); ++j) {
      const std::string& id = rep.checks(j).id();
      if (!ValidCheckId(id)) {
        return Bad(absl::StrCat(where, ".checks[", j, "]: id ", Excerpt(id),
                                " must be 1 to 64 characters of A-Z a-z 0-9 - _ . :"));
      }
      if (!ids.insert(id).second) return Bad(absl::StrCat(where, ": check ", id, " is listed twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsPlainText(absl::string_view value) { return value.size() <= kMaxTextBytes && NoControlByte(value); }

absl::Status ValidateText(absl::string_view value, absl::string_view where) {
  return CheckText(value, std::string(where));
}

std::set<std::string> RunNodeNames(const v1::Run& h) {
  std::set<std::string> nodes;
  for (const auto& m : h.matrices()) nodes.insert(m.nodes().begin(), m.nodes().end());
  for (const std::string& e : h.excluded_nodes()) {
    const size_t colon = e.find(": ");
    if (colon != std::string::npos && colon > 0) nodes.insert(e.substr(0, colon));
  }
  return nodes;
}

bool ValidCheckId(const std::string& id) { return IdChars(id, kMaxIdChars); }

absl::Status ValidateRunFields(const v1::Run& header) {
  if (absl::Status st = CheckStrings(header, ""); !st.ok()) {
    return Bad(absl::StrCat("run ", header.run_id().substr(0, 128), ": ", st.message()));
  }
  if (!header.mode().empty() && !IdChars(header.mode(), kMaxIdChars)) {
    return Bad(absl::StrCat("run ", header.run_id(), ": mode ", Excerpt(header.mode()),
                            " must be at most 64 characters of A-Z a-z 0-9 - _ . :"));
  }
  if (absl::Status st = CheckPreflight(header); !st.ok()) {
    return Bad(absl::StrCat("run ", header.run_id(), ": ", st.message()));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::history
