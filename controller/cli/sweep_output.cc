#include "controller/cli/sweep_output.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "controller/report/report.h"
#include "report/lane.h"
#include "report/report_util.h"

namespace gdrbench::controller::cli {
namespace {

std::string Hms(double s) {
  if (s < 0) return "?";
  auto t = static_cast<long long>(s + 0.5);
  if (t >= 3600) return absl::StrFormat("%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  return absl::StrFormat("%lld:%02lld", t / 60, t % 60);
}

// --mode cover | shift: a test's cables, each with its tier and the
// direction it is crossed (",\"cables\":[...]"); "" in other modes.
std::string CablesJson(const run::Plan& plan, const schedule::Test& t) {
  if (plan.fabric == nullptr) return "";
  const std::vector<uint32_t>* path = plan.fabric->Path(t);
  if (path == nullptr) return "";
  std::string out = ",\"cables\":[";
  for (size_t i = 0; i < path->size(); ++i) {
    const run::FabricCable& c = plan.fabric->cables[(*path)[i] >> 1];
    absl::StrAppend(&out, i ? "," : "", "{\"cable\":\"", JsonEscape(c.name), "\",\"tier\":", c.tier,
                    ",\"direction\":\"", ((*path)[i] & 1) != 0 ? "down" : "up", "\"}");
  }
  return out + "]";
}

// "\"fabric\":{...},\n": the topology, routing, rounds against the lower
// bound, and the cables the plan leaves out; "" in other modes.
std::string FabricJson(const run::Plan& plan) {
  if (plan.fabric == nullptr) return "";
  const run::FabricPaths& f = *plan.fabric;
  std::string out = absl::StrFormat(
      "\"fabric\":{\"topology\":\"%s\",\"routing\":\"%s\",\"planned_rounds\":%zu,\"lower_bound_rounds\":%d,"
      "\"cables\":%zu,\"not_planned\":[",
      JsonEscape(f.topology), f.routing, f.planned_rounds, f.lower_bound_rounds, f.cables.size());
  for (size_t i = 0; i < f.not_planned.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", "{\"cable\":\"", JsonEscape(f.cables[f.not_planned[i].first].name),
                    "\",\"why\":\"", JsonEscape(f.not_planned[i].second), "\"}");
  }
  return out + "]},\n";
}

}  // namespace

size_t RailCount(const run::Plan& plan) {
  size_t r = 0;
  for (const auto& n : plan.nodes) r = std::max(r, n.rails.size());
  return r;
}

std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          o += absl::StrFormat("\\u%04x", c);
        } else {
          o.push_back(c);
        }
    }
  }
  return o;
}

void PrintPlanJson(const run::Plan& plan, const schedule::EstimateParams& est, const std::string& basis,
                   std::FILE* out) {
  const auto& s = plan.schedule;
  const auto& o = plan.schedule_options;
  std::fprintf(out,
               "{\"fingerprint\":\"%s\",\"mode\":\"%s\",\"fan_in\":%u,\"bidirectional\":%s,\"memory\":\"%s\","
               "\"rails\":%zu,\"rounds_total\":%zu,\"tests\":%zu,\"max_tests_per_round\":%zu,"
               "\"estimated_seconds\":%.6g,\"estimated_seconds_per_round\":%.6g,"
               "\"assumed_link_gbps\":%.6g,\"estimate_basis\":\"%s\",\n\"nodes\":[",
               plan.fingerprint.c_str(), schedule::ModeName(o.mode), schedule::MaxFanIn(o),
               o.bidirectional ? "true" : "false",
               JsonEscape(plan.memory).c_str(), RailCount(plan), s.rounds(), s.tests(),
               s.MaxRoundSize(), schedule::EstimateScheduleSeconds(s, est),
               schedule::EstimateTestSeconds(est), est.link_gbps, JsonEscape(basis).c_str());
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const auto& n = plan.nodes[i];
    std::fprintf(out, "%s{\"name\":\"%s\",\"address\":\"%s\",\"rails\":[", i ? "," : "",
                 JsonEscape(n.name).c_str(), JsonEscape(n.address).c_str());
    for (size_t r = 0; r < n.rails.size(); ++r) {
      std::fprintf(out, "%s{\"nic\":\"%s\",\"gpu\":%d}", r ? "," : "", JsonEscape(n.rails[r].nic).c_str(),
                   n.rails[r].gpu ? static_cast<int>(*n.rails[r].gpu) : -1);
    }
    std::fprintf(out, "]}");
  }
  std::fprintf(out, "],\n%s\"rounds\":[\n", FabricJson(plan).c_str());
  for (size_t r = 0; r < s.rounds(); ++r) {
    std::fprintf(out, "%s{\"round\":%zu,\"tests\":[", r ? ",\n" : "", r);
    bool first = true;
    for (const auto& t : s.Round(r)) {
      std::fprintf(out,
                   "%s{\"src\":\"%s\",\"dst\":\"%s\",\"rail\":%u,\"dst_rail\":%u,\"bidirectional\":%s%s}",
                   first ? "" : ",", JsonEscape(plan.nodes[t.src].name).c_str(),
                   JsonEscape(plan.nodes[t.dst].name).c_str(), t.rail, t.TargetRail(),
                   t.bidirectional ? "true" : "false", CablesJson(plan, t).c_str());
      first = false;
    }
    std::fprintf(out, "]}");
  }
  std::fprintf(out, "\n]}\n");
}

