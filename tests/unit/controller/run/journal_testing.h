// Helpers of the journal's unit tests (journal_test.cc, journal_records_test.cc):
// a plan over fake agents, a result as the runner makes it, a journal's header
// and path, and the finished tests a resume gives the runner.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "controller/run/journal.h"
#include "controller/run/pair_tester.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"

namespace gdrbench::controller::run::journal_testing {

inline absl::StatusOr<Plan> PlanFor(FakeCluster& c, const std::string& memory = "host",
                                    schedule::Mode mode = schedule::Mode::kAllPairs) {
  v1::SweepParams p;
  p.add_sizes_bytes(65536);
  p.add_sizes_bytes(1 << 20);
  p.set_iterations(100);
  p.set_qps(1);
  schedule::ScheduleOptions o;
  o.mode = mode;
  return c.PlanFor(p, memory, o);
}

// The finished tests of `pairs` as a resume gives them to the runner.
inline DoneTests DoneOf(const Plan& plan, const std::vector<v1::PairResult>& pairs) {
  auto index = [&](const std::string& name) {
    for (uint32_t i = 0; i < plan.nodes.size(); ++i) {
      if (plan.nodes[i].name == name) return i;
    }
    ADD_FAILURE() << "no node " << name;
    return 0u;
  };
  uint32_t rails = 1;
  for (const auto& n : plan.nodes) rails = std::max(rails, static_cast<uint32_t>(n.rails.size()));
  DoneTests done(static_cast<uint32_t>(plan.nodes.size()), rails);
  for (const auto& p : pairs) {
    EXPECT_TRUE(done.Add(p.round(), index(p.src().node()), index(p.dst().node()), p.rail(),
                         p.has_dst_rail() ? p.dst_rail() : p.rail())
                    .ok());
  }
  done.Seal();
  return done;
}

inline std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string();
}

inline v1::JournalHeader Header(const Plan& plan, const std::string& id) {
  v1::JournalHeader h;
  h.set_run_id(id);
  h.set_plan_fingerprint(plan.fingerprint);
  h.set_tests(plan.schedule.tests());
  return h;
}

// A result as the runner makes it (FillIdentity), every measured field set.
inline v1::PairResult FullResult(const Plan& plan, uint32_t src, uint32_t dst, uint32_t rail, uint32_t round,
                                 uint32_t dst_rail = schedule::Test::kSameRail) {
  v1::PairResult r;
  FillIdentity(PairTestSpec{&plan, schedule::Test{src, dst, rail, false, dst_rail}, round}, &r);
  r.set_status(v1::RESULT_STATUS_FAILED);
  r.set_reason("node1->node2: 1048576 B: completion error: IBV_WC_RETRY_EXC_ERR");
  for (uint64_t size : {65536ull, 1048576ull}) {
    v1::SizeResult* s = r.add_sizes();
    s->set_size_bytes(size);
    s->set_iterations(100);
    s->set_bw_avg_gbps(371.25);
    s->set_bw_peak_gbps(389.5);
    s->set_msg_rate_mpps(0.75);
    s->set_duration_ns(123456);
    s->set_status(v1::RESULT_STATUS_OK);
    s->set_verified(true);
    s->set_perftest_command("ib_write_bw -d nic0 -s 65536 -n 100 10.0.0.2");
    *r.add_reverse_sizes() = *s;
  }
  r.mutable_summary()->set_status(v1::RESULT_STATUS_FAILED);
  r.mutable_summary()->set_device("nic0");
  r.mutable_summary()->set_memory_kind("gpu");
  r.mutable_summary()->set_registration("ibv_reg_dmabuf_mr");
  r.mutable_summary()->set_gid("fe80::1");
  r.mutable_src()->set_memory_kind("gpu");
  r.mutable_src()->set_registration("ibv_reg_dmabuf_mr");
  r.mutable_dst()->set_memory_kind("gpu");
  r.mutable_dst()->set_registration("peermem");  // the target registered differently
  r.set_attempts(2);
  r.mutable_started_at()->set_seconds(1796127340);
  r.mutable_started_at()->set_nanos(772716738);
  r.set_duration_ns(-1);  // odd but representable: it must survive as written
  // The ports' counters (link flags): a run.json written from the journal
  // carries them (controller/sweep/streamed_run.h).
  r.mutable_src_counters()->set_device("nic0");
  r.mutable_src_counters()->set_packets(28000);
  v1::CounterChange* c = r.mutable_dst_counters()->add_changes();
  c->set_name("hw_counters/rcvd_seq_err");
  c->set_kind(v1::COUNTER_KIND_RETRANSMIT);
  c->set_delta(812);
  return r;
}

}  // namespace gdrbench::controller::run::journal_testing
