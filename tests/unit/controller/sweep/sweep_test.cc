// The sweep library against in-process fake agents: one config in, one
// v1::Run out; progress, cancellation from another thread, the journal and
// resume, outlier retests, config errors.
#include "controller/sweep/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "controller/run/testing/fake_cluster.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::sweep {
namespace {

using ::testing::HasSubstr;

SweepConfig Config(run::FakeCluster& cluster) {
  SweepConfig c;
  c.inventory.source = "test";
  for (uint32_t i = 0; i < cluster.size(); ++i) {
    c.inventory.nodes.push_back(
        {"node" + std::to_string(i), "fake" + std::to_string(i) + ":1", {}, 0, 0});
  }
  c.agents = cluster.agents();
  c.parallel = 4;
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(65536);  // what the fake reports
  return c;
}

std::string TmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid())))
      .string();
}

TEST(Sweep, RunsAWholeSweepFromOneConfig) {
  run::FakeCluster cluster(4, 2, 100);
  SweepConfig c = Config(cluster);
  std::set<Phase> phases;
  size_t started = 0, results = 0;
  SweepHooks h;
  h.on_start = [&](const SweepStart& s) {
    ++started;
    EXPECT_EQ(s.plan.schedule.tests(), 4u * 3 * 2);
    EXPECT_FALSE(s.run_id.empty());
    EXPECT_EQ(s.resumed_tests, 0u);
  };
  h.on_progress = [&](const SweepProgress& p) { phases.insert(p.phase); };
  h.on_result = [&](const v1::PairResult&) { ++results; };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->passed()) << run->summary();
  EXPECT_EQ(run->pairs_size(), 24);
  EXPECT_EQ(run->matrices_size(), 2);  // 2 rails x 1 size
  EXPECT_EQ(run->mode(), "all-pairs");
  EXPECT_EQ(run->nodes_size(), 4);
  EXPECT_EQ(run->preflight_size(), 4);
  EXPECT_EQ(run->params().memory(), "host");
  EXPECT_EQ(started, 1u);
  EXPECT_EQ(results, 24u);
  EXPECT_EQ(phases, (std::set<Phase>{Phase::kProbe, Phase::kTests, Phase::kAnalysis}));
  EXPECT_EQ(cluster.open_targets(), 0);
}

// --memory host,gpu (issue 11 item 3): every test once per kind; the matrix
// is the first kind's (host, all passing); node2's GPU path at half the host
// rate is blamed on its pairs as "gdr", not on a link or a node, and fails
// the run.
TEST(Sweep, HostAndGpuOnEveryPairBlameASlowGpuPathNotTheLink) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetMemoryFactor([](uint32_t src, uint32_t dst, const std::string& memory) {
    return memory.rfind("gpu", 0) == 0 && (src == 2 || dst == 2) ? 0.5 : 1.0;
  });
  SweepConfig c = Config(cluster);
  c.memory = "host,gpu";
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->params().memory(), "host,gpu");
  EXPECT_EQ(run->pairs_size(), 12);
  EXPECT_EQ(cluster.sweeps(), 24u);  // two kinds per test
  EXPECT_EQ(cluster.open_targets(), 0);
  size_t gdr = 0;
  for (const auto& p : run->pairs()) {
    EXPECT_EQ(p.src().memory(), "host");
    EXPECT_EQ(p.status(), v1::RESULT_STATUS_OK);
    ASSERT_EQ(p.memory_halves_size(), 1);
    EXPECT_EQ(p.memory_halves(0).src().memory(), "gpu:0");
    EXPECT_EQ(p.memory_halves(0).summary().memory_kind(), "gpu");
    const bool slow = p.src().node() == "node2" || p.dst().node() == "node2";
    EXPECT_DOUBLE_EQ(p.gpu_host_ratio(), slow ? 0.5 : 1.0);
  }
  for (const auto& b : run->blame()) {
    EXPECT_EQ(b.kind(), "gdr") << b.subject();
    EXPECT_THAT(b.subject(), HasSubstr("node2"));
    ++gdr;
  }
  EXPECT_EQ(gdr, 6u);
  for (const auto& cell : run->matrices(0).cells()) EXPECT_EQ(cell.verdict(), "pass");
  EXPECT_FALSE(run->passed());
  EXPECT_THAT(run->summary(), HasSubstr("FAIL: 12/12 cells pass; 6 pair(s) low or failing on the GPU path only"));

  cluster.SetMemoryFactor(nullptr);
  auto clean = RunSweep(c);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_TRUE(clean->passed()) << clean->summary();

  SweepConfig bad = Config(cluster);
  bad.memory = "host,vram";
  EXPECT_THAT(std::string(RunSweep(bad).status().message()), HasSubstr("or a list of them"));
}

