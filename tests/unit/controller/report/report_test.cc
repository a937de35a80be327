#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/verdicts.h"
#include "controller/report/report.h"
#include "report_fixture.h"

namespace gdrbench::controller::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Report, JsonRoundTripsThroughTheProto) {
  v1::Run run = SampleRun();
  auto json = RenderJson(run);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"run_id\": \"20261130-000000-abcd\""));
  const std::string dir = ::testing::TempDir() + "/report_json";
  auto files = WriteReports(run, dir);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 5u);
  auto back = LoadRunJson(dir + "/run.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pairs_size(), 12);
  EXPECT_EQ(back->matrices_size(), run.matrices_size());
  EXPECT_EQ(back->blame_size(), run.blame_size());
  EXPECT_FALSE(back->passed());
  std::filesystem::remove_all(dir);
}

TEST(Report, IncastTargetsAreATableInTextMarkdownAndJson) {
  v1::Run run = SampleRun();
  run.set_mode("incast");
  v1::IncastTarget* t = run.add_incast();
  t->set_node("node3");
  t->set_rail(0);
  t->set_round(2);
  t->set_size_bytes(1 << 20);
  t->set_fan_in(2);
  t->set_aggregate_gbps(40);
  t->set_expected_gbps(100);
  t->set_fraction_of_link(0.4);
  t->set_verdict("low");
  for (const char* n : {"node4", "node5"}) {
    v1::IncastSender* s = t->add_senders();
    s->set_node(n);
    s->set_status(v1::RESULT_STATUS_OK);
    s->set_bw_avg_gbps(20);
    s->set_verdict("low");
  }
  t->mutable_senders(1)->set_status(v1::RESULT_STATUS_FAILED);
  t->mutable_senders(1)->set_bw_avg_gbps(0);
  const std::string text = RenderIncastText(run);
  EXPECT_THAT(text, HasSubstr("node3"));
  EXPECT_THAT(text, HasSubstr("40%"));
  EXPECT_THAT(text, HasSubstr("node4 20* node5 FAIL"));
  EXPECT_THAT(RenderMatrixText(run), HasSubstr(text));
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("## Incast"));
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("| node3 | 0 | 2 | 1 MiB | 2 | 40 | 100 | 40% | low |"));
  auto json = RenderJson(run);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"aggregate_gbps\": 40"));
  // Runs of other modes print no incast table.
  EXPECT_EQ(RenderIncastText(SampleRun()), "");
}

// --memory host,gpu,gpu-staged: the kinds of each pair side by side, with
// the ratios, in the text and the Markdown; the JSON carries the halves.
TEST(Report, MemoryKindsAreSideBySidePerPairWithTheirRatios) {
  v1::Run run = SampleRun();
  EXPECT_EQ(RenderMemoryKindsText(run), "");
  v1::PairResult& p = *run.mutable_pairs(0);
  p.mutable_src()->set_memory("host");
  auto add_half = [&](const std::string& memory, v1::ResultStatus st, double gbps, double staged) {
    v1::PairResult* h = p.add_memory_halves();
    h->mutable_src()->set_memory(memory);
    h->set_status(st);
    h->set_reason(st == v1::RESULT_STATUS_OK ? "" : "OpenTarget on b: no GPU");
    if (st != v1::RESULT_STATUS_OK) return;
    v1::SizeResult* s = h->add_sizes();
    s->set_size_bytes(1 << 20);
    s->set_status(v1::RESULT_STATUS_OK);
    s->set_bw_avg_gbps(gbps);
    s->set_staged_bw_avg_gbps(staged);
  };
  add_half("gpu:0", v1::RESULT_STATUS_ERROR, 0, 0);
  add_half("gpu-staged:0", v1::RESULT_STATUS_OK, 95.5, 40.25);
  p.set_staged_host_ratio(0.5);
  const std::string text = RenderMemoryKindsText(run);
  EXPECT_THAT(text, HasSubstr("the matrices show the first kind"));
  EXPECT_THAT(text, HasSubstr("host"));
  EXPECT_THAT(text, HasSubstr("gpu-staged"));
  EXPECT_THAT(text, HasSubstr("ERR"));
  EXPECT_THAT(text, HasSubstr("95.5/40.2"));
  EXPECT_THAT(text, HasSubstr("0.50"));
  EXPECT_THAT(RenderMatrixText(run), HasSubstr(text));
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("## Memory kinds"));
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("| ERR | 95.5/40.2 | - | 0.50 |"));
  auto json = RenderJson(run);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"memory_halves\""));
  EXPECT_THAT(*json, HasSubstr("\"staged_bw_avg_gbps\": 40.25"));
}

