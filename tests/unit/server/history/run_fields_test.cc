// An uploaded run's string fields and preflight reports (server/history/
// run_fields.h), and /metrics kept to the run's nodes with every label value
// escaped as the text exposition format requires
// (https://prometheus.io/docs/instrumenting/exposition_formats/: a label
// value escapes backslash, double quote and line feed). The hostile values
// are the ones issue 31's probe sent.
#include "server/history/run_fields.h"

#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/history/export.h"
#include "server/history/ingest.h"
#include "server/metrics/metrics.h"
#include "server/sweeps/sweep_manager.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {
namespace {

using ::testing::HasSubstr;

v1::Run WithPreflight() {
  testing::FakeRunSpec spec;
  spec.preflight_warn = {1};
  return testing::FakeRun(spec);
}

TEST(RunFields, TheControllersRunPasses) {
  v1::Run run = WithPreflight();
  ASSERT_EQ(run.preflight_size(), 4);
  EXPECT_TRUE(history::ValidateRunFields(run).ok()) << history::ValidateRunFields(run);
}

TEST(RunFields, HostileStringsAreRefusedNamingTheField) {
  const v1::Run run = WithPreflight();
  struct Case {
    std::function<void(v1::Run*)> mutate;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](v1::Run* r) { r->set_mode(std::string("all-pairs\0x", 11)); }, "mode 'all-pairs\\x00x'"},
      {[](v1::Run* r) { r->set_summary(std::string(1 << 20, 'a')); }, "summary: 1048576 bytes, more than 16384"},
      {[](v1::Run* r) { r->set_summary("ok\r\nSet-Cookie: x"); }, "summary 'ok\\x0d\\x0aSet-Cookie: x' has the control character \\x0d"},
      {[](v1::Run* r) { r->mutable_preflight(0)->set_hostname("node0\x01"); }, "preflight[0].hostname 'node0\\x01'"},
      {[](v1::Run* r) { r->mutable_preflight(0)->set_hostname(std::string(10000, 'h')); },
       "preflight[0]: hostname 'hhhh"},
      {[](v1::Run* r) { r->mutable_preflight(0)->set_hostname("a\nb"); }, "must be 1 to 253 printable characters"},
      {[](v1::Run* r) { *r->add_preflight() = r->preflight(2); }, "5 preflight reports for 4 nodes"},
      {[](v1::Run* r) {
         for (int i = 0; i < 5000; ++i) r->add_preflight()->set_hostname("ghost" + std::to_string(i));
       },
       "5004 preflight reports for 4 nodes"},
      {[](v1::Run* r) { r->mutable_preflight(1)->mutable_checks(0)->set_id("peermem loaded"); },
       "preflight[1].checks[0]: id 'peermem loaded' must be 1 to 64 characters"},
      {[](v1::Run* r) { r->mutable_preflight(1)->mutable_checks(0)->set_id("a\nb"); }, "id 'a\\x0ab' must be 1 to 64"},
      {[](v1::Run* r) {
         auto* p = r->mutable_preflight(3);
         for (int i = 0; i < 65; ++i) p->add_checks()->set_id("c" + std::to_string(i));
       },
       "checks, more than 64"},
      {[](v1::Run* r) { r->add_excluded_nodes("no reason"); }, "excluded_nodes[0] 'no reason' is not 'NODE: reason'"},
  };
  for (const Case& c : cases) {
    v1::Run bad = run;
    c.mutate(&bad);
    absl::Status st = history::ValidateRunFields(bad);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.says;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.says));
  }
}

// The strings inside an upload's pair and cell chunks are checked as the
// header's are (issue 31, item 5), naming the pair or cell and the field.
TEST(RunFields, StringsInsidePairAndCellChunksAreRefusedNamingThem) {
  struct Case {
    std::function<void(v1::Run*)> mutate;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](v1::Run* r) { r->mutable_pairs(2)->set_reason("x\x1b[2Jy"); },
       "the pair chunk from pair 0: pairs[2].reason 'x\\x1b[2Jy' has the control character \\x1b"},
      {[](v1::Run* r) { r->mutable_pairs(5)->mutable_sizes(0)->set_error(std::string(20000, 'e')); },
       "pairs[5].sizes[0].error: 20000 bytes, more than 16384"},
      {[](v1::Run* r) { r->mutable_pairs(0)->mutable_src()->set_nic_device("mlx5_0\r\n"); },
       "pairs[0].src.nic_device 'mlx5_0\\x0d\\x0a'"},
      {[](v1::Run* r) { r->mutable_matrices(0)->mutable_cells(1)->set_verdict("pass\x7f"); },
       "cell 1 of rail 0 size 65536 B: verdict 'pass\\x7f' has the control character \\x7f"},
      {[](v1::Run* r) { r->mutable_matrices(1)->mutable_cells(0)->set_reason(std::string(17000, 'r')); },
       "cell 0 of rail 0 size 1048576 B: reason: 17000 bytes, more than 16384"},
  };
  int n = 0;
  for (const Case& c : cases) {
    auto store = testing::OpenTestStore("chunk_strings_" + std::to_string(n++));
    ASSERT_TRUE(store.ok()) << store.status();
    v1::Run bad = testing::FakeRun({});
    ASSERT_GE(bad.pairs_size(), 6);
    ASSERT_GE(bad.matrices_size(), 2);
    ASSERT_EQ(bad.matrices(1).size_bytes(), 1048576u);
    c.mutate(&bad);
    auto r = history::StoreRun(**store, bad, {});
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.says));
    auto listed = (*store)->FindRun(bad.run_id());
    ASSERT_TRUE(listed.ok());
    EXPECT_FALSE(listed->has_value()) << c.says << ": stored anyway";
  }
  auto store = testing::OpenTestStore("chunk_strings_ok");
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE(history::StoreRun(**store, testing::FakeRun({}), {}).ok());
}

