#include "controller/cli/fleet_preflight.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/cli/cli_util.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/sweep_output.h"
#include "controller/inventory/inventory.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::cli {
namespace {

char Letter(v1::CheckStatus s) {
  switch (s) {
    case v1::CHECK_STATUS_PASS: return 'P';
    case v1::CHECK_STATUS_WARN: return 'W';
    case v1::CHECK_STATUS_FAIL: return 'F';
    case v1::CHECK_STATUS_SKIP: return 'S';
    default: return '-';
  }
}

const char* StatusWord(v1::CheckStatus s) {
  switch (s) {
    case v1::CHECK_STATUS_PASS: return "PASS";
    case v1::CHECK_STATUS_WARN: return "WARN";
    case v1::CHECK_STATUS_FAIL: return "FAIL";
    case v1::CHECK_STATUS_SKIP: return "SKIP";
    default: return "?";
  }
}

std::vector<std::string> CheckIds(const sweep::FleetPreflight& f) {
  std::vector<std::string> ids;
  for (const auto& rep : f.probe.preflight) {
    for (const auto& c : rep.checks()) {
      if (std::find(ids.begin(), ids.end(), c.id()) == ids.end()) ids.push_back(c.id());
    }
  }
  return ids;
}

std::string Host(const sweep::FleetPreflight& f, size_t i) {
  const std::string& h = f.probe.infos[i].hostname();
  return h.empty() ? "?" : h;
}

std::string Pad(const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); }

std::string Json(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, o);
  return out;
}

std::string Quote(const std::string& s) { return absl::StrCat("\"", JsonEscape(s), "\""); }

}  // namespace

std::string FormatFleetTable(const sweep::FleetPreflight& f) {
  const std::vector<std::string> ids = CheckIds(f);
  size_t wn = 4, wh = 4;
  for (size_t i = 0; i < f.probe.nodes.size(); ++i) {
    wn = std::max(wn, f.probe.nodes[i].name.size());
    wh = std::max(wh, Host(f, i).size());
  }
  std::string out = absl::StrCat(Pad("node", wn), "  ", Pad("host", wh), "  ");
  for (size_t c = 0; c < ids.size(); ++c) absl::StrAppend(&out, Pad(absl::StrCat(c + 1), 3));
  out += "overall\n";
  for (size_t i = 0; i < f.probe.nodes.size(); ++i) {
    const v1::PreflightReport& rep = f.probe.preflight[i];
    absl::StrAppend(&out, Pad(f.probe.nodes[i].name, wn), "  ", Pad(Host(f, i), wh), "  ");
    for (const auto& id : ids) {
      char l = '-';
      for (const auto& c : rep.checks()) {
        if (c.id() == id) l = Letter(c.status());
      }
      absl::StrAppend(&out, std::string(1, l), "  ");
    }
    absl::StrAppend(&out, StatusWord(rep.overall()), "\n");
  }
  out += "checks:";
  for (size_t c = 0; c < ids.size(); ++c) absl::StrAppend(&out, c % 5 == 0 ? "\n " : " ", " ", c + 1, " ", ids[c]);
  out += "\n(P pass, W warn, F fail, S skip: does not apply here, - not run)\n";
  return out;
}

std::string FormatFleetFindings(const sweep::FleetPreflight& f) {
  // (status, check, summary, remedy) -> nodes, FAIL first.
  std::map<std::tuple<int, std::string, std::string, std::string>, std::vector<std::string>> groups;
  for (size_t i = 0; i < f.probe.nodes.size(); ++i) {
    for (const auto& c : f.probe.preflight[i].checks()) {
      if (c.status() != v1::CHECK_STATUS_FAIL && c.status() != v1::CHECK_STATUS_WARN) continue;
      groups[{c.status() == v1::CHECK_STATUS_FAIL ? 0 : 1, c.id(), c.summary(), c.remediation()}]
          .push_back(f.probe.nodes[i].name);
    }
  }
  std::string out;
  for (const auto& [key, nodes] : groups) {
    const auto& [rank, id, summary, remedy] = key;
    absl::StrAppend(&out, rank == 0 ? "FAIL " : "WARN ", id, " on ", absl::StrJoin(nodes, ", "), ": ",
                    summary, remedy.empty() ? "" : absl::StrCat(" -> fix: ", remedy), "\n");
  }
  return out;
}