// --memory host,gpu,gpu-staged in pairs.csv and junit.xml: each later kind's
// rows and test case, named by its kind; a gpu half at half host memory's
// rate (below min_gpu_host_ratio) is a "gdr" failure; a failed half an error.
TEST(Report, MemoryHalvesAreRowsAndTestCasesOfTheirOwn) {
  v1::Run run = SampleRun();
  run.mutable_policy()->set_min_gpu_host_ratio(0.8);
  v1::PairResult& p = *run.mutable_pairs(0);  // node1 -> node2, host, 94 Gb/s at 1 MiB
  v1::PairResult* gpu = p.add_memory_halves();
  gpu->mutable_src()->set_memory("gpu:0");
  gpu->mutable_dst()->set_memory("gpu:1");
  gpu->set_status(v1::RESULT_STATUS_OK);
  v1::SizeResult* s = gpu->add_sizes();
  s->set_size_bytes(1 << 20);
  s->set_status(v1::RESULT_STATUS_OK);
  s->set_bw_avg_gbps(47);
  v1::PairResult* staged = p.add_memory_halves();
  staged->mutable_src()->set_memory("gpu-staged:0");
  staged->set_status(v1::RESULT_STATUS_ERROR);
  staged->set_reason("OpenTarget on node2: no GPU");
  p.set_gpu_host_ratio(0.5);

  const std::string csv = RenderCsv(run);
  EXPECT_THAT(csv, HasSubstr(",dst_rail,staged_bw_avg_gbps,gpu_host_ratio,staged_host_ratio,superseded_by_round\n"));
  // The gpu half's row: its memory, its BW, no verdict (the matrices are host's), the pair's ratio.
  EXPECT_THAT(csv, HasSubstr(",node1,rxe0,node2,rxe1,0,gpu:0,1048576,ok,47,0,0,100,,1,,gpu:0,gpu:1,0,,0.5,,\n"));
  EXPECT_THAT(csv, HasSubstr(",gpu-staged:0,0,error,0,0,0,100,,1,OpenTarget on node2: no GPU,"));
  // The host rows keep their verdicts.
  EXPECT_THAT(csv, HasSubstr(",node1,rxe0,node2,rxe1,0,host,1048576,ok,94,98.7,0,100,pass,1,,host,host,0,,0.5,,\n"));

  const std::string xml = RenderJUnit(run);
  EXPECT_THAT(xml, HasSubstr("name=\"node1 -&gt; node2 gpu (round 0)\""));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"gdr\" message=\"gpu memory 47 Gb/s is 50% of host memory"));
  EXPECT_THAT(xml, HasSubstr("name=\"node1 -&gt; node2 gpu-staged (round 0)\""));
  EXPECT_THAT(xml, HasSubstr("<error type=\"error\" message=\"OpenTarget on node2: no GPU\""));
  // 12 links and two halves.
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"gdrbench\" tests=\"14\""));
  // Without the ratio policy the gpu half passes and says its share of host memory.
  run.mutable_policy()->set_min_gpu_host_ratio(0);
  EXPECT_THAT(RenderJUnit(run), HasSubstr("node1/rxe0 -&gt; node2/rxe1 gpu:0: 47 Gb/s best; 50% of host memory"));
}