TEST(Sweep, WithoutKeptPairsTheMatricesAreStillComplete) {
  run::FakeCluster cluster(3, 1, 100);
  SweepConfig c = Config(cluster);
  c.keep_pairs = false;
  size_t results = 0;
  SweepHooks h;
  h.on_result = [&](const v1::PairResult&) { ++results; };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pairs_size(), 0);
  EXPECT_EQ(results, 6u);
  ASSERT_EQ(run->matrices_size(), 1);
  EXPECT_EQ(run->matrices(0).cells_size(), 6);
}

// The server's case: the sweep runs on one thread, a cancel request arrives
// on another. Tests in flight finish, targets are closed, the journal has
// every finished test, and a resume finishes the rest without repeating one.
TEST(Sweep, CancelFromAnotherThreadThenResume) {
  run::FakeCluster cluster(6, 1, 100);
  SweepConfig c = Config(cluster);
  c.journal_path = TmpPath("sweep_cancel");
  run::CancelToken cancel;
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;
  SweepHooks h;
  h.cancel = &cancel;
  // The fake's tests take no time: the third result holds its worker until
  // the cancel has arrived, so the sweep is surely mid-way when it does.
  h.on_result = [&](const v1::PairResult&) {
    std::unique_lock<std::mutex> lock(mu);
    if (++finished == 3) {
      cv.notify_all();
      cv.wait(lock, [&] { return cancel.cancelled(); });
    }
  };
  absl::StatusOr<v1::Run> first = absl::UnknownError("not run");
  std::thread sweeper([&] { first = RunSweep(c, h); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return finished >= 3; });
    cancel.Cancel();
  }
  cv.notify_all();
  sweeper.join();
  ASSERT_EQ(first.status().code(), absl::StatusCode::kCancelled) << first.status();
  EXPECT_THAT(std::string(first.status().message()), HasSubstr("cancelled after"));
  EXPECT_THAT(std::string(first.status().message()), HasSubstr(c.journal_path));
  EXPECT_EQ(cluster.open_targets(), 0);
  const size_t done_first = finished;
  ASSERT_LT(done_first, 30u);  // it stopped early

  auto journal = run::ReadJournal(c.journal_path);
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_EQ(journal->pairs.size(), done_first);  // flushed: nothing finished is lost

  const uint64_t sweeps_before = cluster.sweeps();
  c.resume = true;
  size_t resumed = 0;
  SweepHooks h2;
  h2.on_start = [&](const SweepStart& s) {
    resumed = s.resumed_tests;
    EXPECT_EQ(s.run_id, journal->header.run_id());
  };
  auto second = RunSweep(c, h2);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(resumed, done_first);
  EXPECT_EQ(cluster.sweeps() - sweeps_before, 30u - done_first);
  EXPECT_EQ(second->pairs_size(), 30);
  EXPECT_EQ(second->run_id(), journal->header.run_id());
  EXPECT_TRUE(second->passed()) << second->summary();
  std::filesystem::remove(c.journal_path);
}

