// CSV (a row per pair and size) and JUnit XML (a test case per tested link).
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/analysis/lane.h"
#include "controller/report/report.h"
#include "controller/report/report_util.h"

namespace gdrbench::controller::report {

using internal::CsvField;
using internal::StatusName;
using internal::XmlEscape;

std::string RenderCsv(const v1::Run& run) {
  internal::CellIndex index(run);
  std::string out =
      "run_id,round,src,src_nic,dst,dst_nic,rail,memory,size_bytes,status,bw_avg_gbps,bw_peak_gbps,"
      "msg_rate_mpps,expected_gbps,verdict,attempts,reason,src_memory_used,dst_memory_used,dst_rail\n";
  for (const auto& p : run.pairs()) {
    auto row = [&](uint64_t size, v1::ResultStatus st, double avg, double peak, double rate,
                   const std::string& reason) {
      const v1::MatrixCell* c = index.Find(p.src().node(), p.dst().node(), p.rail(), analysis::DstRail(p), size);
      absl::StrAppend(&out, CsvField(run.run_id()), ",", p.round(), ",", CsvField(p.src().node()), ",",
                      CsvField(p.src().nic_device()), ",", CsvField(p.dst().node()), ",",
                      CsvField(p.dst().nic_device()), ",", p.rail(), ",", CsvField(p.src().memory()),
                      ",", size, ",", StatusName(st), ",", absl::StrFormat("%.6g", avg), ",",
                      absl::StrFormat("%.6g", peak), ",", absl::StrFormat("%.6g", rate), ",",
                      absl::StrFormat("%.6g", p.expected_gbps()), ",", c ? c->verdict() : "", ",",
                      p.attempts(), ",", CsvField(reason), ",", CsvField(internal::MemoryUsed(p.src())), ",",
                      CsvField(internal::MemoryUsed(p.dst())), ",", analysis::DstRail(p), "\n");
    };
    if (p.sizes().empty()) {
      row(0, p.status(), 0, 0, 0, p.reason());
    }
    for (const auto& s : p.sizes()) {
      row(s.size_bytes(), p.status() == v1::RESULT_STATUS_OK ? s.status() : p.status(),
          s.bw_avg_gbps(), s.bw_peak_gbps(), s.msg_rate_mpps(), s.error().empty() ? p.reason() : s.error());
    }
  }
  return out;
}

namespace {

// One test case per tested link (src, dst, lane): an outlier retest of a low
// cell replaces its first result (the retest is what the verdict counts), so
// a CI gate sees as many tests as the matrix has cells.
std::vector<const v1::PairResult*> LastResultPerLink(const v1::Run& run) {
  std::map<std::tuple<std::string, std::string, uint64_t>, size_t> last;
  std::vector<const v1::PairResult*> out;
  for (const auto& p : run.pairs()) {
    auto [it, fresh] =
        last.try_emplace({p.src().node(), p.dst().node(), analysis::LaneKey(p.rail(), analysis::DstRail(p))},
                         out.size());
    if (fresh) {
      out.push_back(&p);
    } else {
      out[it->second] = &p;
    }
  }
  return out;
}

}  // namespace

std::string RenderJUnit(const v1::Run& run) {
  internal::CellIndex index(run);
  size_t failures = 0, errors = 0, skipped = 0;
  std::string cases;
  double total_s = 0;
  const std::vector<const v1::PairResult*> tests = LastResultPerLink(run);
  for (const v1::PairResult* pp : tests) {
    const v1::PairResult& p = *pp;
    const uint32_t dst_rail = analysis::DstRail(p);
    const v1::MatrixCell* c = index.FindVerdict(p.src().node(), p.dst().node(), p.rail(), dst_rail);
    double secs = p.duration_ns() / 1e9;
    total_s += secs;
    absl::StrAppend(&cases, "    <testcase classname=\"gdrbench.rail", p.rail(),
                    dst_rail != p.rail() ? absl::StrCat("-", dst_rail) : "", "\" name=\"",
                    XmlEscape(absl::StrCat(p.src().node(), " -> ", p.dst().node(), " (round ",
                                           p.round(), ")")),
                    "\" time=\"", absl::StrFormat("%.3f", secs), "\"");
    std::string detail = absl::StrCat(p.src().node(), "/", p.src().nic_device(), " -> ",
                                      p.dst().node(), "/", p.dst().nic_device(), " ",
                                      p.src().memory(), ": ");
    if (p.status() == v1::RESULT_STATUS_SKIPPED) {
      ++skipped;
      absl::StrAppend(&cases, ">\n      <skipped message=\"", XmlEscape(p.reason()), "\"/>\n    </testcase>\n");
    } else if (p.status() != v1::RESULT_STATUS_OK) {
      ++errors;
      absl::StrAppend(&cases, ">\n      <error type=\"", StatusName(p.status()), "\" message=\"",
                      XmlEscape(p.reason()), "\">", XmlEscape(detail + p.reason()),
                      "</error>\n    </testcase>\n");
    } else if (c != nullptr && c->verdict() == "low") {
      ++failures;
      absl::StrAppend(&cases, ">\n      <failure type=\"low\" message=\"", XmlEscape(c->reason()),
                      "\">", XmlEscape(detail + c->reason()), "</failure>\n    </testcase>\n");
    } else {
      absl::StrAppend(&cases, ">\n      <system-out>",
                      XmlEscape(absl::StrCat(detail, internal::Gbps(c ? c->bw_avg_gbps() : 0), " Gb/s",
                                             p.link_flag().empty() ? "" : "; pass, but ", p.link_flag())),
                      "</system-out>\n    </testcase>\n");
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, "<testsuites name=\"gdrbench\" tests=\"", tests.size(), "\" failures=\"",
                  failures, "\" errors=\"", errors, "\" skipped=\"", skipped, "\">\n");
  absl::StrAppend(&out, "  <testsuite name=\"gdrbench sweep ", XmlEscape(run.run_id()), " (",
                  XmlEscape(run.mode()), ")\" tests=\"", tests.size(), "\" failures=\"", failures,
                  "\" errors=\"", errors, "\" skipped=\"", skipped, "\" time=\"",
                  absl::StrFormat("%.3f", total_s), "\">\n");
  if (!run.excluded_nodes().empty()) {
    absl::StrAppend(&out, "    <testcase classname=\"gdrbench.preflight\" name=\"nodes left out\">\n",
                    "      <failure type=\"excluded\" message=\"", run.excluded_nodes_size(),
                    " node(s) left out\">");
    for (const auto& e : run.excluded_nodes()) absl::StrAppend(&out, XmlEscape(e), "\n");
    out += "</failure>\n    </testcase>\n";
  }
  absl::StrAppend(&out, cases, "  </testsuite>\n</testsuites>\n");
  return out;
}

}  // namespace gdrbench::controller::report