// A cross-rail run: nodeA/nodeB, lanes 0->1 and 1->0, the 1->0 cell
// nodeB->nodeA failed.
v1::Run CrossRailRun() {
  v1::Run run;
  run.set_mode("cross-rail");
  std::vector<std::string> names = {"nodeA", "nodeB"};
  analysis::MatrixSet set(names);
  uint32_t round = 0;
  for (uint32_t r : {0u, 1u}) {
    for (uint32_t i = 0; i < 2; ++i) {
      v1::PairResult p;
      p.mutable_src()->set_node(names[i]);
      p.mutable_src()->set_nic_device(absl::StrCat("mlx5_", r));
      p.mutable_dst()->set_node(names[1 - i]);
      p.mutable_dst()->set_nic_device(absl::StrCat("mlx5_", 1 - r));
      p.set_rail(r);
      p.set_dst_rail(1 - r);
      p.set_round(round++);
      p.set_expected_gbps(100);
      if (r == 1 && i == 1) {
        p.set_status(v1::RESULT_STATUS_ERROR);
        p.set_reason("rdma_resolve_addr: no route to 10.0.0.1");
      } else {
        p.set_status(v1::RESULT_STATUS_OK);
        auto* sz = p.add_sizes();
        sz->set_size_bytes(65536);
        sz->set_bw_avg_gbps(r == 0 ? 93 : 91);
        sz->set_status(v1::RESULT_STATUS_OK);
      }
      set.Add(p);
      *run.add_pairs() = p;
    }
  }
  *run.mutable_policy() = analysis::DefaultPolicy();
  auto outcome = analysis::Judge(set, run.policy(), nullptr, {});
  analysis::FillRun(set, outcome, &run);
  return run;
}

TEST(Report, CrossRailMatricesAreLabelledByTheirLane) {
  const v1::Run run = CrossRailRun();
  ASSERT_EQ(run.matrices_size(), 2);
  const std::string text = RenderMatrixText(run);
  EXPECT_THAT(text, HasSubstr("rail 0->1, 64 KiB: BW average"));
  EXPECT_THAT(text, HasSubstr("rail 1->0, 64 KiB: BW average"));
  const std::string md = RenderMarkdown(run);
  EXPECT_THAT(md, HasSubstr("## Rail 0->1, 64 KiB (Gb/s)"));
  EXPECT_THAT(md, HasSubstr("## Rail 1->0, 64 KiB (Gb/s)"));
  EXPECT_THAT(md, HasSubstr("- nodeB -> nodeA rail 1->0: fail"));
  const std::string csv = RenderCsv(run);
  EXPECT_THAT(csv, HasSubstr(",dst_memory_used,dst_rail,staged_bw_avg_gbps,gpu_host_ratio,staged_host_ratio,superseded_by_round\n"));
  EXPECT_THAT(csv, HasSubstr(",nodeA,mlx5_0,nodeB,mlx5_1,0,"));
  // Each row's verdict is its own lane's cell, and its dst_rail field the target's rail
  // (then the empty staged BW and ratios of a single-kind run).
  EXPECT_THAT(csv, testing::ContainsRegex(",nodeB,mlx5_1,nodeA,mlx5_0,1,,0,error,[^\n]*,0,,,,\n"));
  EXPECT_THAT(csv, testing::ContainsRegex(",nodeA,mlx5_0,nodeB,mlx5_1,0,[^\n]*,pass,[^\n]*,1,,,,\n"));
  const std::string junit = RenderJUnit(run);
  EXPECT_THAT(junit, HasSubstr("classname=\"gdrbench.rail0-1\""));
  EXPECT_THAT(junit, HasSubstr("classname=\"gdrbench.rail1-0\""));
  EXPECT_THAT(junit, HasSubstr("tests=\"4\""));
  const std::string html = RenderHtml(run);
  EXPECT_THAT(html, HasSubstr("<h2>Rail 0->1: BW average"));
  EXPECT_THAT(html, HasSubstr("m-r0to1-65536"));
  EXPECT_THAT(html, HasSubstr("m-r1to0-65536"));
  EXPECT_THAT(run.summary(), HasSubstr("1 failed"));
}

