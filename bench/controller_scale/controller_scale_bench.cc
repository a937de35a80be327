// The controller against N in-process fake agents with R rails each:
// discovery + preflight fan-out, scheduling, running every pair test (the
// fakes take zero time, so what is measured is the controller's own cost per
// test: request building, the four agent calls, result bookkeeping, the
// journal write(2) and the matrix update) and analysis (verdicts, blame).
//
//   gdrbench-controller-bench [--nodes 1024] [--rails 8] [--bidirectional]
//                             [--mode all-pairs|quick|ring] [--quick-rounds 3]
//                             [--journal /tmp/j.bin | --no-journal] [--parallel 2]
//                             [--read-back] [--keep-journal] [--read-only]
//                             [--sweep-library [--keep-pairs] [--streamed
//                              [--run-json PATH] [--upload-chunks]]]
// Prints one JSON object. --read-back: the journal is then read as a resume
// without kept pairs reads it (StreamJournal's on_measured: each record's
// indices, round and rates into fresh matrices and the finished tests'
// keys, no PairResult built, nothing else held), timed
// apart from the run. --read-only: no run; the --journal a run left
// (--keep-journal) is read back alone, so the process's peak RSS
// (max_rss_mb; /usr/bin/time -v) is the read-back's own. --sweep-library:
// the whole workflow as `gdrbench sweep` runs it (sweep::RunSweep: preflight,
// plan, journal, tests, retests, verdicts, the v1::Run), --keep-pairs as the
// CLI keeps them (SweepConfig::keep_pairs), printing its time and peak RSS.
// --streamed: sweep::RunSweepStreamed, as `gdrbench sweep` runs it (the run
// held as its header, compact matrices and journal); --run-json PATH then
// writes run.json as the CLI does (StreamedRun::WriteJson: cells chunk by
// chunk, pairs read back from the journal) and --upload-chunks makes every
// chunk an upload to gdrbench-server sends (serialized, not sent), each
// timed with the peak RSS after it.
// --mode: the runner's plan (all-pairs by default; bench/scaling.sh runs
// quick or ring where an all-pairs journal would not fit); not with
// --sweep-library.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "CLI/CLI.hpp"
#include "controller/analysis/verdicts.h"
#include "controller/run/journal.h"
#include "controller/run/probe.h"
#include "controller/run/runner.h"
#include "controller/run/testing/fake_cluster.h"
#include "controller/sweep/sweep.h"

namespace run = gdrbench::controller::run;
namespace analysis = gdrbench::controller::analysis;
namespace v1 = gdrbench::v1;

