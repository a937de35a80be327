// gdrbench-server's store at scale, on the backend --db names (SQLite file
// or postgresql://...): what storing a run costs and what the history
// queries cost. Figures, not a timed test; bench/server_store.sh runs it on
// SQLite and PostgreSQL in one go and prints the ratios.
//
//   1. ingest: a --nodes x --rails run of controller/run's fake cluster (the
//      controller's own sweep, matrices, verdicts), stored through the same
//      Ingester the API uses: header, cells and pairs in chunks (pair chunks
//      serialized, as an upload delivers them). Only the time inside the
//      ingester counts (the sweep that makes the run does not).
//   2. history: --trend-runs small runs of one cluster (--trend-nodes x 1
//      rail), then a link's trend over all of them, a node's trend, and the
//      first page of the run list, each the median of 15 tries.
//
//   gdrbench-server-bench --db PATH|URL [--nodes 1024] [--rails 8]
//                         [--mode all-pairs|quick|ring] [--quick-rounds 3]
//                         [--trend-runs 365] [--trend-nodes 16]
// --mode: the big run's plan (bench/scaling.sh runs quick or ring where
// all-pairs does not fit); the store is kept, so the dashboard can open it.
// Prints one JSON object.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "report/run_chunks.h"
#include "server/history/export.h"
#include "server/history/ingest.h"
#include "server/store/store.h"
#include "spdlog/spdlog.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gs = gdrbench::server;
namespace v1 = gdrbench::v1;
using Clock = std::chrono::steady_clock;