// A test flagged by its link counters (analysis/link_flags.h): "!" in the
// terminal matrix, a section with both ports' counters in summary.md, the
// flag in run.json.
TEST(Report, ALinkFlaggedByItsCountersIsShownInTextMarkdownAndJson) {
  v1::Run run = SampleRun();
  v1::PairResult* flagged = nullptr;
  for (auto& p : *run.mutable_pairs()) {
    if (p.status() == v1::RESULT_STATUS_OK && p.src().node() == "node1" && p.dst().node() == "node2") flagged = &p;
  }
  ASSERT_NE(flagged, nullptr);
  v1::PortCounters* pc = flagged->mutable_dst_counters();
  pc->set_device("rxe2");
  pc->set_port(1);
  pc->set_compared(9);
  pc->set_packets(28000);
  v1::CounterChange* c = pc->add_changes();
  c->set_name("hw_counters/rcvd_seq_err");
  c->set_kind(v1::COUNTER_KIND_RETRANSMIT);
  c->set_delta(812);
  v1::CounterChange* gone = pc->add_changes();
  gone->set_name("counters/link_downed");
  gone->set_kind(v1::COUNTER_KIND_LINK);
  gone->set_note("went back from 3 to 0 (cleared or wrapped during the test): its growth is unknown");
  ASSERT_EQ(analysis::FlagLinks(analysis::DefaultPolicy(), &run), 1u);
  const std::string md = RenderMarkdown(run);
  EXPECT_THAT(md, HasSubstr("## Links flagged by their counters"));
  EXPECT_THAT(md, HasSubstr("- node1 -> node2 rail 0: the link retransmitted: rcvd_seq_err +812 on node2 rxe2"));
  EXPECT_THAT(md, HasSubstr("  - node2 rxe2 port 1: rcvd_seq_err +812; link_downed: went back from 3 to 0"));
  EXPECT_THAT(md, HasSubstr("1 test(s) flagged by link counters for retransmits, the worst node1->node2 rail 0"));
  EXPECT_THAT(RenderMatrixText(run), HasSubstr("!"));
  auto json = RenderJson(run);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"link_flag\": \"the link retransmitted"));
  EXPECT_THAT(*json, HasSubstr("\"dst_counters\""));
  EXPECT_THAT(RenderHtml(run), HasSubstr("<h2>Links flagged by their counters</h2>"));
  EXPECT_THAT(RenderJUnit(run), HasSubstr("Gb/s; pass, but the link retransmitted"));
}

TEST(Report, LoadRunJsonNamesTheProblem) {
  EXPECT_EQ(LoadRunJson("/nonexistent/run.json").status().code(), absl::StatusCode::kNotFound);
  const std::string path = ::testing::TempDir() + "/bad_run.json";
  std::ofstream(path) << "{\"pairs\": 3}";
  auto r = LoadRunJson(path);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad_run.json"));
}

TEST(Report, CsvHasARowPerPairAndSizeWithQuotedReasons) {
  std::string csv = RenderCsv(SampleRun());
  std::istringstream in(csv);
  std::string line;
  int rows = 0;
  std::getline(in, line);
  EXPECT_THAT(line, HasSubstr("src,src_nic,dst"));
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 11 * 5 + 1);  // 11 OK pairs x 5 sizes + the failed one
  EXPECT_THAT(csv, HasSubstr("\"OpenTarget on node1: agent 10.0.0.1:50051 unreachable, \"\"refused\"\" <&>\""));
  EXPECT_THAT(csv, HasSubstr(",node1,rxe0,node3,rxe2,0,host,1048576,ok,30,31.5,0,100,low,1,"));
}