// A cell is checked field by field by hand (8 M cells must not pay for
// reflection): its string fields must stay the two ingest checks.
TEST(RunFields, CellStringsAreTheOnesIngestChecks) {
  std::vector<std::string> strings;
  const auto* d = v1::MatrixCell::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_STRING ||
        f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      strings.push_back(f->name());
    }
  }
  EXPECT_THAT(strings, ::testing::UnorderedElementsAre("verdict", "reason"))
      << "a string or message field was added to MatrixCell: check it in Ingester::AddCells";
}

// A real run (tests/testdata/runs/slurm-lab-node4.json, README there) names
// the agents' host, "lab", in each of its 4 reports.
TEST(RunFields, ReportsMayNameTheAgentsHost) {
  v1::Run run = WithPreflight();
  for (auto& rep : *run.mutable_preflight()) rep.set_hostname("lab");
  EXPECT_TRUE(history::ValidateRunFields(run).ok()) << history::ValidateRunFields(run);
}

TEST(RunFields, AnExcludedNodeMayHaveAReport) {
  v1::Run run = WithPreflight();
  run.add_excluded_nodes("node9: preflight FAIL (peermem_loaded)");
  run.add_preflight()->set_hostname("node9");
  EXPECT_TRUE(history::ValidateRunFields(run).ok()) << history::ValidateRunFields(run);
}

// A run stored without ingest's checks (as an older server kept it) still
// gives /metrics only its own nodes' reports, and nothing unescaped.
TEST(RunFields, MetricsKeepToTheRunsNodesAndEscape) {
  auto store = testing::OpenTestStore("metrics_hostile_preflight");
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Run run = testing::FakeRun({});
  for (int i = 0; i < 5000; ++i) {
    auto* p = run.add_preflight();
    p->set_hostname(i == 0 ? "node0" : "ghost" + std::to_string(i) + "\r\x01");
    for (int j = 0; j < 4; ++j) {
      auto* c = p->add_checks();
      c->set_id(j == 0 ? "peermem_loaded" : "bad\"id\n" + std::to_string(j));
      c->set_status(v1::CHECK_STATUS_FAIL);
    }
  }
  store::RunRow row;
  row.run_id = run.run_id();
  row.cluster = run.cluster();
  row.started_us = store::ToMicros(run.started_at());
  row.finished_us = row.started_us;
  auto w = (*store)->BeginRun(row);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Commit(row, run).ok());
  sweeps::SweepManager sweeps(nullptr, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(); });
  metrics::Counters counters;
  metrics::Exporter exporter(**store, sweeps, counters);
  auto text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("gdrbench_preflight_check_failed{cluster=\"lab\",node=\"node0\",check=\"peermem_loaded\"} 1"));
  EXPECT_THAT(*text, HasSubstr("gdrbench_preflight_failed_checks{cluster=\"lab\",node=\"node0\"} 1"));
  EXPECT_EQ(text->find("ghost"), std::string::npos);
  EXPECT_EQ(text->find("bad"), std::string::npos);
  EXPECT_EQ(text->find('\r'), std::string::npos);
  EXPECT_EQ(text->find('\x01'), std::string::npos);
  EXPECT_LT(text->size(), 8000u) << "series bounded by the run's nodes";
}

