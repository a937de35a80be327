#include "server/history/run_fields.h"

#include <algorithm>
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
std::string Excerpt(const std::string& v) {
  std::string out;
  for (char c : v.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? absl::StrCat("\\x", absl::Hex(u, absl::kZeroPad2)) : std::string(1, c);
  }
  return absl::StrCat("'", out, v.size() > 40 ? "...'" : "'");
}

absl::Status CheckText(const std::string& v, const std::string& where) {
  if (v.size() > kMaxTextBytes) {
    return Bad(absl::StrCat(where, ": ", v.size(), " bytes, more than ", kMaxTextBytes));
  }
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

bool IdChars(const std::string& s, size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == ':';
  });
}

absl::Status CheckExcluded(const v1::Run& h) {
  for (int i = 0; i < h.excluded_nodes_size(); ++i) {
    const std::string& e = h.excluded_nodes(i);
    const size_t colon = e.find(": ");
    if (colon == std::string::npos || colon == 0 || colon > 253 || e.substr(0, colon).find('\n') != std::string::npos) {
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
    if (host.empty() || host.size() > 253 || host.find('\n') != std::string::npos || host.find('\t') != std::string::npos) {
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

std::set<std::string> RunNodeNames(const v1::Run& h) {
  std::set<std::string> nodes;
  for (const auto& m : h.matrices()) nodes.insert(m.nodes().begin(), m.nodes().end());
  for (const std::string& e : h.excluded_nodes()) {
    const size_t colon = e.find(": ");
    if (colon != std::string::npos && colon > 0) nodes.insert(e.substr(0, colon));
  }
  return nodes;
}

bool ValidCheckId(const std::string& id) { return IdChars(id, 64); }

absl::Status ValidateRunFields(const v1::Run& header) {
  if (absl::Status st = CheckStrings(header, ""); !st.ok()) {
    return Bad(absl::StrCat("run ", header.run_id().substr(0, 128), ": ", st.message()));
  }
  if (!header.mode().empty() && !IdChars(header.mode(), 64)) {
    return Bad(absl::StrCat("run ", header.run_id(), ": mode ", Excerpt(header.mode()),
                            " must be at most 64 characters of A-Z a-z 0-9 - _ . :"));
  }
  if (absl::Status st = CheckPreflight(header); !st.ok()) {
    return Bad(absl::StrCat("run ", header.run_id(), ": ", st.message()));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::history