// The reports say what was tested: host memory on every test means the GPU
// path (GPUDirect RDMA) was not, whatever passed.
TEST(Report, TheyNameTheMemoryUsedAndSayWhenTheGpuPathWasNotTested) {
  v1::Run run = SampleRun();
  for (auto& p : *run.mutable_pairs()) {
    for (v1::Endpoint* e : {p.mutable_src(), p.mutable_dst()}) {
      e->set_memory_kind("host");
      e->set_registration("ibv_reg_mr");
    }
  }
  const std::string md = RenderMarkdown(run);
  EXPECT_THAT(md, HasSubstr("- memory: host (ibv_reg_mr) on all 11 tests; GPU path not tested: host memory"));
  EXPECT_THAT(RenderHtml(run), HasSubstr("GPU path not tested: host memory"));
  EXPECT_THAT(RenderCsv(run), HasSubstr(",host (ibv_reg_mr),host (ibv_reg_mr),0,,,,\n"));
  for (auto& p : *run.mutable_pairs()) {
    p.mutable_dst()->set_memory_kind("gpu");
    p.mutable_dst()->set_registration("ibv_reg_dmabuf_mr");
  }
  run.mutable_params()->set_memory("gpu");
  const std::string gpu = RenderMarkdown(run);
  EXPECT_THAT(gpu, HasSubstr("memory: gpu (ibv_reg_dmabuf_mr) on all 11 tests, host (ibv_reg_mr) on all 11 tests"));
  EXPECT_THAT(gpu, Not(HasSubstr("not tested")));
  // A run kept without its pairs says what was asked.
  run.clear_pairs();
  run.mutable_params()->set_memory("host");
  EXPECT_THAT(RenderMarkdown(run), HasSubstr("memory asked: host; GPU path not tested: host memory"));
}

// The node table: the inventory's name (the key of the preflight report),
// the agent's host beside it, versions and firmware.
TEST(Report, TheNodeTableHasTheNameTheHostVersionsAndFirmware) {
  v1::Run run = SampleRun();
  run.clear_preflight();
  run.clear_nodes();
  for (const char* name : {"a", "b"}) {
    v1::PreflightReport* p = run.add_preflight();
    p->set_hostname(name);
    p->set_overall(v1::CHECK_STATUS_FAIL);
    auto* c = p->add_checks();
    c->set_id("peermem_loaded");
    c->set_status(v1::CHECK_STATUS_FAIL);
    c->set_summary("nvidia-peermem is not loaded");
    c->set_remediation("modprobe nvidia-peermem");
    v1::NodeInfo* n = run.add_nodes();
    n->set_hostname("vm");
    n->mutable_software()->set_kernel("6.1.0-28-amd64");
    n->mutable_software()->set_nvidia_driver("580.95.05");
    n->mutable_software()->set_rdma_core("44.0-2");
    n->add_nics()->set_firmware_version("28.39.1002");
  }
  const std::string md = RenderMarkdown(run);
  EXPECT_THAT(md, HasSubstr("| a | vm | 6.1.0-28-amd64 | 580.95.05 | - | 44.0-2 | 28.39.1002 | FAIL |"));
  EXPECT_THAT(md, HasSubstr("| b | vm |"));
  EXPECT_THAT(md, HasSubstr("- a: FAIL peermem_loaded: nvidia-peermem is not loaded -> fix: modprobe nvidia-peermem"));
  EXPECT_THAT(md, HasSubstr("- b: FAIL peermem_loaded"));
  EXPECT_THAT(RenderHtml(run), HasSubstr("<td>a</td><td>vm</td><td>6.1.0-28-amd64</td>"));
}

// A rail whose every test failed before its first size has a size-0 matrix:
// its title says so instead of "0 B".
TEST(Report, AMatrixWithNoSizeMeasuredSaysSoNotZeroBytes) {
  v1::Run run = SampleRun();
  for (auto& m : *run.mutable_matrices()) m.set_size_bytes(0);
  EXPECT_THAT(RenderMatrixText(run), HasSubstr("rail 0, no size measured"));
  EXPECT_THAT(RenderMarkdown(run), Not(HasSubstr("0 B")));
  EXPECT_THAT(RenderHtml(run), Not(HasSubstr("at 0 B")));
}