TEST(Sweep, AResumeOfAnotherPlanIsRefused) {
  run::FakeCluster cluster(4, 1, 100);
  SweepConfig c = Config(cluster);
  c.journal_path = TmpPath("sweep_other_plan");
  ASSERT_TRUE(RunSweep(c).ok());
  c.resume = true;
  c.params.set_iterations(7);
  auto again = RunSweep(c);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("the journal was written for plan"));
  std::filesystem::remove(c.journal_path);
}

TEST(Sweep, ATransientLowCellIsRetestedAndTheRetestCounts) {
  run::FakeCluster cluster(4, 1, 100);
  std::atomic<int> slow_left{1};
  cluster.SetBandwidth([&](uint32_t s, uint32_t d, const std::string&) {
    if (s == 1 && d == 2 && slow_left.fetch_sub(1) > 0) return 30.0;  // the first try only
    return 95.0;
  });
  SweepConfig c = Config(cluster);
  c.retries = 0;
  std::set<uint32_t> retest_passes;
  SweepHooks h;
  h.on_progress = [&](const SweepProgress& p) {
    if (p.phase == Phase::kRetest) retest_passes.insert(p.retest_pass);
  };
  auto run = RunSweep(c, h);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->passed()) << run->summary();
  EXPECT_EQ(retest_passes, std::set<uint32_t>{1});
  EXPECT_EQ(run->pairs_size(), 13);  // 12 tests and the one retest (a later round)
  EXPECT_GE(run->pairs(12).round(), 6u);

  c.retest_low = 0;  // without the retest the stall is a low cell
  slow_left = 1;
  auto plain = RunSweep(c);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->passed());
  EXPECT_THAT(plain->summary(), HasSubstr("1 low"));
}

// Issue 29, confirmation: a link that reads low again in the outlier retest is "confirmed by a
// retest"; without a retest the same blame is "seen once".
TEST(Sweep, ABlameWhoseCellsReadLowAgainIsConfirmedByTheRetest) {
  run::FakeCluster cluster(4, 1, 100);
  cluster.SetBandwidth([](uint32_t s, uint32_t d, const std::string&) { return s == 1 && d == 2 ? 30.0 : 95.0; });
  SweepConfig c = Config(cluster);
  c.retries = 0;
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->blame_size(), 1) << run->summary();
  EXPECT_EQ(run->blame(0).kind(), "link");
  EXPECT_TRUE(run->blame(0).confirmed());
  EXPECT_FALSE(run->blame(0).hard());

  c.retest_low = 0;
  auto once = RunSweep(c);
  ASSERT_TRUE(once.ok()) << once.status();
  ASSERT_EQ(once->blame_size(), 1) << once->summary();
  EXPECT_FALSE(once->blame(0).confirmed());
}

// --mode incast through the whole library: the runner accepts rounds whose
// target NIC is shared K ways, each sender is held to its fair share (port /
// K), and the run carries the per-target sums; a receiver that takes only 40
// of its 100 Gb/s is a low target and its senders low cells.
TEST(Sweep, IncastJudgesSendersByTheirShareAndReportsEachTargetsSum) {
  run::FakeCluster cluster(6, 1, 100);
  cluster.SetBandwidth([](uint32_t, uint32_t d, const std::string&) { return d == 3 ? 20.0 : 48.0; });
  SweepConfig c = Config(cluster);
  c.schedule.mode = schedule::Mode::kIncast;
  c.schedule.fan_in = 2;
  c.retest_low = 0;
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->mode(), "incast");
  ASSERT_EQ(run->pairs_size(), 12);  // 6 targets x 2 senders
  for (const auto& p : run->pairs()) EXPECT_DOUBLE_EQ(p.expected_gbps(), 50) << p.src().node();
  ASSERT_EQ(run->incast_size(), 6);
  std::set<std::string> targets;
  for (const auto& t : run->incast()) {
    targets.insert(t.node());
    EXPECT_EQ(t.fan_in(), 2u);
    ASSERT_EQ(t.senders_size(), 2);
    EXPECT_DOUBLE_EQ(t.expected_gbps(), 100);
    EXPECT_EQ(t.size_bytes(), 65536u);
    if (t.node() == "node3") {
      EXPECT_DOUBLE_EQ(t.aggregate_gbps(), 40);
      EXPECT_EQ(t.verdict(), "low");
      EXPECT_EQ(t.senders(0).node(), "node4");
      EXPECT_EQ(t.senders(0).verdict(), "low");
    } else {
      EXPECT_DOUBLE_EQ(t.aggregate_gbps(), 96);
      EXPECT_EQ(t.verdict(), "pass") << t.node();
      EXPECT_EQ(t.senders(1).verdict(), "pass") << t.node();
    }
  }
  EXPECT_EQ(targets.size(), 6u);
  EXPECT_FALSE(run->passed());
  EXPECT_THAT(run->summary(), HasSubstr("2 low"));

  c.schedule.fan_in = 6;  // as many senders as nodes: one sentence, no test run
  auto bad = RunSweep(c);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--fan-in 6: give 1 .. 5"));
}

