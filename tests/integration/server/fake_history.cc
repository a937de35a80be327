// gdrbench-fake-history: a cluster's history of runs for the dashboard's
// browser tests and its benchmark, made by the controller itself: each run is
// a sweep of controller/run's FakeCluster through the real runner, matrices,
// verdicts and blame (tests/unit/server/testing/fake_run.h), labelled with leaf
// switches the way a rail-optimised fabric is cabled (NVIDIA's DGX SuperPOD
// reference architecture: rail r of every node of a scalable unit goes to
// that unit's leaf r; the leaves of a rail share that rail's spine plane),
// and stored in gdrbench-server the way `gdrbench sweep --server` does
// (UploadRun), or straight into a store file with the server's own ingester
// (for runs too big to send in a test's time).
//
//   gdrbench-fake-history (--server HOST:PORT [--insecure] [--token-file F] | --db PATH)
//       [--cluster fab] [--nodes 8] [--rails 2] [--runs 30] [--days 30] [--end-unix S]
//       [--nodes-per-leaf 4] [--degrade SRC,DST,RAIL,FROM,TO] [--preflight-fail N,...]
//       [--sizes 65536,1048576] [--baseline-first] [--run-prefix fab] [--report-html FILE]
// --degrade: the link between nodes SRC and DST (both directions) on RAIL
// delivers FROM x the link rate in the first run and TO x in the last,
// linearly: a slowly degrading cable. Prints one line per stored run.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "controller/report/report.h"
#include "controller/server_client/server_client.h"
#include "server/history/export.h"
#include "server/store/store.h"
#include "tests/unit/server/testing/fake_run.h"