// An outlier retest replaces its link's first result: one test case per
// link (lab.sweep_allpairs saw tests="13" for 12 cells after a retest).
TEST(Report, JUnitCountsARetestedLinkOnce) {
  v1::Run run = SampleRun();
  v1::PairResult retest = run.pairs(0);
  retest.set_round(99);
  *run.add_pairs() = retest;
  const std::string xml = RenderJUnit(run);
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"gdrbench\" tests=\"12\""));
  EXPECT_THAT(xml, HasSubstr("(round 99)"));
}

TEST(Report, JUnitHasATestCasePerPairWithFailuresAndErrors) {
  std::string xml = RenderJUnit(SampleRun());
  EXPECT_THAT(xml, HasSubstr("tests=\"12\" failures=\"1\" errors=\"1\" skipped=\"0\""));
  EXPECT_THAT(xml, HasSubstr("name=\"node1 -&gt; node3 (round 1)\""));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"low\""));
  EXPECT_THAT(xml, HasSubstr("&quot;refused&quot; &lt;&amp;&gt;"));
  EXPECT_THAT(xml, Not(HasSubstr("<&>")));
}

// The counts of <testsuites> and <testsuite> are those of the elements they
// hold, counted here independently of the renderer: tests = <testcase>,
// failures = <failure>, errors = <error>, skipped = <skipped> (the JUnit XML
// attributes as Jenkins' junit-10.xsd and Ant's JUnitReport define them).
// With nodes left out, their failing case counts too: a gate that reads only
// the counts saw failures="0" when no agent answered.
TEST(Report, JUnitCountsEveryCaseItHoldsNodesLeftOutIncluded) {
  for (bool left_out : {false, true}) {
    v1::Run run = SampleRun();
    if (left_out) {
      run.add_excluded_nodes("gpu01: DNS: no address for gpu01");
      run.add_excluded_nodes("gpu02: DNS: no address for gpu02");
      for (auto& p : *run.mutable_pairs()) {
        if (p.status() == v1::RESULT_STATUS_OK) continue;
        p.set_status(v1::RESULT_STATUS_SKIPPED);
        p.set_reason("node left out");
      }
    }
    const std::string xml = RenderJUnit(run);
    auto count = [&](const std::string& needle) {
      size_t n = 0;
      for (size_t at = xml.find(needle); at != std::string::npos; at = xml.find(needle, at + 1)) ++n;
      return n;
    };
    const std::string want = absl::StrCat("tests=\"", count("<testcase "), "\" failures=\"", count("<failure "),
                                          "\" errors=\"", count("<error "), "\"");
    EXPECT_THAT(xml, HasSubstr("<testsuites name=\"gdrbench\" " + want + ">")) << xml;
    EXPECT_THAT(xml, HasSubstr(")\" " + want + " skipped=\"" + std::to_string(count("<skipped ")) + "\""))
        << "the testsuite's counts";
    EXPECT_GE(count("<failure "), left_out ? 2u : 1u);
  }
}

TEST(Report, MarkdownAndTextShowTheMatrixBlameAndRemedies) {
  v1::Run run = SampleRun();
  std::string md = RenderMarkdown(run);
  EXPECT_THAT(md, HasSubstr("**FAIL**"));
  EXPECT_THAT(md, HasSubstr("| link | node1->node3 |"));
  EXPECT_THAT(md, HasSubstr("| node4 | ERR | 97 | 97 | - |"));
  EXPECT_THAT(md, HasSubstr("node1: WARN peermem_persisted"));
  std::string text = RenderMatrixText(run);
  EXPECT_THAT(text, HasSubstr("rail 0, 1 MiB"));
  EXPECT_THAT(text, HasSubstr("30*"));
  EXPECT_THAT(text, HasSubstr("ERR"));
}