// Cross-rail on the fake cluster: every (src, dst, rail, other rail) once,
// the target's NIC and rate its own rail's, a matrix per lane, and a low
// initiator NIC judged on its lanes only.
TEST(Sweep, CrossRailTestsEveryRailPairOnceIntoItsLanesMatrix) {
  run::FakeCluster cluster(4, 3, 100);
  cluster.EditNodeInfo(2, [](v1::NodeInfo& n) { n.mutable_nics(2)->mutable_ports(0)->set_active_rate_gbps(50); });
  // node1's rail-1 NIC sends at 20 (the fleet at 46): low in lanes 1->0 and
  // 1->2 only, fleet-relative (46 is below 90 % of the 100 Gb/s ports, so the
  // absolute check is off here).
  cluster.SetBandwidth([](uint32_t src, uint32_t, const std::string& nic) {
    return src == 1 && nic == "nic1" ? 20.0 : 46.0;
  });
  SweepConfig c = Config(cluster);
  c.schedule.mode = schedule::Mode::kCrossRail;
  c.retest_low = 0;
  c.policy.set_min_fraction_of_link(0);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->mode(), "cross-rail");
  ASSERT_EQ(run->pairs_size(), 4 * 3 * 6);
  std::set<std::tuple<std::string, std::string, uint32_t, uint32_t>> tests;
  for (const auto& p : run->pairs()) {
    ASSERT_TRUE(p.has_dst_rail()) << p.DebugString();
    EXPECT_NE(p.dst_rail(), p.rail());
    EXPECT_EQ(p.src().nic_device(), "nic" + std::to_string(p.rail()));
    EXPECT_EQ(p.dst().nic_device(), "nic" + std::to_string(p.dst_rail()));
    // The slower end: node2's rail 2 is a 50 Gb/s port, whichever end it is.
    const bool slow = (p.src().node() == "node2" && p.rail() == 2) || (p.dst().node() == "node2" && p.dst_rail() == 2);
    EXPECT_DOUBLE_EQ(p.expected_gbps(), slow ? 50 : 100) << p.ShortDebugString();
    tests.insert({p.src().node(), p.dst().node(), p.rail(), p.dst_rail()});
  }
  EXPECT_EQ(tests.size(), 72u);
  ASSERT_EQ(run->matrices_size(), 6);  // lanes (0,1) (0,2) (1,0) (1,2) (2,0) (2,1) at 64 KiB
  for (const auto& m : run->matrices()) {
    ASSERT_TRUE(m.has_dst_rail());
    EXPECT_NE(m.dst_rail(), m.rail());
    EXPECT_EQ(m.cells_size(), 12);
    for (const auto& cell : m.cells()) {
      const bool low = m.rail() == 1 && cell.src() == 1;
      EXPECT_EQ(cell.verdict(), low ? "low" : "pass") << m.rail() << "->" << m.dst_rail() << " " << cell.src();
    }
  }
  EXPECT_THAT(run->summary(), HasSubstr("6 low"));
}