std::string ResultLine(const v1::PairResult& r) {
  std::string line =
      absl::StrFormat("%s %s %s %s: ", r.src().node(), r.reverse_sizes().empty() ? "->" : "<->",
                      r.dst().node(), gdrbench::report::LaneName(r));
  if (r.status() != v1::RESULT_STATUS_OK) {
    const char* word = r.status() == v1::RESULT_STATUS_SKIPPED ? "not run" : r.status() == v1::RESULT_STATUS_ERROR ? "ERROR" : "FAILED";
    return absl::StrCat(line, word, r.reason().empty() ? "" : absl::StrCat(": ", r.reason()));
  }
  const v1::SizeResult* largest = nullptr;
  for (const auto& s : r.sizes()) {
    if (s.status() == v1::RESULT_STATUS_OK && (largest == nullptr || s.size_bytes() > largest->size_bytes())) largest = &s;
  }
  if (largest == nullptr) return absl::StrCat(line, "OK, no size measured");
  const std::string size = gdrbench::report::SizeName(largest->size_bytes());
  std::string of_link;
  if (r.expected_gbps() > 0) {
    of_link = absl::StrFormat(" (%.0f%% of %.4g Gb/s)", 100 * largest->bw_avg_gbps() / r.expected_gbps(), r.expected_gbps());
  }
  // A bidirectional test whose directions were not held together says so:
  // its reverse figures may be inflated.
  const bool unsynced = !r.reverse_sizes().empty() && !r.summary().sizes_in_lockstep();
  return absl::StrCat(line, absl::StrFormat("%.3g Gb/s at %s%s, OK", largest->bw_avg_gbps(), size, of_link),
                      unsynced ? " (directions NOT in lock-step)" : "");
}

void ProgressPrinter::Result(const v1::PairResult& r) {
  if (style_ != Style::kLines) return;
  ++results_;
  const size_t total = std::max(latest_.tests_total, latest_.tests_done + 1);
  const size_t done = std::min(latest_.tests_done + 1, total);
  const int w = static_cast<int>(std::to_string(total).size());
  std::fprintf(out_, "[%*zu/%zu] %s%s\n", w, done, total, ResultLine(r).c_str(),
               latest_.eta_s >= 0 && done < total ? absl::StrCat(", ETA ", Hms(latest_.eta_s)).c_str() : "");
  std::fflush(out_);
}

void ProgressPrinter::Update(const run::Progress& p) {
  latest_ = p;
  if (style_ == Style::kNone || style_ == Style::kLines) return;
  auto now = std::chrono::steady_clock::now();
  bool last = p.tests_done == p.tests_total;
  if (!last && drew_ && now - last_ < interval_) return;
  last_ = now;
  drew_ = true;
  if (style_ == Style::kJson) {
    std::fprintf(out_,
                 "{\"event\":\"progress\",\"tests_done\":%zu,\"tests_total\":%zu,\"tests_bad\":%zu,"
                 "\"tests_resumed\":%zu,\"round\":%zu,\"rounds\":%zu,\"elapsed_s\":%.3f,\"eta_s\":%.3f}\n",
                 p.tests_done, p.tests_total, p.tests_bad, p.tests_resumed, p.round, p.rounds,
                 p.elapsed_s, p.eta_s);
    std::fflush(out_);
    return;
  }
  constexpr int kWidth = 30;
  int filled = p.tests_total ? static_cast<int>(kWidth * p.tests_done / p.tests_total) : kWidth;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::fprintf(out_, "\r[%s] %zu/%zu tests, %zu bad, round %zu/%zu, elapsed %s, ETA %s   ", bar.c_str(),
               p.tests_done, p.tests_total, p.tests_bad, p.round + 1, p.rounds, Hms(p.elapsed_s).c_str(),
               Hms(p.eta_s).c_str());
  std::fflush(out_);
}

void ProgressPrinter::Finish() {
  if (style_ == Style::kBar && drew_) std::fputc('\n', out_);
}

absl::StatusOr<std::vector<std::string>> WriteSweepReports(const sweep::StreamedRun& run,
                                                           const std::string& dir, size_t max_whole_cells) {
  if (!run.streamed()) return report::WriteReports(run.header(), dir);
  const size_t cells = run.cells();
  if (cells <= max_whole_cells) {
    GDR_ASSIGN_OR_RETURN(v1::Run whole, run.Materialize());
    return report::WriteReports(whole, dir);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("--out ", dir, ": ", ec.message()));
  // As report::WriteReports: a temporary name renamed, so a reader never
  // sees half a run.json.
  const std::string path = (std::filesystem::path(dir) / "run.json").string();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return ErrnoToStatus(errno, absl::StrCat("report ", tmp));
    if (absl::Status st = run.WriteJson(out); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat("report ", tmp, ": ", st.message()));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("report ", path, ": rename: ", ec.message()));
  // An earlier run's reports would read as this run's.
  for (const char* name : {"pairs.csv", "summary.md", "report.html", "junit.xml"}) {
    std::filesystem::remove(std::filesystem::path(dir) / name, ec);
  }
  std::fprintf(stderr,
               "reports: run.json written streamed; pairs.csv, summary.md, report.html and junit.xml are not "
               "written for a run of %zu matrix cells (over %zu they need the whole run in memory)\n",
               cells, max_whole_cells);
  return std::vector<std::string>{path};
}

}  // namespace gdrbench::controller::cli
