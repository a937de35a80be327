// CSV (a row per pair and size) and JUnit XML (a test case per tested link).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/analysis/gdr.h"
#include "controller/report/report.h"
#include "report/lane.h"
#include "report/report_util.h"

namespace gdrbench::controller::report {

using gdrbench::report::CellIndex;
using gdrbench::report::CsvField;
using gdrbench::report::DstRail;
using gdrbench::report::Gbps;
using gdrbench::report::LaneKey;
using gdrbench::report::MemoryUsed;
using gdrbench::report::StatusName;
using gdrbench::report::XmlEscape;

namespace {

// A ratio column: empty when it was not measured (0).
std::string RatioField(double r) { return r > 0 ? absl::StrFormat("%.4g", r) : ""; }

// One test case per tested link (src, dst, lane): an outlier retest of a low
// cell replaces its first result (the retest is what the verdict counts), so
// a CI gate sees as many tests as the matrix has cells.
std::vector<const v1::PairResult*> LastResultPerLink(const v1::Run& run) {
  std::map<std::tuple<std::string, std::string, uint64_t>, size_t> last;
  std::vector<const v1::PairResult*> out;
  for (const auto& p : run.pairs()) {
    auto [it, fresh] =
        last.try_emplace({p.src().node(), p.dst().node(), LaneKey(p.rail(), DstRail(p))}, out.size());
    if (fresh) {
      out.push_back(&p);
    } else {
      out[it->second] = &p;
    }
  }
  return out;
}


}  // namespace

std::string RenderCsv(const v1::Run& run) {
  CellIndex index(run);
  std::string out =
      "run_id,round,src,src_nic,dst,dst_nic,rail,memory,size_bytes,status,bw_avg_gbps,bw_peak_gbps,"
      "msg_rate_mpps,expected_gbps,verdict,attempts,reason,src_memory_used,dst_memory_used,dst_rail,"
      "staged_bw_avg_gbps,gpu_host_ratio,staged_host_ratio,superseded_by_round\n";
  // A link measured again (an outlier retest) has one reading the matrix
  // counts, the last (analysis/matrix.cc): only its rows carry the cell's
  // verdict; an earlier reading's rows name the round that replaced it, so
  // counting the verdict column gives the run's counts.
  std::map<const v1::PairResult*, uint32_t> superseded;
  {
    std::map<std::tuple<std::string, std::string, uint64_t>, const v1::PairResult*> seen;
    for (const auto& p : run.pairs()) {
      auto key = std::make_tuple(p.src().node(), p.dst().node(), LaneKey(p.rail(), DstRail(p)));
      auto [it, fresh] = seen.try_emplace(key, &p);
      if (!fresh) {
        superseded[it->second] = p.round();
        it->second = &p;
      }
    }
  }
  for (const auto& p : run.pairs()) {
    const auto replaced = superseded.find(&p);
    const std::string replaced_by = replaced == superseded.end() ? "" : absl::StrCat(replaced->second);
    const std::string ratios = absl::StrCat(RatioField(p.gpu_host_ratio()), ",", RatioField(p.staged_host_ratio()));
    // `r` is the pair's result or one of its memory halves (--memory with a
    // list: the later kinds, a row per size each, their memory column naming
    // the kind). The matrices and their verdicts are the first kind's: a
    // half's verdict column is empty (its gdr blame is in the run's blame).
    auto rows = [&](const v1::PairResult& r, bool half) {
      auto row = [&](uint64_t size, v1::ResultStatus st, double avg, double peak, double rate, double staged,
                     const std::string& reason) {
        const v1::MatrixCell* c = half || !replaced_by.empty() ? nullptr
                                                               : index.Find(p.src().node(), p.dst().node(),
                                                                            p.rail(), DstRail(p), size);
        absl::StrAppend(
            &out, CsvField(run.run_id()), ",", p.round(), ",", CsvField(p.src().node()), ",",
            CsvField(p.src().nic_device()), ",", CsvField(p.dst().node()), ",",
            CsvField(p.dst().nic_device()), ",", p.rail(), ",", CsvField(r.src().memory()), ",", size, ",",
            StatusName(st), ",", absl::StrFormat("%.6g", avg), ",", absl::StrFormat("%.6g", peak), ",",
            absl::StrFormat("%.6g", rate), ",", absl::StrFormat("%.6g", p.expected_gbps()), ",",
            c ? c->verdict() : "", ",", p.attempts(), ",", CsvField(reason), ",",
            CsvField(MemoryUsed(r.src())), ",", CsvField(MemoryUsed(r.dst())), ",", DstRail(p), ",",
            staged > 0 ? absl::StrFormat("%.6g", staged) : "", ",", ratios, ",", replaced_by, "\n");
      };
      if (r.sizes().empty()) row(0, r.status(), 0, 0, 0, 0, r.reason());
      for (const auto& s : r.sizes()) {
        row(s.size_bytes(), r.status() == v1::RESULT_STATUS_OK ? s.status() : r.status(), s.bw_avg_gbps(),
            s.bw_peak_gbps(), s.msg_rate_mpps(), s.staged_bw_avg_gbps(), s.error().empty() ? r.reason() : s.error());
      }
    };
    rows(p, false);
    for (const auto& h : p.memory_halves()) rows(h, true);
  }
  return out;
}

namespace {

// The JUnit test cases of a run's pair results, and their counts.
class JUnitCases {
 public:
  size_t failures = 0, errors = 0, skipped = 0, halves = 0;
  double total_s = 0;
  std::string cases;