TEST(Sweep, CrossRailOverOneRailIsOneSentence) {
  run::FakeCluster cluster(4, 1, 100);
  SweepConfig c = Config(cluster);
  c.schedule.mode = schedule::Mode::kCrossRail;
  auto run = RunSweep(c);
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(run.status().message()), HasSubstr("--mode cross-rail needs nodes with at least 2 rails"));
}

TEST(Estimate, IncastSendersMoveTheirDataAtTheirShareOfTheTargetPort) {
  run::FakeCluster cluster(6, 1, 100);
  SweepConfig c = Config(cluster);
  c.link_gbps = 400;
  EXPECT_DOUBLE_EQ(Estimate(c).link_gbps, 400);
  c.schedule.mode = schedule::Mode::kIncast;
  c.schedule.fan_in = 4;
  EXPECT_DOUBLE_EQ(Estimate(c).link_gbps, 100);
}

TEST(Sweep, NodesThatFailPreflightAreLeftOutAndFailTheRun) {
  run::FakeCluster cluster(3, 1, 100);
  cluster.SetPreflight(2, v1::CHECK_STATUS_FAIL);
  SweepConfig c = Config(cluster);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->passed());
  ASSERT_EQ(run->excluded_nodes_size(), 1);
  EXPECT_THAT(run->excluded_nodes(0), HasSubstr("node2: preflight FAIL"));
  c.force = true;
  auto forced = RunSweep(c);
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->passed()) << forced->summary();
}

// "8 rails at 400 Gb/s": a node whose rail trained at 200 is left out with
// the reason, its report carries the check, with or without the preflight.
TEST(Sweep, ANodeThatMissesAFleetExpectationIsLeftOutWithTheReason) {
  run::FakeCluster cluster(3, 2, 400);
  cluster.EditNodeInfo(1, [](v1::NodeInfo& n) { n.mutable_nics(1)->mutable_ports(0)->set_active_rate_gbps(200); });
  // What a port at 200 Gb/s moves: an answer above its link rate is refused
  // as impossible (AnswerBounds).
  cluster.SetBandwidth([](uint32_t src, uint32_t dst, const std::string& nic) {
    return (src == 1 || dst == 1) && nic == "nic1" ? 190.0 : 380.0;
  });
  SweepConfig c = Config(cluster);
  c.inventory.expect.rails = 2;
  c.inventory.expect.link_gbps = 400;
  c.inventory.expect.link_state = "PORT_ACTIVE";
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->passed());
  ASSERT_EQ(run->excluded_nodes_size(), 1);
  EXPECT_THAT(run->excluded_nodes(0),
              HasSubstr("node1: missed the fleet's expectations: rail 1 nic1 at 200 Gb/s, expected at least 400"));
  bool failed_check = false;
  for (const auto& chk : run->preflight(1).checks()) {
    failed_check |= chk.id() == "fleet_expectations" && chk.status() == v1::CHECK_STATUS_FAIL;
  }
  EXPECT_TRUE(failed_check);
  EXPECT_EQ(run->preflight(1).overall(), v1::CHECK_STATUS_FAIL);
  c.preflight = false;
  auto without = RunSweep(c);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->excluded_nodes_size(), 1);
  c.inventory.expect.link_gbps = 200;
  auto met = RunSweep(c);
  ASSERT_TRUE(met.ok());
  EXPECT_TRUE(met->passed()) << met->summary();
}

