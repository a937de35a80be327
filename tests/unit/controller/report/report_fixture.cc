#include "report_fixture.h"

#include "controller/analysis/verdicts.h"

namespace gdrbench::controller::report {

v1::Run SampleRun() {
  v1::Run run;
  run.set_run_id("20261130-000000-abcd");
  run.set_mode("all-pairs");
  run.mutable_params()->set_memory("host");
  std::vector<std::string> names = {"node1", "node2", "node3", "node4"};
  analysis::MatrixSet set(names);
  uint32_t round = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    for (uint32_t j = 0; j < 4; ++j) {
      if (i == j) continue;
      v1::PairResult p;
      p.mutable_src()->set_node(names[i]);
      p.mutable_src()->set_nic_device("rxe" + std::to_string(i));
      p.mutable_src()->set_memory("host");
      p.mutable_dst()->set_node(names[j]);
      p.mutable_dst()->set_nic_device("rxe" + std::to_string(j));
      p.set_round(round++);
      p.set_attempts(1);
      p.set_expected_gbps(100);
      p.set_duration_ns(1500000000);
      if (i == 3 && j == 0) {
        p.set_status(v1::RESULT_STATUS_ERROR);
        p.set_reason("OpenTarget on node1: agent 10.0.0.1:50051 unreachable, \"refused\" <&>");
        p.set_attempts(2);
      } else {
        p.set_status(v1::RESULT_STATUS_OK);
        double top = (i == 0 && j == 2) ? 30 : 94 + i;
        for (uint64_t s = 4096; s <= (1u << 20); s *= 4) {
          auto* sz = p.add_sizes();
          sz->set_size_bytes(s);
          sz->set_bw_avg_gbps(top * (s == (1u << 20) ? 1.0 : 0.3 + 0.1 * (s >> 14)));
          sz->set_bw_peak_gbps(sz->bw_avg_gbps() * 1.05);
          sz->set_status(v1::RESULT_STATUS_OK);
        }
      }
      set.Add(p);
      *run.add_pairs() = p;
    }
  }
  auto* pre = run.add_preflight();
  pre->set_hostname("node1");
  auto* c = pre->add_checks();
  c->set_id("peermem_persisted");
  c->set_status(v1::CHECK_STATUS_WARN);
  c->set_summary("nvidia-peermem is loaded but not in /etc/modules-load.d");
  c->set_remediation("echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf");
  *run.mutable_policy() = analysis::DefaultPolicy();
  auto outcome = analysis::Judge(set, run.policy(), nullptr, {});
  analysis::FillRun(set, outcome, &run);
  return run;
}

}  // namespace gdrbench::controller::report
