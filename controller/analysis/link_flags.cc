#include "controller/analysis/link_flags.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/analysis/matrix.h"

namespace gdrbench::controller::analysis {
namespace {

// "hw_counters/rcvd_seq_err" -> "rcvd_seq_err"
std::string ShortName(const std::string& file) {
  auto slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

struct Found {
  std::vector<std::string> flapped, erred, retransmitted;
  // The largest retransmitted share of a port's packets among the flagged
  // ports; infinity for a flagged port with no packet counter.
  double worst_share = 0;
};

void Inspect(const v1::PortCounters& pc, const std::string& node, const v1::VerdictPolicy& policy,
             Found* f) {
  const std::string where = absl::StrCat(" on ", node, " ", pc.device());
  uint64_t retransmits = 0;
  std::vector<std::string> names;
  for (const v1::CounterChange& c : pc.changes()) {
    if (c.delta() == 0) continue;  // not comparable: the note says why
    std::string what = absl::StrCat(ShortName(c.name()), " +", c.delta());
    if (c.kind() == v1::COUNTER_KIND_LINK) {
      (ShortName(c.name()) == "link_downed" ? f->flapped : f->erred).push_back(what + where);
    } else if (c.kind() == v1::COUNTER_KIND_RETRANSMIT) {
      retransmits += c.delta();
      names.push_back(std::move(what));
    }
  }
  if (retransmits == 0 || retransmits <= policy.min_retransmits()) return;
  const double allowed = policy.max_retransmit_fraction() * static_cast<double>(pc.packets());
  if (pc.packets() > 0 && static_cast<double>(retransmits) <= allowed) return;
  std::string share =
      pc.packets() > 0
          ? absl::StrFormat(" (%.2g %% of %d packets)",
                            100.0 * static_cast<double>(retransmits) / static_cast<double>(pc.packets()),
                            pc.packets())
          : std::string(" (the port has no packet counter)");
  f->retransmitted.push_back(absl::StrCat(absl::StrJoin(names, ", "), where, share));
  f->worst_share = std::max(f->worst_share, pc.packets() > 0 ? static_cast<double>(retransmits) / pc.packets()
                                                             : std::numeric_limits<double>::infinity());
}

// The inventory's name; `gdrbench pair` has only the agent's address.
const std::string& Name(const v1::Endpoint& e) { return e.node().empty() ? e.agent_address() : e.node(); }

std::string Label(const v1::PairResult& p) {
  return absl::StrCat(p.src().node(), "->", p.dst().node(), " rail ", p.rail());
}

Found FindFlags(const v1::PairResult& pair, const v1::VerdictPolicy& policy) {
  Found f;
  if (policy.ignore_link_counters() || pair.status() != v1::RESULT_STATUS_OK) return f;
  if (pair.has_src_counters()) Inspect(pair.src_counters(), Name(pair.src()), policy, &f);
  if (pair.has_dst_counters()) Inspect(pair.dst_counters(), Name(pair.dst()), policy, &f);
  return f;
}

std::string FlagText(const Found& f) {
  std::vector<std::string> parts;
  if (!f.flapped.empty()) parts.push_back(absl::StrCat("the link flapped: ", absl::StrJoin(f.flapped, ", ")));
  if (!f.erred.empty()) parts.push_back(absl::StrCat("the link erred: ", absl::StrJoin(f.erred, ", ")));
  if (!f.retransmitted.empty()) {
    parts.push_back(absl::StrCat("the link retransmitted: ", absl::StrJoin(f.retransmitted, "; ")));
  }
  return absl::StrJoin(parts, "; ");
}

// One flagged test, for the summary.
struct Flagged {
  std::string label;
  bool error;          // the link flapped or erred
  double worst_share;  // retransmits only
};

std::string Listed(const std::vector<std::string>& labels) {
  const size_t shown = std::min<size_t>(labels.size(), 8);
  std::string named = absl::StrJoin(labels.begin(), labels.begin() + static_cast<long>(shown), ", ");
  if (labels.size() > shown) absl::StrAppend(&named, ", ... (", labels.size() - shown, " more)");
  return named;
}

// Error counters are named test by test; retransmits are counted, with the
// worst test: on a lossy fabric many tests retransmit a little, and a list of
// them reads as many alarms.
std::string SummaryOfFlags(const std::vector<Flagged>& flagged) {
  std::vector<std::string> errors;
  const Flagged* worst = nullptr;
  size_t retransmits = 0;
  for (const Flagged& f : flagged) {
    if (f.error) {
      errors.push_back(f.label);
      continue;
    }
    ++retransmits;
    if (worst == nullptr || f.worst_share > worst->worst_share) worst = &f;
  }
  std::string out;
  if (!errors.empty()) {
    absl::StrAppend(&out, "; ", errors.size(), " test(s) flagged by link counters for link errors: ", Listed(errors));
  }
  if (worst != nullptr) {
    absl::StrAppend(&out, "; ", retransmits, " test(s) flagged by link counters for retransmits, the worst ",
                    worst->label,
                    std::isinf(worst->worst_share)
                        ? std::string(" (no packet counter)")
                        : absl::StrFormat(" (%.2g %% of its packets)", 100 * worst->worst_share));
  }
  return out;
}

}  // namespace

std::string LinkFlag(const v1::PairResult& pair, const v1::VerdictPolicy& policy) {
  return FlagText(FindFlags(pair, policy));
}

size_t FlagLinks(const v1::VerdictPolicy& policy, v1::Run* run) {
  // (rail, dst rail, src, dst) -> flag, for the matrices' cells.
  std::map<std::tuple<uint32_t, uint32_t, std::string, std::string>, std::string> flags;
  std::vector<Flagged> labels;
  auto flag = [&](v1::PairResult& p, std::string label) {
    const Found f = FindFlags(p, policy);
    p.set_link_flag(FlagText(f));
    if (p.link_flag().empty()) return false;
    labels.push_back({std::move(label), !f.flapped.empty() || !f.erred.empty(), f.worst_share});
    return true;
  };
  for (v1::PairResult& p : *run->mutable_pairs()) {
    if (!flag(p, Label(p))) continue;
    flags[{p.rail(), p.has_dst_rail() ? p.dst_rail() : p.rail(), p.src().node(), p.dst().node()}] =
        p.link_flag();
  }
  // --memory lists: each later kind's test has its own counters (its own
  // connection); flagged and counted, named with its memory. The matrices
  // show the first kind only.
  for (v1::PairResult& p : *run->mutable_pairs()) {
    for (v1::PairResult& half : *p.mutable_memory_halves()) {
      flag(half, absl::StrCat(Label(half), " (", half.src().memory(), ")"));
    }
  }
  if (labels.empty()) return 0;
  for (v1::BandwidthMatrix& m : *run->mutable_matrices()) {
    const uint32_t dst_rail = m.has_dst_rail() ? m.dst_rail() : m.rail();
    for (v1::MatrixCell& c : *m.mutable_cells()) {
      if (c.src() >= static_cast<uint32_t>(m.nodes_size()) ||
          c.dst() >= static_cast<uint32_t>(m.nodes_size())) {
        continue;
      }
      auto it = flags.find({m.rail(), dst_rail, m.nodes(c.src()), m.nodes(c.dst())});
      if (it == flags.end()) continue;
      if (c.verdict() == "pass") {
        c.set_reason(absl::StrCat("pass, but ", it->second));
      } else if (c.verdict() == "low") {
        c.set_reason(c.reason().empty() ? it->second : absl::StrCat(c.reason(), "; ", it->second));
      }
    }
  }
  run->set_summary(absl::StrCat(run->summary(), SummaryOfFlags(labels)));
  return labels.size();
}

size_t FlagLinks(const v1::VerdictPolicy& policy, std::vector<v1::PairResult>* pairs, MatrixSet* matrices,
                 std::string* summary) {
  std::map<std::tuple<uint32_t, uint32_t, std::string, std::string>, std::string> flags;
  std::vector<Flagged> labels;
  for (v1::PairResult& p : *pairs) {
    const Found f = FindFlags(p, policy);
    p.set_link_flag(FlagText(f));
    if (p.link_flag().empty()) continue;
    labels.push_back({Label(p), !f.flapped.empty() || !f.erred.empty(), f.worst_share});
    flags[{p.rail(), p.has_dst_rail() ? p.dst_rail() : p.rail(), p.src().node(), p.dst().node()}] =
        p.link_flag();
  }
  if (labels.empty()) return 0;
  // The cells FlagLinks(policy, run) reaches through the run's matrices,
  // reached through their compact form: the same reasons.
  for (Matrix* m : matrices->matrices()) {
    for (const auto& [key, flag] : flags) {
      const auto& [rail, dst_rail, src_name, dst_name] = key;
      if (m->rail != rail || m->target_rail() != dst_rail) continue;
      const int s = matrices->NodeIndex(src_name), d = matrices->NodeIndex(dst_name);
      if (s < 0 || d < 0) continue;
      const Cell& c = m->at(static_cast<uint32_t>(s), static_cast<uint32_t>(d));
      if (!c.present()) continue;
      const uint32_t index = static_cast<uint32_t>(s) * m->n + static_cast<uint32_t>(d);
      if (c.verdict == Verdict::kPass) {
        m->reasons[index] = absl::StrCat("pass, but ", flag);
      } else if (c.verdict == Verdict::kLow) {
        std::string& reason = m->reasons[index];
        reason = reason.empty() ? flag : absl::StrCat(reason, "; ", flag);
      }
    }
  }
  absl::StrAppend(summary, SummaryOfFlags(labels));
  return labels.size();
}

}  // namespace gdrbench::controller::analysis