// Several agents on one host (one per NIC, as in the lab; or IPs in the
// inventory): each node's results are keyed by its inventory name, its
// agent's host beside it, so a cell links to its own node's findings.
TEST(Sweep, PerNodeResultsAreKeyedByTheInventoryNameWithSeveralAgentsOnOneHost) {
  run::FakeCluster cluster(3, 1, 100);
  for (uint32_t i : {0u, 1u}) cluster.EditNodeInfo(i, [](v1::NodeInfo& n) { n.set_hostname("vm"); });
  cluster.SetPreflight(0, v1::CHECK_STATUS_FAIL);
  cluster.SetPreflight(1, v1::CHECK_STATUS_FAIL);
  SweepConfig c = Config(cluster);
  auto run = RunSweep(c);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->preflight_size(), 3);
  ASSERT_EQ(run->nodes_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run->preflight(i).hostname(), "node" + std::to_string(i));  // the key
    EXPECT_EQ(run->nodes(i).hostname(), i < 2 ? "vm" : "node2");          // the agent's host
  }
  EXPECT_EQ(run->preflight(0).overall(), v1::CHECK_STATUS_FAIL);
  EXPECT_EQ(run->preflight(2).overall(), v1::CHECK_STATUS_PASS);
  ASSERT_EQ(run->excluded_nodes_size(), 2);
  EXPECT_THAT(run->excluded_nodes(0), HasSubstr("node0: preflight FAIL (fake_check)"));
  EXPECT_THAT(run->excluded_nodes(1), HasSubstr("node1: preflight FAIL (fake_check)"));
  EXPECT_THAT(run->summary(), HasSubstr("2 node(s) left out (node0, node1)"));
  EXPECT_EQ(run->blame_size(), 0) << run->blame(0).subject();  // skipped cells blame nobody
}

// Acceptance: a fake agent with another driver version is named the odd one.
TEST(FleetPreflight, TheNodeOnAnotherDriverIsNamedTheOddOneOut) {
  run::FakeCluster cluster(4, 1, 100);
  for (uint32_t i = 0; i < 4; ++i) {
    cluster.EditNodeInfo(i, [i](v1::NodeInfo& n) {
      n.mutable_software()->set_kernel("6.1.0-28-amd64");
      n.mutable_software()->set_nvidia_driver(i == 2 ? "570.133.20" : "580.95.05");
    });
  }
  SweepConfig c = Config(cluster);
  auto f = RunFleetPreflight(c);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->answering, 4u);
  ASSERT_EQ(f->probe.preflight.size(), 4u);
  EXPECT_EQ(cluster.sweeps(), 0u);  // no test ran
  const analysis::VersionSpread* driver = nullptr;
  const analysis::VersionSpread* kernel = nullptr;
  for (const auto& s : f->uniformity) {
    if (s.component == "NVIDIA driver") driver = &s;
    if (s.component == "kernel") kernel = &s;
  }
  ASSERT_NE(driver, nullptr);
  EXPECT_THAT(driver->odd_nodes, testing::ElementsAre("node2"));
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->uniform());
  EXPECT_THAT(analysis::FormatUniformity(f->uniformity, f->answering),
              HasSubstr("580.95.05 on 3 nodes; 570.133.20 on node2: odd one(s) out: node2"));
}

v1::Run LoadRun(const std::string& name) {
  std::ifstream in(std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/runs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  v1::Run run;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ss.str(), &run).ok()) << name;  // every field known
  return run;
}

double Seconds(const google::protobuf::Timestamp& t) { return t.seconds() + t.nanos() / 1e9; }

