#include "controller/slurm/drain.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace gdrbench::controller::slurm {
namespace {

std::string ExcludedName(const std::string& e) { return e.substr(0, e.find(": ")); }

// Every node name the run uses: its matrices' axes, its pairs' endpoints and
// the nodes it left out ("name: reason").
std::set<std::string> KnownNodes(const v1::Run& run) {
  std::set<std::string> names;
  for (const auto& m : run.matrices()) names.insert(m.nodes().begin(), m.nodes().end());
  for (const auto& p : run.pairs()) {
    names.insert(p.src().node());
    names.insert(p.dst().node());
  }
  for (const auto& e : run.excluded_nodes()) names.insert(ExcludedName(e));
  names.erase("");
  return names;
}

// The nodes the run measured: in a matrix or a pair, and not left out.
std::set<std::string> TestedNodes(const v1::Run& run) {
  std::set<std::string> names;
  for (const auto& m : run.matrices()) names.insert(m.nodes().begin(), m.nodes().end());
  for (const auto& p : run.pairs()) {
    names.insert(p.src().node());
    names.insert(p.dst().node());
  }
  for (const auto& e : run.excluded_nodes()) names.erase(ExcludedName(e));
  names.erase("");
  return names;
}

// "<node> rail 2" or "<node> rail 0->1" -> "<node>".
std::string StripLane(const std::string& s) { return s.substr(0, s.find(" rail ")); }

// The two ends of a link or gdr subject: "<a><-><b>[ rail R]" or "<a>-><b>[ rail R]".
absl::StatusOr<std::pair<std::string, std::string>> LinkEnds(const std::string& s,
                                                             const std::string& from) {
  size_t at = s.find("<->");
  size_t len = 3;
  if (at == std::string::npos) {
    at = s.find("->");
    len = 2;
  }
  if (at == std::string::npos) return absl::InvalidArgumentError(from + ": expected '<a><-><b>'");
  return std::make_pair(s.substr(0, at), StripLane(s.substr(at + len)));
}

class Collector {
 public:
  explicit Collector(std::set<std::string> known) : known_(std::move(known)) {}
  absl::Status Add(const std::string& node, std::string reason, absl::string_view from) {
    if (!known_.count(node)) {
      return absl::InvalidArgumentError(
          absl::StrCat(from, ": '", node, "' is not a node of this run"));
    }
    auto [it, fresh] = index_.try_emplace(node, findings_.size());
    if (fresh) findings_.push_back({node, {}});
    findings_[it->second].reasons.push_back(std::move(reason));
    return absl::OkStatus();
  }
  std::vector<Finding> Take() { return std::move(findings_); }

 private:
  std::set<std::string> known_;
  std::map<std::string, size_t> index_;
  std::vector<Finding> findings_;
};

std::string Evidence(const v1::Blame& b) {
  if (!(b.evidence_gbps() > 0)) return "";
  return absl::StrCat(" [", std::round(b.evidence_gbps() * 100) / 100, " Gb/s]");
}

absl::StatusOr<std::vector<Finding>> FindNodesToDrain(const v1::Run& run,
                                                      const DrainPolicy& policy) {
  Collector c(KnownNodes(run));
  for (const auto& b : run.blame()) {
    if (!Persists(b, policy)) continue;  // suspect until it persists (Verdicts)
    const std::string& s = b.subject();
    std::string from = absl::StrCat("blame ", b.kind(), " '", s, "'");
    if (b.kind() == "node" && policy.node) {
      GDR_RETURN_IF_ERROR(c.Add(s, absl::StrCat("node: ", b.reason(), Evidence(b)), from));
    } else if (b.kind() == "nic" && policy.nic) {
      size_t at = s.rfind(" rail ");
      if (at == std::string::npos) return absl::InvalidArgumentError(from + ": expected '<node> rail <r>'");
      GDR_RETURN_IF_ERROR(c.Add(s.substr(0, at),
                                absl::StrCat("nic ", s.substr(at + 1), ": ", b.reason(), Evidence(b)), from));
    } else if (b.kind() == "link" && policy.link) {
      GDR_ASSIGN_OR_RETURN(auto ends, LinkEnds(s, from));
      std::string reason = absl::StrCat("link ", s, ": ", b.reason(), Evidence(b));
      GDR_RETURN_IF_ERROR(c.Add(ends.first, reason, from));
      GDR_RETURN_IF_ERROR(c.Add(ends.second, reason, from));
    }
  }
  if (policy.excluded) {
    for (const auto& e : run.excluded_nodes()) {
      size_t at = e.find(": ");
      std::string why = at == std::string::npos ? "left out of the sweep" : e.substr(at + 2);
      GDR_RETURN_IF_ERROR(
          c.Add(ExcludedName(e), absl::StrCat("excluded: ", why), absl::StrCat("excluded '", e, "'")));
    }
  }
  return c.Take();
}

absl::Status CheckFraction(const v1::Run& run, size_t total, const std::vector<Finding>& findings,
                           const DrainPolicy& policy) {
  if (total == 0 || findings.size() <= policy.max_fraction * static_cast<double>(total)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "run ", run.run_id(), " would drain ", findings.size(), " of its ", total,
      " nodes, more than --max-fraction ", policy.max_fraction,
      ": nothing drained, resumed or published from it; look at the run first (a switch or a "
      "flag, not the nodes?), then raise --max-fraction"));
}

// Node -> the first blame naming it that the drain does not act on, and
// whether a fleet or rail blame speaks against every node.
struct OtherBlames {
  std::map<std::string, std::string> by_node;
  std::string everyone;
};