TEST(Report, HtmlIsSelfContainedWithHeatmapCurvesAndRemedies) {
  std::string html = RenderHtml(SampleRun());
  // The canvas heatmap: its placeholder, its data and its scripts inline.
  EXPECT_THAT(html, HasSubstr("<div class=\"gdr-heatmap\" data-blob=\"m-r0-1048576\"></div>"));
  EXPECT_THAT(html, HasSubstr("<script type=\"application/octet-stream\" id=\"m-r0-1048576\">R0RSTQ"));
  EXPECT_THAT(html, HasSubstr("GdrHeatmap.mountEmbedded();"));
  EXPECT_THAT(html, HasSubstr("<polyline"));
  EXPECT_THAT(html, HasSubstr("Failing cells"));
  EXPECT_THAT(html, HasSubstr("modules-load.d/nvidia-peermem.conf"));
  EXPECT_THAT(html, HasSubstr("&quot;refused&quot; &lt;&amp;&gt;"));
  // Self-contained: nothing fetched from elsewhere.
  EXPECT_THAT(html, Not(HasSubstr("http://www.w3.org/1999/xhtml\" src")));
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("fetch(")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"http")));
}

// Issue 15: a heatmap for every size measured, not only the verdict's.
TEST(Report, HtmlHasAHeatmapForEverySize) {
  std::string html = RenderHtml(SampleRun());
  for (uint64_t s : {4096u, 16384u, 65536u, 262144u, 1048576u}) {
    EXPECT_THAT(html, HasSubstr(absl::StrCat("data-blob=\"m-r0-", s, "\"")));
  }
  EXPECT_THAT(html, HasSubstr("Rail 0: BW average, 256 KiB"));
  // Largest first: 1 MiB (the verdict's), then 256 KiB ... 4 KiB.
  EXPECT_LT(html.find("m-r0-262144"), html.find("m-r0-4096"));
  EXPECT_LT(html.find("m-r0-1048576"), html.find("m-r0-262144"));
}

TEST(Report, HtmlNamesTheSizesTooLargeToEmbed) {
  v1::Run run = SampleRun();
  v1::BandwidthMatrix* big = run.add_matrices();
  big->set_rail(0);
  big->set_size_bytes(512);
  for (int i = 0; i < 1500; ++i) big->add_nodes("n" + std::to_string(i));
  for (uint32_t i = 0; i < 1500; ++i) {
    for (uint32_t j = 0; j < 1400; ++j) {
      v1::MatrixCell* c = big->add_cells();
      c->set_src(i);
      c->set_dst(j);
    }
  }
  std::string html = RenderHtml(run);
  EXPECT_THAT(html, Not(HasSubstr("data-blob=\"m-r0-512\"")));
  EXPECT_THAT(html, HasSubstr("rail 0 at 512 B: not drawn here (too many cells for one page)"));
  EXPECT_THAT(html, HasSubstr("data-blob=\"m-r0-4096\""));
}

}  // namespace
}  // namespace gdrbench::controller::report

namespace gdrbench::controller::report {
namespace {

TEST(Report, MarkdownAndHtmlShowTheServersRegressions) {
  v1::Run run = SampleRun();
  v1::RegressionReport* r = run.add_regressions();
  r->set_reference(v1::REGRESSION_REFERENCE_BASELINE);
  r->set_reference_run_id("base-7");
  r->set_summary("1 of 12 cells regressed against the baseline base-7: node2->node3");
  v1::Regression* g = r->add_regressions();
  g->set_kind(v1::REGRESSION_KIND_LINK);
  g->set_subject("node2->node3");
  g->set_before_gbps(380);
  g->set_after_gbps(190);
  g->set_drop_fraction(0.5);
  g->set_reason("a <b>drop</b>");
  const std::string md = RenderMarkdown(run);
  EXPECT_NE(md.find("## Regressions against the baseline (base-7)"), std::string::npos) << md;
  EXPECT_NE(md.find("| link | node2->node3 | 380 | 190 | 50.0% |"), std::string::npos) << md;
  const std::string html = RenderHtml(run);
  EXPECT_NE(html.find("<h2>Regressions against the baseline (base-7)</h2>"), std::string::npos);
  EXPECT_NE(html.find("a &lt;b&gt;drop&lt;/b&gt;"), std::string::npos);
}

}  // namespace
}  // namespace gdrbench::controller::report