std::string FleetPreflightJson(const sweep::FleetPreflight& f) {
  std::string out = "{\"nodes\":[";
  for (size_t i = 0; i < f.probe.nodes.size(); ++i) {
    const auto& n = f.probe.nodes[i];
    absl::StrAppend(&out, i ? ",\n" : "\n", "{\"node\":", Quote(n.name), ",\"host\":",
                    Quote(f.probe.infos[i].hostname()), ",\"address\":", Quote(n.address),
                    ",\"left_out\":", Quote(n.excluded ? n.excluded_reason : ""),
                    ",\"preflight\":", Json(f.probe.preflight[i]), "}");
  }
  out += "],\n\"uniformity\":[";
  for (size_t s = 0; s < f.uniformity.size(); ++s) {
    const auto& u = f.uniformity[s];
    absl::StrAppend(&out, s ? ",\n" : "\n", "{\"component\":", Quote(u.component), ",\"values\":[");
    for (size_t v = 0; v < u.values.size(); ++v) {
      std::vector<std::string> q;
      for (const auto& n : u.values[v].second) q.push_back(Quote(n));
      absl::StrAppend(&out, v ? "," : "", "{\"value\":", Quote(u.values[v].first), ",\"nodes\":[",
                      absl::StrJoin(q, ","), "]}");
    }
    std::vector<std::string> odd;
    for (const auto& n : u.odd_nodes) odd.push_back(Quote(n));
    absl::StrAppend(&out, "],\"odd_nodes\":[", absl::StrJoin(odd, ","), "],\"split\":", u.split ? "true" : "false",
                    "}");
  }
  out += "\n]}\n";
  return out;
}

int FleetPreflightCommand(const FleetPreflightOptions& o) {
  absl::StatusOr<inventory::Inventory> inv =
      !o.inventory.empty() ? LoadInventoryForCli(o.inventory)
      : !o.agents.empty()  ? inventory::InventoryFromAgents(o.agents, o.port)
                           : inventory::InventoryFromHostlist(o.hostlist, o.port);
  if (!inv.ok()) return PrintError(inv.status());
  sweep::SweepConfig c;
  c.inventory = *std::move(inv);
  c.inventory.expect = inventory::Merge(c.inventory.expect, o.expect);
  const rpc::ClientTlsConfig& tls = o.common.tls;
  if (!tls.ca_file.empty() || !tls.cert_file.empty() || tls.insecure) c.tls = tls;
  const AgentClientConfig client = ClientConfig("", o.common);
  c.rpc_timeout = client.rpc_timeout;
  c.connect_timeout = client.connect_timeout;
  c.parallel = o.parallel;
  auto fleet = sweep::RunFleetPreflight(c);
  if (!fleet.ok()) return PrintError(fleet.status());
  bool failed = false;
  for (const auto& rep : fleet->probe.preflight) failed |= rep.overall() == v1::CHECK_STATUS_FAIL;
  if (o.common.json) {
    std::fputs(FleetPreflightJson(*fleet).c_str(), stdout);
    return failed ? kExitFailed : kExitPassed;
  }
  std::printf("preflight of %zu nodes (%s): %zu answering\n", fleet->probe.nodes.size(),
              c.inventory.source.c_str(), fleet->answering);
  std::fputs(FormatFleetTable(*fleet).c_str(), stdout);
  if (std::string findings = FormatFleetFindings(*fleet); !findings.empty()) {
    std::printf("\nfindings:\n%s", findings.c_str());
  }
  std::printf("\n%s", analysis::FormatUniformity(fleet->uniformity, fleet->answering).c_str());
  return failed ? kExitFailed : kExitPassed;
}

}  // namespace gdrbench::controller::cli