  // One pair's test case, then one per later kind of its --memory list
  // (a gpu half with a gdr blame, gdr.h, is a failure).
  void AddPair(const v1::Run& run, const v1::PairResult& p, const v1::MatrixCell* c) {
    const uint32_t dst_rail = DstRail(p);
    OpenCase(p, dst_rail, "", p.duration_ns());
    const std::string detail = Detail(p, p.src().memory());
    if (!NotRun(p, detail, "")) {
      if (c != nullptr && c->verdict() == "low") {
        Failure("low", c->reason(), detail);
      } else {
        Passed(absl::StrCat(detail, Gbps(c ? c->bw_avg_gbps() : 0), " Gb/s",
                            p.link_flag().empty() ? "" : "; pass, but ", p.link_flag()));
      }
    }
    const std::optional<v1::Blame> gdr = analysis::GdrBlame(p, run.policy());
    for (const auto& h : p.memory_halves()) {
      ++halves;
      const std::string kind = analysis::MemoryKindOf(h.src().memory());
      const bool blamed = gdr.has_value() && kind == "gpu";
      OpenCase(p, dst_rail, kind, h.duration_ns());
      const std::string hdetail = Detail(p, h.src().memory());
      if (NotRun(h, hdetail, blamed ? XmlEscape("\n" + gdr->reason()) : "")) continue;
      if (blamed) {
        Failure("gdr", gdr->reason(), hdetail);
      } else {
        double best = 0;
        for (const auto& z : h.sizes()) best = std::max(best, z.bw_avg_gbps());
        Passed(absl::StrCat(hdetail, Gbps(best), " Gb/s best",
                            kind == "gpu" && p.gpu_host_ratio() > 0
                                ? absl::StrFormat("; %.0f%% of host memory", 100 * p.gpu_host_ratio())
                                : ""));
      }
    }
  }