namespace {

namespace v1 = gdrbench::v1;

struct Degrade {
  uint32_t src = 0, dst = 0, rail = 0;
  double from = 1, to = 1;
  bool on = false;
};

bool ParseDegrade(const std::string& s, Degrade* d) {
  std::vector<std::string> f = absl::StrSplit(s, ',');
  if (f.size() != 5) return false;
  d->on = absl::SimpleAtoi(f[0], &d->src) && absl::SimpleAtoi(f[1], &d->dst) && absl::SimpleAtoi(f[2], &d->rail) &&
          absl::SimpleAtod(f[3], &d->from) && absl::SimpleAtod(f[4], &d->to);
  return d->on;
}

// Leaf "su<unit>-leaf<rail>" for node i of unit i / per_leaf; spine group "plane<rail>".
void Label(v1::Run* run, uint32_t nodes, uint32_t rails, uint32_t per_leaf) {
  if (per_leaf == 0) return;
  for (uint32_t i = 0; i < nodes; ++i) {
    v1::NodeTopology* t = run->add_topology();
    t->set_node("node" + std::to_string(i));
    for (uint32_t r = 0; r < rails; ++r) {
      v1::RailTopology* rt = t->add_rails();
      rt->set_rail(r);
      rt->set_leaf(absl::StrCat("su", i / per_leaf + 1, "-leaf", r));
      rt->set_spine_group(absl::StrCat("plane", r));
    }
  }
}

int Die(const absl::Status& st, const char* what) {
  std::fprintf(stderr, "gdrbench-fake-history: %s: %s\n", what, std::string(st.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench-fake-history: a cluster's history of fake-cluster runs, stored in gdrbench-server"};
  std::string server, token_file, db, cluster = "fab", degrade_spec, prefix, reports, fail_spec;
  std::string sizes_spec = "65536,1048576";
  bool insecure = false, baseline_first = false;
  uint32_t nodes = 8, rails = 2, runs = 30, days = 30, per_leaf = 4;
  int64_t end_unix = 0;
  app.add_option("--server", server, "gdrbench-server gRPC HOST:PORT");
  app.add_flag("--insecure", insecure, "plaintext gRPC");
  app.add_option("--token-file", token_file, "a write token");
  app.add_option("--db", db, "store straight into this store (SQLite path or postgresql://)");
  app.add_option("--cluster", cluster);
  app.add_option("--nodes", nodes)->check(CLI::Range(2u, 4096u));
  app.add_option("--rails", rails)->check(CLI::Range(1u, 64u));
  app.add_option("--runs", runs)->check(CLI::Range(1u, 10000u));
  app.add_option("--days", days, "the runs are spread evenly over the last DAYS days")->check(CLI::Range(1u, 3650u));
  app.add_option("--end-unix", end_unix, "the last run's start (default: now - 1 h)");
  app.add_option("--nodes-per-leaf", per_leaf, "leaf labels (0: none)");
  app.add_option("--degrade", degrade_spec, "SRC,DST,RAIL,FROM,TO: a link degrading over the runs");
  app.add_option("--preflight-fail", fail_spec, "node indices whose preflight FAILs in every run");
  app.add_option("--sizes", sizes_spec, "message sizes in bytes");
  app.add_flag("--baseline-first", baseline_first, "make the first run the cluster's baseline");
  app.add_option("--run-prefix", prefix, "run ids PREFIX-NNN (default: the cluster)");
  app.add_option("--report-html", reports, "write the last run's report.html (the sweep's own HTML report) here");
  uint32_t live_tests = 0;
  app.add_option(
      "--live-tests", live_tests,
      "then one more run, PREFIX-live, left in progress on the server (a live run, issue 30) with its "
      "first N tests");
  CLI11_PARSE(app, argc, argv);
  if (server.empty() == db.empty()) {
    std::fprintf(stderr, "gdrbench-fake-history: give --server or --db\n");
    return 2;
  }
  Degrade deg;
  if (!degrade_spec.empty() && !ParseDegrade(degrade_spec, &deg)) {
    std::fprintf(stderr, "gdrbench-fake-history: --degrade '%s' is not SRC,DST,RAIL,FROM,TO\n", degrade_spec.c_str());
    return 2;
  }
  std::vector<uint64_t> sizes;
  for (absl::string_view s : absl::StrSplit(sizes_spec, ',')) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi(s, &v) || v == 0) {
      std::fprintf(stderr, "gdrbench-fake-history: --sizes '%s' is not a list of byte counts\n", sizes_spec.c_str());
      return 2;
    }
    sizes.push_back(v);
  }
  std::vector<uint32_t> fails;
  for (absl::string_view s : absl::StrSplit(fail_spec, ',', absl::SkipEmpty())) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(s, &v) || v >= nodes) {
      std::fprintf(stderr, "gdrbench-fake-history: --preflight-fail '%s' is not a list of node indices\n", fail_spec.c_str());
      return 2;
    }
    fails.push_back(v);
  }
  if (prefix.empty()) prefix = cluster;
  if (end_unix == 0) end_unix = std::time(nullptr) - 3600;

  std::unique_ptr<gdrbench::controller::ServerClient> client;
  std::unique_ptr<gdrbench::server::store::Store> store;
  if (!server.empty()) {
    gdrbench::controller::ServerClientConfig cc;
    cc.address = server;
    cc.tls.insecure = insecure;
    cc.token_file = token_file;
    cc.timeout_ms = 600000;
    auto c = gdrbench::controller::ServerClient::Create(cc);
    if (!c.ok()) return Die(c.status(), "server");
    client = std::move(*c);
  } else {
    auto s = gdrbench::server::store::Store::Open(db);
    if (!s.ok()) return Die(s.status(), "store");
    store = std::move(*s);
  }
  const int64_t step = runs > 1 ? int64_t{days} * 86400 / runs : 0;
  for (uint32_t k = 0; k < runs; ++k) {
    gdrbench::server::testing::FakeRunSpec spec;
    spec.nodes = nodes;
    spec.rails = rails;
    spec.sizes = sizes;
    spec.cluster = cluster;
    spec.run_id = absl::StrCat(prefix, "-", absl::Dec(k + 1, absl::kZeroPad3));
    spec.started_unix_s = end_unix - step * (runs - 1 - k);
    spec.keep_pairs = nodes <= 64;
    spec.preflight_fail = fails;
    const double frac = runs > 1 ? deg.from + (deg.to - deg.from) * k / (runs - 1) : deg.to;
    const double link = spec.link_gbps;
    spec.model = [deg, frac, link](uint32_t s, uint32_t d, const std::string& nic) {
      if (deg.on && nic == "nic" + std::to_string(deg.rail) &&
          ((s == deg.src && d == deg.dst) || (s == deg.dst && d == deg.src))) {
        return frac * link;
      }
      return gdrbench::server::testing::DefaultModel(s, d, nic);
    };
    v1::Run run = gdrbench::server::testing::FakeRun(spec);
    Label(&run, nodes, rails, per_leaf);
    absl::StatusOr<v1::UploadRunResponse> r =
        client ? client->Upload(run) : gdrbench::server::history::StoreRun(*store, run, {});
    if (!r.ok()) return Die(r.status(), "store the run");
    // One line per run (the summary's lines joined).
    std::printf("%s %s cells=%llu %s\n", run.run_id().c_str(), run.passed() ? "PASS" : "FAIL",
                static_cast<unsigned long long>(r->cells()), absl::StrReplaceAll(run.summary(), {{"\n", " | "}}).c_str());
    if (k == 0 && baseline_first && client) {
      v1::SetBaselineRequest req;
      req.set_run_id(run.run_id());
      if (auto b = client->SetBaseline(req); !b.ok()) return Die(b.status(), "baseline");
    } else if (k == 0 && baseline_first) {
      auto row = store->FindRun(run.run_id());
      if (!row.ok() || !*row) return Die(row.ok() ? absl::NotFoundError(run.run_id()) : row.status(), "baseline");
      if (auto b = store->SetBaseline(cluster, (*row)->key, "fake-history"); !b.ok()) return Die(b, "baseline");
    }
    if (k + 1 == runs && !reports.empty()) {
      std::ofstream out(reports, std::ios::binary | std::ios::trunc);
      out << gdrbench::controller::report::RenderHtml(run);
      if (!out.flush()) return Die(absl::InternalError(absl::StrCat("cannot write ", reports)), "report.html");
    }
  }
  if (live_tests > 0 && client) {
    // A sweep still running: its first tests streamed as `gdrbench sweep
    // --server` sends them (controller/server_client/live_upload.h).
    gdrbench::server::testing::FakeRunSpec spec;
    spec.nodes = nodes;
    spec.rails = rails;
    spec.sizes = sizes;
    spec.cluster = cluster;
    spec.run_id = prefix + "-live";
    v1::Run run = gdrbench::server::testing::FakeRun(spec);
    v1::OpenLiveRunRequest open;
    open.set_run_id(spec.run_id);
    v1::LivePlan* plan = open.mutable_plan();
    plan->set_cluster(cluster);
    plan->set_mode("all-pairs");
    for (uint32_t i = 0; i < nodes; ++i) plan->add_nodes("node" + std::to_string(i));
    plan->set_rails(rails);
    for (uint64_t b : sizes) plan->add_sizes_bytes(b);
    plan->set_tests_planned(static_cast<uint64_t>(run.pairs_size()));
    if (auto r = client->OpenLiveRun(open); !r.ok()) return Die(r.status(), "open the live run");
    v1::LiveChunk chunk;
    chunk.set_run_id(spec.run_id);
    for (int i = 0; i < run.pairs_size() && static_cast<uint32_t>(i) < live_tests; ++i) {
      const v1::PairResult& p = run.pairs(i);
      v1::LiveTest* t = chunk.add_tests();
      t->set_src(static_cast<uint32_t>(std::stoul(p.src().node().substr(4))));
      t->set_dst(static_cast<uint32_t>(std::stoul(p.dst().node().substr(4))));
      t->set_rail(p.rail());
      t->set_round(p.round());
      t->set_status(p.status());
      for (const auto& sz : p.sizes()) {
        v1::LiveCell* c = t->add_cells();
        c->set_size_bytes(sz.size_bytes());
        c->set_status(sz.status());
        c->set_bw_avg_gbps(sz.bw_avg_gbps());
      }
    }
    auto ack = client->AppendLiveRun(chunk);
    if (!ack.ok()) return Die(ack.status(), "append to the live run");
    std::printf("%s live tests=%llu\n", spec.run_id.c_str(),
                static_cast<unsigned long long>(ack->next_test()));
  }
  return 0;
}