OtherBlames BlamesNamingNodes(const v1::Run& run, const DrainPolicy& policy) {
  OtherBlames out;
  for (const auto& b : run.blame()) {
    std::string text = absl::StrCat(b.kind(), " ", b.subject(), ": ", b.reason());
    if (std::string why = NotYet(b, policy); !why.empty()) absl::StrAppend(&text, " (", why, ")");
    std::vector<std::string> named;
    if (b.kind() == "fleet" || b.kind() == "rail") {
      if (out.everyone.empty()) out.everyone = text;
      continue;
    }
    if (b.kind() == "node" || b.kind() == "nic") {
      named.push_back(StripLane(b.subject()));
    } else if (auto ends = LinkEnds(b.subject(), ""); ends.ok()) {
      named = {ends->first, ends->second};
    }
    for (const auto& n : named) out.by_node.try_emplace(n, text);
  }
  return out;
}

std::vector<NodeVerdict> Verdicts(const v1::Run& run, const std::vector<Finding>& drain,
                                  const DrainPolicy& policy) {
  std::map<std::string, const Finding*> drained;
  for (const auto& f : drain) drained[f.node] = &f;
  const std::set<std::string> tested = TestedNodes(run);
  const OtherBlames other = BlamesNamingNodes(run, policy);
  std::vector<NodeVerdict> out;
  for (const auto& node : KnownNodes(run)) {
    NodeVerdict v{node, Verdict::kPass, ""};
    if (auto it = drained.find(node); it != drained.end()) {
      v = {node, Verdict::kDrain, DrainReason(*it->second, run)};
    } else if (!tested.count(node)) {
      v = {node, Verdict::kUntested, "left out of the sweep"};
    } else if (auto b = other.by_node.find(node); b != other.by_node.end()) {
      v = {node, Verdict::kSuspect, b->second};
    } else if (!other.everyone.empty()) {
      v = {node, Verdict::kSuspect, other.everyone};
    }
    for (char& ch : v.reason) {
      if (ch == '\n' || ch == '\r') ch = ' ';
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace

bool Persists(const v1::Blame& b, const DrainPolicy& policy) {
  return b.hard() || b.streak() == 0 || (b.confirmed() && b.streak() >= policy.min_streak);
}

std::string NotYet(const v1::Blame& b, const DrainPolicy& policy) {
  if (Persists(b, policy)) return "";
  if (!b.confirmed()) return "seen once: not confirmed by a retest";
  return absl::StrCat("seen in ", b.streak(), " run", b.streak() == 1 ? "" : "s", " in a row; acted on at ",
                      policy.min_streak);
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kDrain: return "drain";
    case Verdict::kSuspect: return "suspect";
    case Verdict::kUntested: return "untested";
  }
  return "untested";
}

absl::StatusOr<DrainPolicy> ParseDrainKinds(absl::string_view kinds, double max_fraction) {
  DrainPolicy p{false, false, false, false, max_fraction, DrainPolicy{}.min_streak};
  if (!(max_fraction > 0) || max_fraction > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-fraction: expected a fraction in (0, 1], got ", max_fraction));
  }
  for (absl::string_view k : absl::StrSplit(kinds, ',', absl::SkipEmpty())) {
    if (k == "node") {
      p.node = true;
    } else if (k == "nic") {
      p.nic = true;
    } else if (k == "excluded") {
      p.excluded = true;
    } else if (k == "link") {
      p.link = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--what: '", k, "' is not one of node, nic, excluded, link"));
    }
  }
  if (!p.node && !p.nic && !p.excluded && !p.link) {
    return absl::InvalidArgumentError("--what: name at least one of node, nic, excluded, link");
  }
  return p;
}

size_t RunNodeCount(const v1::Run& run) { return KnownNodes(run).size(); }

absl::StatusOr<DrainPlan> PlanDrain(const v1::Run& run, const DrainPolicy& policy) {
  DrainPlan plan;
  plan.run_id = run.run_id();
  plan.node_count = RunNodeCount(run);
  GDR_ASSIGN_OR_RETURN(plan.drain, FindNodesToDrain(run, policy));
  GDR_RETURN_IF_ERROR(CheckFraction(run, plan.node_count, plan.drain, policy));
  plan.verdicts = Verdicts(run, plan.drain, policy);
  plan.streaks_known = std::any_of(run.blame().begin(), run.blame().end(),
                                   [](const v1::Blame& b) { return b.streak() > 0; });
  return plan;
}

std::string DrainReason(const Finding& f, const v1::Run& run) {
  std::string reason = absl::StrCat("gdrbench: ", absl::StrJoin(f.reasons, "; "));
  std::string tail = run.run_id().empty() ? "" : absl::StrCat(" (run ", run.run_id(), ")");
  // Slurm stores the reason as given; keep it short enough for sinfo -R and
  // free of quotes and newlines that scontrol would read as syntax.
  for (char& ch : reason) {
    if (ch == '"' || ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  }
  if (reason.size() + tail.size() > kMaxReasonBytes) {
    size_t keep = kMaxReasonBytes - tail.size() - 3;
    while (keep > 0 && (static_cast<unsigned char>(reason[keep]) & 0xC0) == 0x80) --keep;
    reason = absl::StrCat(reason.substr(0, keep), "...");
  }
  return reason + tail;
}

std::vector<std::string> ScontrolDrainArgv(const std::string& scontrol, const Finding& f,
                                           const v1::Run& run) {
  return {scontrol, "update", "NodeName=" + f.node, "State=DRAIN",
          "Reason=" + DrainReason(f, run)};
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (const auto& a : argv) {
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,@+%", c) != nullptr;
    });
    if (plain) {
      out.push_back(a);
    } else {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out.push_back(q + "'");
    }
  }
  return absl::StrJoin(out, " ");
}

}  // namespace gdrbench::controller::slurm