namespace {

constexpr uint64_t kSizeBytes = 1 << 20;

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long MaxRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// What a resume's read of the journal did.
struct ReadBack {
  double s = 0, cpu_s = 0;
  uint64_t tests = 0, journal_bytes = 0;
  size_t done_keys = 0;
  bool torn_tail = false;
};

// Reads `path` as the sweep library's resume does (controller/sweep: every
// finished test into the matrices and the keys of the tests not to run
// again; nothing else kept).
absl::StatusOr<ReadBack> ReadJournalBack(const std::string& path) {
  ReadBack out;
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  std::unique_ptr<analysis::MatrixSet> matrices;
  run::DoneTests done;
  run::JournalVisitor v;
  v.on_start = [&](const run::JournalSummary& s) {
    std::vector<std::string> names;
    uint32_t rails = 1;
    for (const auto& n : s.plan.nodes()) {
      names.push_back(n.name());
      rails = std::max(rails, static_cast<uint32_t>(n.rails_size()));
    }
    matrices = std::make_unique<analysis::MatrixSet>(std::move(names), s.header.params().bidirectional());
    done = run::DoneTests(static_cast<uint32_t>(s.plan.nodes_size()), rails);
    done.Reserve(s.header.tests());
    return absl::OkStatus();
  };
  v.on_measured = [&](const run::FinishedTest& t) {
    matrices->Add(t.measured, t.src, t.dst);
    return done.Add(t.round, t.src, t.dst, t.measured.rail, t.measured.dst_rail);
  };
  auto summary = run::StreamJournal(path, v);
  if (!summary.ok()) return summary.status();
  done.Seal();
  out.s = Since(t0);
  out.cpu_s = CpuSeconds() - cpu0;
  out.tests = summary->tests;
  out.torn_tail = summary->torn_tail;
  out.done_keys = done.size();
  out.journal_bytes = std::filesystem::file_size(path);
  return out;
}

// The sweep library over the fake cluster (--sweep-library).
struct StreamedOptions {
  bool on = false;
  std::string run_json;
  bool upload_chunks = false;
};

// --streamed: the sweep as the CLI runs it, then its run.json and upload
// chunks rendered piece by piece.
int SweepStreamed(const gdrbench::controller::sweep::SweepConfig& c, const StreamedOptions& so) {
  namespace sweep = gdrbench::controller::sweep;
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto result = sweep::RunSweepStreamed(c);
  const double wall = Since(t0), cpu = CpuSeconds() - cpu0;
  if (!result.ok()) {
    std::fprintf(stderr, "sweep: %s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  const long sweep_rss = MaxRssMb();
  double json_s = 0, chunks_s = 0;
  long json_rss = 0, chunks_rss = 0;
  uint64_t json_bytes = 0, chunk_bytes = 0, chunks = 0;
  if (!so.run_json.empty()) {
    auto t1 = std::chrono::steady_clock::now();
    std::ofstream out(so.run_json, std::ios::binary | std::ios::trunc);
    absl::Status st = result->WriteJson(out);
    out.close();
    if (!st.ok()) {
      std::fprintf(stderr, "run.json: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    json_s = Since(t1);
    json_rss = MaxRssMb();
    json_bytes = std::filesystem::file_size(so.run_json);
  }
  if (so.upload_chunks) {
    auto t2 = std::chrono::steady_clock::now();
    std::string wire;
    absl::Status st = result->ForEachRunChunk({}, [&](const v1::RunChunk& chunk) {
      wire.clear();
      chunk.SerializeToString(&wire);
      chunk_bytes += wire.size();
      ++chunks;
      return absl::OkStatus();
    });
    if (!st.ok()) {
      std::fprintf(stderr, "chunks: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    chunks_s = Since(t2);
    chunks_rss = MaxRssMb();
  }
  std::printf(
      "{\"mode\":\"sweep-library-streamed\",\"nodes\":%zu,\"keep_pairs\":%s,\"streamed\":%s,"
      "\"matrices\":%d,\"cells\":%zu,\"wall_s\":%.3f,\"cpu_s\":%.3f,\"sweep_max_rss_mb\":%ld,\n"
      " \"run_json_s\":%.3f,\"run_json_bytes\":%llu,\"run_json_max_rss_mb\":%ld,"
      "\"upload_chunks\":%llu,\"upload_bytes\":%llu,\"upload_chunks_s\":%.3f,\"upload_max_rss_mb\":%ld,"
      "\"max_rss_mb\":%ld,\"summary\":\"%.60s\"}\n",
      c.inventory.nodes.size(), c.keep_pairs ? "true" : "false", result->streamed() ? "true" : "false",
      result->header().matrices_size(), result->cells(), wall, cpu, sweep_rss, json_s,
      static_cast<unsigned long long>(json_bytes), json_rss, static_cast<unsigned long long>(chunks),
      static_cast<unsigned long long>(chunk_bytes), chunks_s, chunks_rss, MaxRssMb(),
      result->header().summary().c_str());
  return 0;
}

int SweepLibrary(run::FakeCluster& cluster, const gdrbench::controller::inventory::Inventory& inv,
                 uint32_t parallel, bool keep_pairs, const std::string& journal_path,
                 const StreamedOptions& streamed) {
  namespace sweep = gdrbench::controller::sweep;
  sweep::SweepConfig c;
  c.inventory = inv;
  c.agents = cluster.agents();
  c.params.clear_sizes_bytes();
  c.params.add_sizes_bytes(kSizeBytes);
  c.params.set_iterations(1000);
  c.parallel = parallel;
  c.keep_pairs = keep_pairs;
  c.journal_path = journal_path;
  if (streamed.on) return SweepStreamed(c, streamed);
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  auto result = sweep::RunSweep(c);
  const double wall = Since(t0), cpu = CpuSeconds() - cpu0;
  if (!result.ok()) {
    std::fprintf(stderr, "sweep: %s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  // What the v1::Run's matrices hold in memory (a MatrixCell message per
  // tested cell), and the pairs when kept.
  size_t matrices_bytes = 0, pairs_bytes = 0;
  for (const auto& m : result->matrices()) matrices_bytes += m.SpaceUsedLong();
  for (const auto& p : result->pairs()) pairs_bytes += p.SpaceUsedLong();
  std::printf("{\"mode\":\"sweep-library\",\"nodes\":%zu,\"keep_pairs\":%s,\"pairs\":%d,\"matrices\":%d,"
              "\"wall_s\":%.3f,\"cpu_s\":%.3f,\"max_rss_mb\":%ld,\"run_matrices_mb\":%.1f,\"run_pairs_mb\":%.1f,"
              "\"summary\":\"%.60s\"}\n",
              inv.nodes.size(), keep_pairs ? "true" : "false", result->pairs_size(), result->matrices_size(), wall,
              cpu, MaxRssMb(), matrices_bytes / 1e6, pairs_bytes / 1e6, result->summary().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gdrbench controller-at-scale bench (fake agents, zero-time tests)"};
  uint32_t nodes = 1024, rails = 8, parallel = 2;
  uint32_t quick_rounds = gdrbench::sweep_limits::kDefaultQuickRounds;
  std::string mode_name = "all-pairs";
  bool bidirectional = false, no_journal = false, read_back = false;
  std::string journal_path = (std::filesystem::temp_directory_path() /
                              ("gdrbench-bench-journal." + std::to_string(getpid())))
                                 .string();
  app.add_option("--nodes", nodes)->check(CLI::Range(2u, 100000u));
  app.add_option("--rails", rails)->check(CLI::Range(1u, 64u));
  app.add_option("--parallel", parallel, "worker threads")->check(CLI::Range(1u, 1024u));
  app.add_flag("--bidirectional", bidirectional);
  app.add_option("--mode", mode_name, "the plan")->check(CLI::IsMember({"all-pairs", "quick", "ring"}));
  app.add_option("--quick-rounds", quick_rounds, "--mode quick: random perfect matchings")
      ->check(CLI::Range(1u, 1000u));
  app.add_option("--journal", journal_path);
  app.add_flag("--no-journal", no_journal);
  app.add_flag("--read-back", read_back, "time reading the journal back (a resume's first step)");
  bool keep_journal = false, read_only = false, sweep_library = false, keep_pairs = false;
  app.add_flag("--sweep-library", sweep_library, "the whole sweep::RunSweep workflow instead of the runner alone");
  app.add_flag("--keep-pairs", keep_pairs, "--sweep-library: keep every PairResult (as `gdrbench sweep` does)");
  StreamedOptions streamed;
  app.add_flag("--streamed", streamed.on,
               "--sweep-library: sweep::RunSweepStreamed, as `gdrbench sweep` runs it");
  app.add_option("--run-json", streamed.run_json, "--streamed: write the run.json here (streamed)");
  app.add_flag("--upload-chunks", streamed.upload_chunks, "--streamed: serialize every upload chunk");
  app.add_flag("--keep-journal", keep_journal, "leave the journal file (for --read-only)");
  app.add_flag("--read-only", read_only, "no run: read back the --journal an earlier run kept");
  CLI11_PARSE(app, argc, argv);
  if (sweep_library && mode_name != "all-pairs") {
    std::fprintf(stderr, "--mode is the runner's plan: not with --sweep-library\n");
    return 2;
  }
  if (read_only) {
    auto rb = ReadJournalBack(journal_path);
    if (!rb.ok()) {
      std::fprintf(stderr, "read back: %s\n", std::string(rb.status().message()).c_str());
      return 1;
    }
    std::printf("{\"journal_bytes\":%llu,\"read_back_s\":%.3f,\"read_back_cpu_s\":%.3f,\"read_back_tests\":%llu,"
                "\"done_keys\":%zu,\"torn_tail\":%s,\"max_rss_mb\":%ld}\n",
                static_cast<unsigned long long>(rb->journal_bytes), rb->s, rb->cpu_s,
                static_cast<unsigned long long>(rb->tests), rb->done_keys, rb->torn_tail ? "true" : "false",
                MaxRssMb());
    return 0;
  }

  run::FakeCluster cluster(nodes, rails, 400);
  cluster.SetSizes({kSizeBytes});  // the agents answer the size asked (AnswerBounds drops others)
  // A realistic fleet: one slow link, one slow NIC, everything else at 94-97 %.
  cluster.SetBandwidth([nodes](uint32_t s, uint32_t d, const std::string& nic) {
    if (s == 1 && d == 2) return 120.0;
    if ((s == nodes - 1 || d == nodes - 1) && nic == "nic3") return 200.0;
    return 376.0 + (s * 7 + d * 13) % 12;
  });
  gdrbench::controller::inventory::Inventory inv;
  for (uint32_t i = 0; i < nodes; ++i) {
    gdrbench::controller::inventory::Node n;
    n.name = "node" + std::to_string(i);
    n.address = "fake" + std::to_string(i) + ":1";
    inv.nodes.push_back(std::move(n));
  }

  if (sweep_library) {
    const int rc = SweepLibrary(cluster, inv, parallel, keep_pairs, no_journal ? "" : journal_path, streamed);
    if (!no_journal && !keep_journal) std::filesystem::remove(journal_path);
    return rc;
  }
  const double cpu0 = CpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  run::ProbeOptions po;
  po.parallelism = parallel;
  run::ProbeResult probe = run::ProbeNodes(inv, cluster.agents(), po);
  const double probe_s = Since(t0);

  auto t1 = std::chrono::steady_clock::now();
  gdrbench::controller::schedule::ScheduleOptions so;
  so.bidirectional = bidirectional;
  so.mode = *gdrbench::controller::schedule::ParseMode(mode_name);  // one of the three --mode takes
  so.quick_matchings = quick_rounds;
  v1::SweepParams params;
  params.add_sizes_bytes(kSizeBytes);
  params.set_iterations(1000);
  params.set_qps(1);
  auto plan = run::MakePlan(probe.nodes, "host", so, params);
  if (!plan.ok()) {
    std::fprintf(stderr, "plan: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  const double schedule_s = Since(t1);

  std::unique_ptr<run::JournalWriter> journal;
  if (!no_journal) {
    v1::JournalHeader h;
    h.set_run_id("bench");
    h.set_plan_fingerprint(plan->fingerprint);
    h.set_tests(plan->schedule.tests());  // as the sweep library's: a resume reserves its keys by it
    auto w = run::JournalWriter::Create(journal_path, h, run::DescribePlan(*plan));
    if (!w.ok()) {
      std::fprintf(stderr, "journal: %s\n", std::string(w.status().message()).c_str());
      return 1;
    }
    journal = std::move(*w);
  }
  std::vector<std::string> names;
  for (const auto& n : plan->nodes) names.push_back(n.name);
  analysis::MatrixSet matrices(names, bidirectional);
  run::AgentPairTester tester(cluster.agents(), {});
  run::RunnerOptions ro;
  ro.parallelism = parallel;
  ro.retries = 1;
  // As the sweep library does: the journal from the workers at once, the
  // matrices serialized.
  ro.on_result_concurrent = [&](const v1::PairResult& r, const gdrbench::controller::schedule::Test& t) {
    return journal ? journal->Append(r, t.src, t.dst) : absl::OkStatus();
  };
  ro.on_result = [&](const v1::PairResult& r, const gdrbench::controller::schedule::Test& t) -> absl::Status {
    matrices.Add(r, t.src, t.dst);
    return absl::OkStatus();
  };
  auto t2 = std::chrono::steady_clock::now();
  const double cpu_run0 = CpuSeconds();
  absl::Status st = run::SweepRunner(*plan, tester, ro).Run();
  if (st.ok() && journal) st = journal->Flush();  // the run ends with every record written
  const double run_s = Since(t2);
  const double run_cpu = CpuSeconds() - cpu_run0;
  if (!st.ok()) {
    std::fprintf(stderr, "run: %s\n", std::string(st.message()).c_str());
    return 1;
  }

  auto t3 = std::chrono::steady_clock::now();
  analysis::Outcome outcome = analysis::Judge(matrices, analysis::DefaultPolicy(), nullptr, {});
  const double analysis_s = Since(t3);
  const double total_s = Since(t0);
  const double cpu = CpuSeconds() - cpu0;
  uint64_t journal_bytes = 0;
  double read_s = 0, read_cpu_s = 0;
  size_t read_pairs = 0;
  const long run_rss_mb = MaxRssMb();
  if (journal) {
    journal.reset();
    journal_bytes = std::filesystem::file_size(journal_path);
    if (read_back) {
      auto rb = ReadJournalBack(journal_path);
      if (!rb.ok()) {
        std::fprintf(stderr, "read back: %s\n", std::string(rb.status().message()).c_str());
        return 1;
      }
      read_s = rb->s;
      read_cpu_s = rb->cpu_s;
      read_pairs = rb->tests;
    }
    if (!keep_journal) std::filesystem::remove(journal_path);
  }
  const size_t tests = plan->schedule.tests();
  std::printf(
      "{\"mode\":\"%s\",\"nodes\":%u,\"rails\":%u,\"bidirectional\":%s,\"threads\":%u,\"rounds\":%zu,"
      "\"tests\":%zu,"
      "\"cells\":%zu,\"rpcs\":%llu,\"journal_bytes\":%llu,\"journal_bytes_per_test\":%.1f,\n"
      " \"read_back_s\":%.6f,\"read_back_cpu_s\":%.6f,\"read_back_pairs\":%zu,\n"
      " \"probe_s\":%.6f,\"schedule_s\":%.6f,\"run_s\":%.6f,\"analysis_s\":%.6f,\"total_s\":%.6f,"
      "\"cpu_s\":%.6f,\n \"per_test_overhead_us\":%.3f,\"per_test_cpu_us\":%.3f,\n"
      " \"run_max_rss_mb\":%ld,\"max_rss_mb\":%ld,\"open_targets_left\":%lld,\"blame\":[",
      mode_name.c_str(), nodes, rails, bidirectional ? "true" : "false", parallel, plan->schedule.rounds(),
      tests, outcome.cells, static_cast<unsigned long long>(cluster.rpcs()),
      static_cast<unsigned long long>(journal_bytes), static_cast<double>(journal_bytes) / tests, read_s,
      read_cpu_s, read_pairs, probe_s, schedule_s, run_s, analysis_s, total_s, cpu, 1e6 * run_s / tests,
      1e6 * run_cpu / tests, run_rss_mb, MaxRssMb(), static_cast<long long>(cluster.open_targets()));
  for (size_t i = 0; i < outcome.blame.size() && i < 10; ++i) {
    std::printf("%s\"%s %s\"", i ? "," : "", outcome.blame[i].kind().c_str(),
                outcome.blame[i].subject().c_str());
  }
  std::printf("],\"blame_count\":%zu,\"summary\":\"%s\"}\n", outcome.blame.size(), outcome.summary.c_str());
  return 0;
}