namespace {

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long MaxRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

template <typename F>
double MedianMs(F fn) {
  std::vector<double> v;
  for (int i = 0; i < 15; ++i) {
    auto t = Clock::now();
    fn();
    v.push_back(1000 * Since(t));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Die(const absl::Status& st, const char* what) {
  if (st.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, std::string(st.message()).c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench-server store bench"};
  std::string db;
  uint32_t nodes = 1024, rails = 8, trend_runs = 365, trend_nodes = 16;
  uint32_t quick_rounds = gdrbench::sweep_limits::kDefaultQuickRounds;
  std::string mode_name = "all-pairs";
  app.add_option("--db", db)->required();
  app.add_option("--mode", mode_name, "the big run's plan")
      ->check(CLI::IsMember({"all-pairs", "quick", "ring"}));
  app.add_option("--quick-rounds", quick_rounds, "--mode quick: random perfect matchings")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--nodes", nodes)->check(CLI::Range(2u, 4096u));
  app.add_option("--rails", rails)->check(CLI::Range(1u, 64u));
  app.add_option("--trend-runs", trend_runs)->check(CLI::Range(2u, 10000u));
  app.add_option("--trend-nodes", trend_nodes)->check(CLI::Range(2u, 1024u));
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);  // stdout is the JSON

  auto store = gs::store::Store::Open(db);
  Die(store.status(), "open");
  gs::history::IngestOptions io;

  // 1. The big run: matrices first (the header needs the verdicts), then the
  // same deterministic sweep again, its pairs streamed into the ingester.
  gs::testing::FakeRunSpec spec;
  spec.nodes = nodes;
  spec.rails = rails;
  spec.sizes = {1 << 20};
  spec.run_id = "big-1";
  spec.cluster = "big";
  spec.keep_pairs = false;
  spec.mode = *gdrbench::controller::schedule::ParseMode(mode_name);  // one of the three above
  spec.quick_rounds = quick_rounds;
  spec.model = [nodes](uint32_t s, uint32_t d, const std::string& nic) {
    if (s == 1 && d == 2) return 120.0;
    if ((s == nodes - 1 || d == nodes - 1) && nic == "nic3") return 200.0;
    return gs::testing::DefaultModel(s, d, nic);
  };
  auto t0 = Clock::now();
  v1::Run run = gs::testing::FakeRun(spec);
  const double sweep_s = Since(t0);
  uint64_t cells = 0;
  for (const auto& m : run.matrices()) cells += m.cells_size();

  // Where the ingest's time goes: the header (references looked up), the
  // cells, the pair chunks, and Finish (node stats, regressions, commit).
  double ingest_s = 0, header_s = 0, cells_s = 0, pairs_s = 0, finish_s = 0;
  auto timed_in = [&](double* part, auto fn) {
    auto t = Clock::now();
    absl::Status st = fn();
    const double s = Since(t);
    ingest_s += s;
    *part += s;
    return st;
  };
  auto timed = [&](auto fn) { return timed_in(&cells_s, fn); };
  gs::history::Ingester ingest(**store, io);
  Die(timed_in(&header_s, [&] { return ingest.Begin(gdrbench::report::RunHeader(run)); }), "header");
  for (const auto& m : run.matrices()) {
    for (int i = 0; i < m.cells_size(); i += 16384) {
      v1::RunChunk c;
      c.mutable_cells()->set_rail(m.rail());
      c.mutable_cells()->set_size_bytes(m.size_bytes());
      for (int k = i; k < std::min(m.cells_size(), i + 16384); ++k) *c.mutable_cells()->add_cells() = m.cells(k);
      Die(timed([&] { return ingest.Add(c); }), "cells");
    }
  }
  run.clear_matrices();
  v1::RunChunk pc;
  uint64_t pairs = 0, pair_bytes = 0;
  // A pair chunk reaches the ingest as the upload sent it, serialized
  // (Ingester::AddSerializedPairs): serializing it is the client's work, not timed.
  std::string serialized;
  auto flush = [&] {
    pair_bytes += pc.ByteSizeLong();
    pc.pairs().SerializeToString(&serialized);
    Die(timed_in(&pairs_s, [&] { return ingest.AddSerializedPairs(serialized); }), "pairs");
    pc.Clear();
  };
  gs::testing::FakeRunStreaming(spec, [&](const v1::PairResult& p) {
    *pc.mutable_pairs()->add_pairs() = p;
    ++pairs;
    if (pc.pairs().pairs_size() == 1024) flush();
  });
  if (pc.pairs().pairs_size() > 0) flush();
  absl::StatusOr<v1::UploadRunResponse> resp;
  Die(timed_in(&finish_s, [&] {
        resp = ingest.Finish();
        return resp.status();
      }),
      "finish");
  std::string regressions = resp->regressions(1).summary();

  // 2. History: many small runs of one cluster.
  auto t1 = Clock::now();
  for (uint32_t i = 0; i < trend_runs; ++i) {
    gs::testing::FakeRunSpec s;
    s.nodes = trend_nodes;
    s.rails = 1;
    s.sizes = {1 << 20};
    s.run_id = "night-" + std::to_string(i);
    s.cluster = "nightly";
    s.started_unix_s = 1767225600 + int64_t{i} * 86400;
    Die(gs::history::StoreRun(**store, gs::testing::FakeRun(s), io).status(), "trend run");
  }
  const double history_fill_s = Since(t1);
  auto src = (*store)->NodeId("node1");
  auto dst = (*store)->NodeId("node2");
  size_t points = 0, node_points = 0, listed = 0;
  const double link_ms = MedianMs([&] {
    auto t = (*store)->LinkTrend("nightly", *src, *dst, 0, 0, 0, trend_runs);
    Die(t.status(), "link trend");
    points = t->size();
  });
  const double link_sized_ms = MedianMs([&] {
    auto t = (*store)->LinkTrend("nightly", *src, *dst, 0, 1 << 20, 0, trend_runs);
    Die(t.status(), "link trend");
  });
  const double node_ms = MedianMs([&] {
    auto t = (*store)->NodeTrend("nightly", *src, 0u, 0, trend_runs);
    Die(t.status(), "node trend");
    node_points = t->size();
  });
  const double list_ms = MedianMs([&] {
    gs::store::RunFilter f;
    f.limit = 50;
    auto r = (*store)->ListRuns(f);
    Die(r.status(), "list");
    listed = r->size();
  });
  const double list_cluster_ms = MedianMs([&] {
    gs::store::RunFilter f;
    f.cluster = "nightly";
    f.limit = 50;
    Die((*store)->ListRuns(f).status(), "list");
  });
  // A link of the big run, across its one run, and one node's cells there.
  auto big = (*store)->FindRun("big-1");
  // One node's cells in it, as source (`field` = &CellQuery::src) or as
  // destination (every source's cells of each matrix: &CellQuery::dst).
  auto node_cells_ms = [&](int64_t gs::store::CellQuery::*field, size_t* count) {
    return MedianMs([&] {
      gs::store::CellQuery q;
      q.run = (*big)->key;
      q.*field = *src;
      *count = 0;
      Die((*store)->ReadCells(q,
                              [&](const gs::store::CellRecord&) {
                                ++*count;
                                return absl::OkStatus();
                              }),
          "node cells");
    });
  };
  size_t node_cells = 0, node_in_cells = 0;
  const double big_node_ms = node_cells_ms(&gs::store::CellQuery::src, &node_cells);
  const double big_node_dst_ms = node_cells_ms(&gs::store::CellQuery::dst, &node_in_cells);
  std::printf(
      "{\"backend\":\"%s\",\"mode\":\"%s\",\"nodes\":%u,\"rails\":%u,\"cells\":%llu,\"pairs\":%llu,\"pair_"
      "bytes\":%llu,\n"
      " \"sweep_to_make_the_run_s\":%.2f,\"ingest_s\":%.4f,\"ingest_cells_per_s\":%.0f,\"max_rss_mb\":%ld,\n"
      " \"ingest_header_s\":%.2f,\"ingest_cells_s\":%.2f,\"ingest_pairs_s\":%.2f,\"ingest_finish_s\":%.2f,\n"
      " \"regressions_last_pass\":\"%s\",\n"
      " \"trend_runs\":%u,\"trend_nodes\":%u,\"history_fill_s\":%.2f,\n"
      " \"link_trend_ms\":%.3f,\"link_trend_points\":%zu,\"link_trend_sized_ms\":%.3f,\n"
      " \"node_trend_ms\":%.3f,\"node_trend_points\":%zu,\"list_runs_ms\":%.3f,\"list_runs_cluster_ms\":%.3f,"
      "\"listed\":%zu,\n \"big_run_node_as_src_cells_ms\":%.3f,\"big_run_node_cells\":%zu,"
      "\"big_run_node_as_dst_cells_ms\":%.3f,\"big_run_node_dst_cells\":%zu}\n",
      (*store)->name().c_str(), mode_name.c_str(), nodes, rails, static_cast<unsigned long long>(cells),
      static_cast<unsigned long long>(pairs), static_cast<unsigned long long>(pair_bytes), sweep_s, ingest_s,
      cells / ingest_s, MaxRssMb(), header_s, cells_s, pairs_s, finish_s, regressions.c_str(), trend_runs,
      trend_nodes, history_fill_s, link_ms, points, link_sized_ms, node_ms, node_points, list_ms,
      list_cluster_ms, listed, big_node_ms, node_cells, big_node_dst_ms, node_in_cells);
  return 0;
}