 private:
  // One test case's opening tag (its time added to the suite's), then one
  // of skipped, error, failure or system-out.
  void OpenCase(const v1::PairResult& p, uint32_t dst_rail, const std::string& kind, int64_t duration_ns) {
    const double secs = duration_ns / 1e9;
    total_s += secs;
    absl::StrAppend(&cases, "    <testcase classname=\"gdrbench.rail", p.rail(),
                    dst_rail != p.rail() ? absl::StrCat("-", dst_rail) : "", "\" name=\"",
                    XmlEscape(absl::StrCat(p.src().node(), " -> ", p.dst().node(), kind.empty() ? "" : " ",
                                           kind, " (round ", p.round(), ")")),
                    "\" time=\"", absl::StrFormat("%.3f", secs), "\"");
  }
  static std::string Detail(const v1::PairResult& p, const std::string& memory) {
    return absl::StrCat(p.src().node(), "/", p.src().nic_device(), " -> ", p.dst().node(), "/",
                        p.dst().nic_device(), " ", memory, ": ");
  }
  // A result that did not run OK: skipped or an error; false when it ran.
  bool NotRun(const v1::PairResult& r, const std::string& detail, const std::string& more) {
    if (r.status() == v1::RESULT_STATUS_SKIPPED) {
      ++skipped;
      // JUnit's element for a test that did not run; its message says it in
      // the words of every other report.
      absl::StrAppend(&cases, ">\n      <skipped message=\"not run: ", XmlEscape(r.reason()),
                      "\"/>\n    </testcase>\n");
      return true;
    }
    if (r.status() == v1::RESULT_STATUS_OK) return false;
    ++errors;
    absl::StrAppend(&cases, ">\n      <error type=\"", StatusName(r.status()), "\" message=\"",
                    XmlEscape(r.reason()), "\">", XmlEscape(detail + r.reason()), more,
                    "</error>\n    </testcase>\n");
    return true;
  }
  void Failure(const std::string& type, const std::string& reason, const std::string& detail) {
    ++failures;
    absl::StrAppend(&cases, ">\n      <failure type=\"", type, "\" message=\"", XmlEscape(reason), "\">",
                    XmlEscape(detail + reason), "</failure>\n    </testcase>\n");
  }
  void Passed(const std::string& text) {
    absl::StrAppend(&cases, ">\n      <system-out>", XmlEscape(text), "</system-out>\n    </testcase>\n");
  }
};

}  // namespace

std::string RenderJUnit(const v1::Run& run) {
  CellIndex index(run);
  JUnitCases j;
  const std::vector<const v1::PairResult*> tests = LastResultPerLink(run);
  for (const v1::PairResult* p : tests) {
    j.AddPair(run, *p, index.FindVerdict(p->src().node(), p->dst().node(), p->rail(), DstRail(*p)));
  }
  // Nodes left out (preflight FAIL, unreachable) are one failing test case of
  // their own, counted like every other: a CI gate that reads only the
  // counts must see a failure when no agent answered.
  const bool left_out = !run.excluded_nodes().empty();
  if (left_out) ++j.failures;
  const size_t total = tests.size() + j.halves + (left_out ? 1 : 0);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // <testsuites> has no skipped attribute in Jenkins' junit-10.xsd (the
  // schema its JUnit and xUnit plugins read; tests/testdata/junit): only
  // <testsuite> carries it.
  absl::StrAppend(&out, "<testsuites name=\"gdrbench\" tests=\"", total, "\" failures=\"", j.failures,
                  "\" errors=\"", j.errors, "\">\n");
  absl::StrAppend(&out, "  <testsuite name=\"gdrbench sweep ", XmlEscape(run.run_id()), " (",
                  XmlEscape(run.mode()), ")\" tests=\"", total, "\" failures=\"", j.failures, "\" errors=\"",
                  j.errors, "\" skipped=\"", j.skipped, "\" time=\"", absl::StrFormat("%.3f", j.total_s),
                  "\">\n");
  if (left_out) {
    absl::StrAppend(&out, "    <testcase classname=\"gdrbench.preflight\" name=\"nodes left out\">\n",
                    "      <failure type=\"excluded\" message=\"", run.excluded_nodes_size(),
                    " node(s) left out\">");
    for (const auto& e : run.excluded_nodes()) absl::StrAppend(&out, XmlEscape(e), "\n");
    out += "</failure>\n    </testcase>\n";
  }
  absl::StrAppend(&out, j.cases, "  </testsuite>\n</testsuites>\n");
  return out;
}

}  // namespace gdrbench::controller::report