// Issue 29: a regression finding's streak is a gauge naming the finding; a finding counts as
// persistent once its streak reaches --persist-runs and a retest in its run confirmed it (the
// shaped cell marked retested, as the sweep marks it).
TEST(Metrics, AFindingsStreakNamesItAndPersistsAtTheSecondRun) {
  auto store = testing::OpenTestStore("metrics_streak");
  ASSERT_TRUE(store.ok()) << store.status();
  auto spec = [](const std::string& id, int day, bool shaped) {
    testing::FakeRunSpec s;
    s.run_id = id;
    s.started_unix_s = 1767225600 + day * 86400;
    if (shaped) {
      s.model = [](uint32_t a, uint32_t b, const std::string& n) {
        return a == 2 && b == 3 ? 150.0 : testing::DefaultModel(a, b, n);
      };
    }
    return s;
  };
  ASSERT_TRUE(history::StoreRun(**store, testing::FakeRun(spec("base", 0, false)), {}).ok());
  auto base = (*store)->FindRun("base");
  ASSERT_TRUE(base.ok() && *base);
  ASSERT_TRUE((*store)->SetBaseline("lab", (*base)->key, "test").ok());
  sweeps::SweepManager sweeps(nullptr, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(); });
  metrics::Counters counters;
  metrics::Exporter exporter(**store, sweeps, counters, /*persist_runs=*/2);
  auto retested = [](v1::Run run, bool yes) {
    for (auto& m : *run.mutable_matrices()) {
      for (auto& c : *m.mutable_cells())
        c.set_retested(yes && m.nodes(c.src()) == "node2" && m.nodes(c.dst()) == "node3");
    }
    return run;
  };
  const std::string streak =
      "gdrbench_finding_streak{cluster=\"lab\",reference=\"baseline\",kind=\"link\",subject=\"node2->node3\","
      "confirmed=\"true\"} ";
  const std::string persistent = "gdrbench_last_run_persistent_regressions{cluster=\"lab\",reference=\"baseline\"} ";
  ASSERT_TRUE(history::StoreRun(**store, retested(testing::FakeRun(spec("s1", 1, true)), true), {}).ok());
  auto text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr(streak + "1\n"));
  EXPECT_THAT(*text, HasSubstr(persistent + "0\n"));
  ASSERT_TRUE(history::StoreRun(**store, retested(testing::FakeRun(spec("s2", 2, true)), true), {}).ok());
  text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr(streak + "2\n"));
  EXPECT_THAT(*text, HasSubstr(persistent + "1\n"));
  // The third run in a row, seen once (no retest): its streak counts on, it is not persistent.
  ASSERT_TRUE(history::StoreRun(**store, retested(testing::FakeRun(spec("s3", 3, true)), false), {}).ok());
  text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("subject=\"node2->node3\",confirmed=\"false\"} 3\n"));
  EXPECT_THAT(*text, HasSubstr(persistent + "0\n"));
  ASSERT_TRUE(history::StoreRun(**store, testing::FakeRun(spec("ok", 4, false)), {}).ok());
  text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->find("gdrbench_finding_streak{"), std::string::npos) << "a healthy run has no finding";
  EXPECT_THAT(*text, HasSubstr(persistent + "0\n"));
}

// Issue 32: a node the sweep left out (its preflight FAILed) was never measured:
// it has failed cells and no bandwidth series, not a bandwidth of 0.
TEST(Metrics, ANodeNeverMeasuredHasNoBandwidthSeries) {
  auto store = testing::OpenTestStore("metrics_never_measured");
  ASSERT_TRUE(store.ok()) << store.status();
  testing::FakeRunSpec spec;
  spec.preflight_fail = {3};
  ASSERT_TRUE(history::StoreRun(**store, testing::FakeRun(spec), {}).ok());
  sweeps::SweepManager sweeps(nullptr, [](const v1::Run&) { return absl::StatusOr<v1::UploadRunResponse>(); });
  metrics::Counters counters;
  metrics::Exporter exporter(**store, sweeps, counters);
  auto text = exporter.Render();
  ASSERT_TRUE(text.ok()) << text.status();
  const std::string bw = "gdrbench_node_write_bandwidth_bytes_per_second{cluster=\"lab\",node=\"";
  EXPECT_THAT(*text, HasSubstr(bw + "node0\",rail=\"0\",direction=\"tx\"} "));
  EXPECT_THAT(*text, HasSubstr(bw + "node0\",rail=\"0\",direction=\"rx\"} "));
  EXPECT_EQ(text->find(bw + "node3\""), std::string::npos) << *text;
  EXPECT_THAT(*text, HasSubstr("gdrbench_node_failed_cells{cluster=\"lab\",node=\"node3\",rail=\"0\"} "));
  EXPECT_EQ(text->find("bytes_per_second{cluster=\"lab\",node=\"node0\",rail=\"0\",direction=\"tx\"} 0\n"),
            std::string::npos);
}

}  // namespace
}  // namespace gdrbench::server
