#include "controller/slurm/drain.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace gdrbench::controller::slurm {
namespace {

// Every node name the run uses: its matrices' axes, its pairs' endpoints and
// the nodes it left out ("name: reason").
std::set<std::string> KnownNodes(const v1::Run& run) {
  std::set<std::string> names;
  for (const auto& m : run.matrices()) names.insert(m.nodes().begin(), m.nodes().end());
  for (const auto& p : run.pairs()) {
    names.insert(p.src().node());
    names.insert(p.dst().node());
  }
  for (const auto& e : run.excluded_nodes()) {
    names.insert(std::string(e.substr(0, e.find(": "))));
  }
  names.erase("");
  return names;
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

}  // namespace

absl::StatusOr<DrainPolicy> ParseDrainKinds(absl::string_view kinds, double max_fraction) {
  DrainPolicy p{false, false, false, false, max_fraction};
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

absl::StatusOr<std::vector<Finding>> FindNodesToDrain(const v1::Run& run,
                                                      const DrainPolicy& policy) {
  Collector c(KnownNodes(run));
  for (const auto& b : run.blame()) {
    const std::string& s = b.subject();
    std::string from = absl::StrCat("blame ", b.kind(), " '", s, "'");
    if (b.kind() == "node" && policy.node) {
      RETURN_IF_ERROR(c.Add(s, absl::StrCat("node: ", b.reason(), Evidence(b)), from));
    } else if (b.kind() == "nic" && policy.nic) {
      // "<node> rail <r>"
      size_t at = s.rfind(" rail ");
      if (at == std::string::npos) return absl::InvalidArgumentError(from + ": expected '<node> rail <r>'");
      RETURN_IF_ERROR(c.Add(s.substr(0, at), absl::StrCat("nic ", s.substr(at + 1), ": ", b.reason(),
                                                          Evidence(b)),
                            from));
    } else if (b.kind() == "link" && policy.link) {
      // "<a><-><b>" (both directions) or "<a>-><b>"
      size_t at = s.find("<->");
      size_t len = 3;
      if (at == std::string::npos) {
        at = s.find("->");
        len = 2;
      }
      if (at == std::string::npos) return absl::InvalidArgumentError(from + ": expected '<a><-><b>'");
      std::string reason = absl::StrCat("link ", s, ": ", b.reason(), Evidence(b));
      RETURN_IF_ERROR(c.Add(s.substr(0, at), reason, from));
      RETURN_IF_ERROR(c.Add(s.substr(at + len), reason, from));
    }
  }
  if (policy.excluded) {
    for (const auto& e : run.excluded_nodes()) {
      size_t at = e.find(": ");
      std::string node = e.substr(0, at);
      std::string why = at == std::string::npos ? "left out of the sweep" : e.substr(at + 2);
      RETURN_IF_ERROR(c.Add(node, absl::StrCat("excluded: ", why), absl::StrCat("excluded '", e, "'")));
    }
  }
  return c.Take();
}

size_t RunNodeCount(const v1::Run& run) { return KnownNodes(run).size(); }

absl::Status CheckFraction(const v1::Run& run, const std::vector<Finding>& findings,
                           const DrainPolicy& policy) {
  size_t total = RunNodeCount(run);
  if (total == 0 || findings.size() <= policy.max_fraction * static_cast<double>(total)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "run ", run.run_id(), " would drain ", findings.size(), " of its ", total,
      " nodes, more than --max-fraction ", policy.max_fraction,
      ": look at the run first (a switch or a flag, not the nodes?), then raise --max-fraction"));
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