// --dry-run's estimate: a per-test set-up cost plus wire time. From a real
// run's own measured costs (the demo in the lab, and lab.slurm's run) the
// estimate of the same plan lands within 2x of how long that run took; the
// wire-time-only estimate it replaced said "0:01" for runs of minutes.
TEST(Estimate, FromAnEarlierRunsCostsIsWithinTwiceOfItsRealDuration) {
  struct Case {
    const char* file;
    std::vector<uint64_t> sizes;
    uint64_t iterations, warmup;
  };
  for (const Case& k : {Case{"lab-demo-4node.json", {4096, 65536, 1048576}, 60, 5},
                        Case{"slurm-lab-node4.json", {65536}, 60, 10}}) {
    const v1::Run last = LoadRun(k.file);
    auto cost = MeasureCost(last);
    ASSERT_TRUE(cost.ok()) << cost.status();
    EXPECT_GE(cost->tests, 12u) << k.file;
    SweepConfig c;
    c.inventory.source = k.file;
    for (int i = 1; i <= 4; ++i) {
      c.inventory.nodes.push_back({"node" + std::to_string(i), "10.0.0." + std::to_string(i) + ":7070",
                                   {{"rxe" + std::to_string(i), std::nullopt}}, 10.3125, 0});
    }
    c.params.clear_sizes_bytes();
    for (uint64_t s : k.sizes) c.params.add_sizes_bytes(s);
    c.params.set_iterations(k.iterations);
    c.params.set_warmup_iterations(k.warmup);
    c.schedule.max_concurrent = 1;  // as both runs
    auto plan = PlanWithoutAgents(c);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const double real = Seconds(last.finished_at()) - Seconds(last.started_at());
    const double wire_only = schedule::EstimateScheduleSeconds(plan->schedule, Estimate(c));
    c.measured = *cost;
    const double estimate = schedule::EstimateScheduleSeconds(plan->schedule, Estimate(c));
    EXPECT_GT(estimate, real / 2) << k.file << ": real " << real << " s";
    EXPECT_LT(estimate, real * 2) << k.file << ": real " << real << " s";
    EXPECT_LT(wire_only, real / 10) << k.file;
  }
  EXPECT_EQ(MeasureCost(v1::Run()).status().code(), absl::StatusCode::kNotFound);
}

TEST(Sweep, ConfigErrorsAreInvalidArgumentBeforeAnyAgentIsCalled) {
  run::FakeCluster cluster(3, 1, 100);
  SweepConfig one = Config(cluster);
  one.inventory.nodes.resize(1);
  one.agents.resize(1);
  EXPECT_THAT(std::string(RunSweep(one).status().message()), HasSubstr("at least 2 nodes"));
  SweepConfig memory = Config(cluster);
  memory.memory = "vram";
  EXPECT_EQ(RunSweep(memory).status().code(), absl::StatusCode::kInvalidArgument);
  SweepConfig agents = Config(cluster);
  agents.agents.pop_back();
  EXPECT_EQ(RunSweep(agents).status().code(), absl::StatusCode::kInvalidArgument);
  SweepConfig sizes = Config(cluster);
  sizes.params.clear_sizes_bytes();
  EXPECT_EQ(RunSweep(sizes).status().code(), absl::StatusCode::kInvalidArgument);
  SweepConfig policy = Config(cluster);
  policy.policy.set_min_fraction_of_link(1.5);
  EXPECT_EQ(RunSweep(policy).status().code(), absl::StatusCode::kInvalidArgument);
  SweepConfig baseline = Config(cluster);
  baseline.baseline = std::make_shared<const v1::Run>();
  EXPECT_THAT(std::string(RunSweep(baseline).status().message()), HasSubstr("baseline"));
  EXPECT_EQ(cluster.rpcs(), 0u);
}

TEST(Sweep, AJournalThatCannotBeWrittenStopsTheSweepNamingThePath) {
  run::FakeCluster cluster(3, 1, 100);
  SweepConfig c = Config(cluster);
  c.journal_path = "/nonexistent-dir/journal.bin";
  auto run = RunSweep(c);
  EXPECT_FALSE(run.ok());
  EXPECT_THAT(std::string(run.status().message()), HasSubstr("/nonexistent-dir/journal.bin"));
  EXPECT_EQ(cluster.sweeps(), 0u);
}

TEST(Sweep, ADryRunPlanContactsNoAgent) {
  run::FakeCluster cluster(5, 1, 100);
  SweepConfig c = Config(cluster);
  c.agents.clear();
  auto plan = PlanWithoutAgents(c);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->schedule.tests(), 5u * 4);
  EXPECT_EQ(plan->nodes[0].rails.size(), 1u);
  EXPECT_EQ(Estimate(c).sizes_bytes, std::vector<uint64_t>{65536});
  EXPECT_EQ(cluster.rpcs(), 0u);
}

}  // namespace
}  // namespace gdrbench::controller::sweep
