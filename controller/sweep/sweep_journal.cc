// The run's journal: a new one, or an interrupted one streamed back
// (resume) into the collector.
#include <algorithm>
#include <ctime>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "controller/sweep/sweep_internal.h"
#include "spdlog/spdlog.h"

namespace gdrbench::controller::sweep {
namespace internal {
namespace {

std::string NewRunId() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return absl::StrFormat("%s-%04x", buf, rd() & 0xffff);
}

uint32_t MaxRails(const run::Plan& plan) {
  size_t rails = 1;
  for (const auto& n : plan.nodes) rails = std::max({rails, n.rails.size(), n.rail_gbps.size()});
  return static_cast<uint32_t>(rails);
}

// Resume: the journal streamed (nothing of it held but the matrices'
// cells, the finished tests' keys and, with keep_pairs, the pairs), each
// finished test handed to `collect`. Without keep_pairs no PairResult is
// built (JournalVisitor::on_measured).
absl::Status ReadResumed(const SweepConfig& c, const run::Plan& plan, Collector& collect, Journal* j) {
  j->done = run::DoneTests(static_cast<uint32_t>(plan.nodes.size()), MaxRails(plan));
  run::JournalVisitor v;
  v.on_start = [&](const run::JournalSummary& s) -> absl::Status {
    if (s.header.plan_fingerprint() != plan.fingerprint) {
      return absl::InvalidArgumentError(
          absl::StrCat("resume ", c.journal_path, ": the journal was written for plan ",
                       s.header.plan_fingerprint(), ", this sweep makes plan ", plan.fingerprint,
                       ": resume with the same inventory and options (and the same nodes answering)"));
    }
    j->done.Reserve(s.header.tests());
    return absl::OkStatus();
  };
  if (c.keep_pairs) {
    v.on_test = [&](const v1::PairResult& p, uint32_t, uint32_t) {
      collect.KeepResumed(p);
      return absl::OkStatus();
    };
  }
  v.on_measured = [&](const run::FinishedTest& t) -> absl::Status {
    uint32_t src = t.src, dst = t.dst;
    if (src == run::kNoNodeIndex) {  // format 1: by name
      const std::string src_node(t.src_node), dst_node(t.dst_node);
      const int s = collect.matrices().NodeIndex(src_node), d = collect.matrices().NodeIndex(dst_node);
      if (s < 0 || d < 0) {
        return absl::DataLossError(absl::StrCat("resume ", c.journal_path, ": a test of ", src_node, " -> ",
                                                dst_node, ", a node outside this plan"));
      }
      src = static_cast<uint32_t>(s);
      dst = static_cast<uint32_t>(d);
    }
    collect.Take(t.measured, src, dst);
    const absl::Status added = j->done.Add(t.round, src, dst, t.measured.rail, t.measured.dst_rail);
    return added.ok() ? added
                      : absl::DataLossError(absl::StrCat("resume ", c.journal_path, ": ", added.message()));
  };
  GDR_ASSIGN_OR_RETURN(run::JournalSummary in, run::StreamJournal(c.journal_path, v));
  j->done.Seal();
  j->header = std::move(in.header);
  GDR_ASSIGN_OR_RETURN(j->writer, run::JournalWriter::Reopen(c.journal_path, in.valid_bytes,
                                                             run::DescribePlan(plan), c.journal_options));
  spdlog::info(
      "resuming run {}: {} tests already done{}", j->header.run_id(), in.tests,
      in.torn_tail ? absl::StrCat(" (a torn last record of ", in.dropped_bytes, " bytes was dropped)") : "");
  return absl::OkStatus();
}

}  // namespace

google::protobuf::Timestamp Now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  google::protobuf::Timestamp t;
  t.set_seconds(ns / 1000000000);
  t.set_nanos(static_cast<int32_t>(ns % 1000000000));
  return t;
}

absl::StatusOr<Journal> OpenJournal(const SweepConfig& c, const run::Plan& plan, Collector& collect) {
  Journal j;
  if (c.resume) {
    if (c.journal_path.empty()) return absl::InvalidArgumentError("resume: no journal path given");
    GDR_RETURN_IF_ERROR(ReadResumed(c, plan, collect, &j));
    return j;
  }
  j.header.set_run_id(c.run_id.empty() ? NewRunId() : c.run_id);
  j.header.set_plan_fingerprint(plan.fingerprint);
  *j.header.mutable_started_at() = Now();
  j.header.set_mode(schedule::ModeName(plan.schedule_options.mode));
  *j.header.mutable_params() = plan.params;
  for (const auto& n : plan.nodes) j.header.add_nodes(n.name);
  j.header.set_tests(plan.schedule.tests());
  if (!c.journal_path.empty()) {
    GDR_ASSIGN_OR_RETURN(j.writer, run::JournalWriter::Create(c.journal_path, j.header,
                                                              run::DescribePlan(plan), c.journal_options));
  }
  return j;
}

}  // namespace internal
}  // namespace gdrbench::controller::sweep
