#include "report/left_out.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gdrbench::report {
namespace {

struct Rule {
  std::vector<const char*> any;  // the reason holds one of these
  const char* cause;
  const char* remedy;
};

// The first rule whose words the reason holds names its cause; the words
// are those of the messages the probe records (tls_probe.cc, probe.cc).
const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = {
      {{"does not resolve", "no address for"},
       "unreachable: the name does not resolve (DNS)",
       "check the inventory's addresses and the controller's resolver (getent hosts NAME)"},
      {{"nothing accepts TCP connections", "Connection refused"},
       "unreachable: nothing listens at the address (connection refused)",
       "start gdrbench-agent on those nodes (systemctl status gdrbench-agent) or fix the port in the "
       "inventory"},
      // Before TLS: a handshake that timed out is a slow or hung agent, not a certificate.
      {{"Deadline", "did not answer", "timed out", "timeout"},
       "unreachable: no answer in time",
       "check the network path to the agents (firewall, routes) and that they are not overloaded"},
      {{"TLS", "certificate", "handshake"},
       "unreachable: TLS failed",
       "give the CA that signed the agents' certificates (--tls-ca) and a client certificate they accept "
       "(--tls-cert, --tls-key), or --insecure for agents started with --insecure"},
      {{"not admitted", "PERMISSION_DENIED", "UNAUTHENTICATED", "controller-cidr"},
       "refused by the agent's admission",
       "start the agents with this controller's address in --controller-cidr, or use a client certificate "
       "they accept"},
      {{"version", "UNIMPLEMENTED"},
       "a different gdrbench version",
       "run the same gdrbench version on the controller and the agents"},
      {{"preflight FAIL"},
       "left out by the preflight (a check FAILed)",
       "run gdrbench preflight on those nodes and fix what it names, or --force to test them anyway"},
  };
  return rules;
}

}  // namespace

std::optional<LeftOutCause> ClassifyLeftOut(const std::string& reason) {
  for (const Rule& r : Rules()) {
    if (std::any_of(r.any.begin(), r.any.end(),
                    [&](const char* w) { return absl::StrContains(reason, w); })) {
      return LeftOutCause{r.cause, r.remedy, {}, ""};
    }
  }
  return std::nullopt;
}

std::vector<LeftOutCause> GroupLeftOut(const v1::Run& run) {
  std::vector<LeftOutCause> groups;
  std::map<std::string, size_t> by_cause;
  for (const std::string& e : run.excluded_nodes()) {
    const size_t colon = e.find(": ");
    const std::string node = colon == std::string::npos ? e : e.substr(0, colon);
    const std::string reason = colon == std::string::npos ? "" : e.substr(colon + 2);
    LeftOutCause c = ClassifyLeftOut(reason).value_or(
        LeftOutCause{"left out", "read each node's reason in the report", {}, ""});
    auto [it, fresh] = by_cause.try_emplace(c.cause, groups.size());
    if (fresh) {
      c.first = e;
      groups.push_back(std::move(c));
    }
    groups[it->second].nodes.push_back(node);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const LeftOutCause& a, const LeftOutCause& b) { return a.nodes.size() > b.nodes.size(); });
  return groups;
}

size_t NodesOfRun(const v1::Run& run) {
  std::set<std::string> nodes;
  for (const auto& m : run.matrices()) nodes.insert(m.nodes().begin(), m.nodes().end());
  for (const std::string& e : run.excluded_nodes()) nodes.insert(e.substr(0, e.find(": ")));
  return nodes.size();
}

std::string FormatLeftOutCause(const LeftOutCause& g, size_t of_nodes, size_t max_names) {
  std::vector<std::string> names(g.nodes.begin(), g.nodes.begin() + std::min(max_names, g.nodes.size()));
  std::string list = absl::StrJoin(names, ", ");
  if (g.nodes.size() > max_names) absl::StrAppend(&list, ", ... (", g.nodes.size(), ")");
  return absl::StrCat(g.nodes.size(), " of ", of_nodes, " node", of_nodes == 1 ? "" : "s", " ", g.cause, ": ",
                      list, g.nodes.size() > 1 ? "; first: " : "; ", g.first);
}

std::string FormatLeftOut(const v1::Run& run, size_t max_names) {
  const size_t of_nodes = NodesOfRun(run);
  std::string out;
  for (const auto& g : GroupLeftOut(run)) {
    absl::StrAppend(&out, FormatLeftOutCause(g, of_nodes, max_names), "\n  remedy: ", g.remedy, "\n");
  }
  return out;
}

}  // namespace gdrbench::report
