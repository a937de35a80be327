#include "report/report_util.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/lane.h"

namespace gdrbench::report {

std::string HtmlEscape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string XmlEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\t' && c != '\r') continue;  // not allowed in XML 1.0
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string CsvField(absl::string_view s) {
  if (s.find_first_of(",\"\n\r") == absl::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  return out + "\"";
}

std::string StatusName(v1::ResultStatus s) {
  switch (s) {
    case v1::RESULT_STATUS_OK: return "ok";
    case v1::RESULT_STATUS_FAILED: return "failed";
    case v1::RESULT_STATUS_ERROR: return "error";
    case v1::RESULT_STATUS_SKIPPED: return "not run";  // the same word in every report (issue 32)
    default: return "";
  }
}

std::vector<NodeRow> NodeRows(const v1::Run& run) {
  std::vector<NodeRow> rows;
  for (int i = 0; i < run.preflight_size(); ++i) {
    const v1::PreflightReport& pre = run.preflight(i);
    NodeRow r;
    r.name = pre.hostname();
    r.preflight = pre.overall() == v1::CHECK_STATUS_FAIL   ? "FAIL"
                  : pre.overall() == v1::CHECK_STATUS_WARN ? "WARN"
                  : pre.overall() == v1::CHECK_STATUS_SKIP ? "SKIP"
                  : pre.overall() == v1::CHECK_STATUS_PASS ? "PASS"
                                                           : "";
    if (i < run.nodes_size() && run.preflight_size() == run.nodes_size()) {
      const v1::NodeInfo& n = run.nodes(i);
      const v1::SoftwareVersions& v = n.software();
      r.host = n.hostname().empty() ? "unreachable" : n.hostname();
      r.kernel = v.kernel();
      r.driver = v.nvidia_driver();
      r.cuda = v.cuda_driver();
      r.rdma = v.ofed().empty() ? v.rdma_core() : absl::StrCat(v.rdma_core(), " / OFED ", v.ofed());
      std::set<std::string> fw;
      for (const auto& nic : n.nics()) {
        if (!nic.firmware_version().empty()) fw.insert(nic.firmware_version());
      }
      r.firmware = absl::StrJoin(fw, ", ");
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string MemoryUsed(const v1::Endpoint& e) {
  if (e.memory_kind().empty()) return e.memory().empty() ? "host" : e.memory();
  return e.registration().empty() ? e.memory_kind() : absl::StrCat(e.memory_kind(), " (", e.registration(), ")");
}

std::string LockstepNote(const v1::Run& run) {
  if (!run.params().bidirectional()) return "";
  size_t tests = 0;
  std::vector<std::string> apart;
  for (const auto& p : run.pairs()) {
    if (p.status() != v1::RESULT_STATUS_OK || p.reverse_sizes().empty()) continue;
    ++tests;
    if (!p.summary().sizes_in_lockstep()) {
      apart.push_back(absl::StrCat(p.src().node(), "<->", p.dst().node(), " rail ", p.rail()));
    }
  }
  if (tests == 0) return "";
  if (apart.empty()) {
    return absl::StrCat("both directions of all ", tests, " bidirectional tests in lock-step (each size started "
                        "and ended together)");
  }
  const size_t shown = std::min<size_t>(apart.size(), 5);
  return absl::StrCat(apart.size(), " of ", tests, " bidirectional tests NOT in lock-step (a direction that "
                      "finished first left the other unloaded: their reverse and summed figures may be "
                      "inflated): ", absl::StrJoin(apart.begin(), apart.begin() + static_cast<long>(shown), ", "),
                      apart.size() > shown ? absl::StrCat(" and ", apart.size() - shown, " more") : "");
}

std::string TestedMemory(const v1::Run& run) {
  std::map<std::string, size_t> used;  // "gpu (ibv_reg_dmabuf_mr)" -> tests (either end)
  size_t tests = 0;
  bool gpu = false;
  for (const auto& p : run.pairs()) {
    if (p.status() != v1::RESULT_STATUS_OK) continue;
    ++tests;
    std::set<std::string> ends = {MemoryUsed(p.src()), MemoryUsed(p.dst())};
    for (const auto& e : ends) {
      ++used[e];
      gpu |= absl::StartsWith(e, "gpu");
    }
  }
  const std::string asked = run.params().memory().empty() ? "host" : run.params().memory();
  if (tests == 0) {
    return absl::StrCat("memory asked: ", asked, absl::StartsWith(asked, "gpu") ? "" : "; GPU path not tested: host memory");
  }
  std::vector<std::pair<std::string, size_t>> order(used.begin(), used.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [what, n] : order) {
    parts.push_back(n == tests ? absl::StrCat(what, " on all ", tests, " tests") : absl::StrCat(what, " on ", n));
  }
  return absl::StrCat("memory: ", absl::StrJoin(parts, ", "),
                      gpu ? "" : absl::StrCat("; GPU path not tested: ", asked, " memory"));
}

std::string MatrixSizeName(const v1::BandwidthMatrix& m) {
  return m.size_bytes() == 0 ? "no size measured" : SizeName(m.size_bytes());
}

std::string SizeName(uint64_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return absl::StrCat(b >> 30, " GiB");
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return absl::StrCat(b >> 20, " MiB");
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return absl::StrCat(b >> 10, " KiB");
  return absl::StrCat(b, " B");
}

std::string Gbps(double v) { return absl::StrFormat("%.3g", v); }

std::vector<const v1::BandwidthMatrix*> VerdictMatrices(const v1::Run& run) {
  std::map<std::pair<uint32_t, uint32_t>, const v1::BandwidthMatrix*> best;  // by (rail, dst rail)
  for (const auto& m : run.matrices()) {
    auto& b = best[{m.rail(), DstRail(m)}];
    if (b == nullptr || m.size_bytes() > b->size_bytes()) b = &m;
  }
  std::vector<const v1::BandwidthMatrix*> out;
  for (const auto& [r, m] : best) out.push_back(m);
  return out;
}

std::string LaneTitle(const v1::BandwidthMatrix& m) {
  std::string name = LaneName(m);
  name[0] = 'R';
  return name;
}

CellIndex::CellIndex(const v1::Run& run) {
  for (const auto& m : run.matrices()) {
    const uint64_t lane = LaneKey(m.rail(), DstRail(m));
    auto& vs = verdict_size_[lane];
    vs = std::max(vs, m.size_bytes());
    for (const auto& c : m.cells()) {
      if (c.src() >= static_cast<uint32_t>(m.nodes_size()) ||
          c.dst() >= static_cast<uint32_t>(m.nodes_size())) {
        continue;
      }
      cells_[{m.nodes(c.src()), m.nodes(c.dst()), lane, m.size_bytes()}] = &c;
    }
  }
}

const v1::MatrixCell* CellIndex::Find(const std::string& src, const std::string& dst, uint32_t rail,
                                      uint32_t dst_rail, uint64_t size) const {
  auto it = cells_.find({src, dst, LaneKey(rail, dst_rail), size});
  return it == cells_.end() ? nullptr : it->second;
}

const v1::MatrixCell* CellIndex::FindVerdict(const std::string& src, const std::string& dst, uint32_t rail,
                                             uint32_t dst_rail) const {
  auto it = verdict_size_.find(LaneKey(rail, dst_rail));
  return it == verdict_size_.end() ? nullptr : Find(src, dst, rail, dst_rail, it->second);
}

std::map<std::string, std::vector<std::string>> PreflightProblems(const v1::Run& run) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& rep : run.preflight()) {
    for (const auto& c : rep.checks()) {
      if (c.status() != v1::CHECK_STATUS_FAIL && c.status() != v1::CHECK_STATUS_WARN) continue;
      out[rep.hostname()].push_back(absl::StrCat(
          c.status() == v1::CHECK_STATUS_FAIL ? "FAIL " : "WARN ", c.id(), ": ", c.summary(),
          c.remediation().empty() ? "" : absl::StrCat(" -> fix: ", c.remediation())));
    }
  }
  return out;
}

std::string RegressionKindName(v1::RegressionKind k) {
  switch (k) {
    case v1::REGRESSION_KIND_LINK: return "link";
    case v1::REGRESSION_KIND_NODE: return "node";
    case v1::REGRESSION_KIND_NIC: return "nic";
    case v1::REGRESSION_KIND_RAIL: return "rail";
    default: return "";
  }
}

std::string RegressionReferenceName(v1::RegressionReference r) {
  switch (r) {
    case v1::REGRESSION_REFERENCE_BASELINE: return "the baseline";
    case v1::REGRESSION_REFERENCE_HISTORY: return "each link's history";
    default: return "the last passing run";
  }
}

}  // namespace gdrbench::report
