// /metrics in the Prometheus text exposition format (version 0.0.4), names
// and units per https://prometheus.io/docs/practices/naming/ (base units:
// seconds, and bytes even where bits are usual, so bandwidth is
// bytes per second; timestamps as *_timestamp_seconds; counters *_total).
// Cardinality is O(clusters x nodes x rails), never O(nodes^2): per cluster
// the newest stored run's outcome, time, duration, cell counts and
// regressions (all, and those confirmed by a retest whose streak reached
// persist_runs); per
// regression finding of the newest run its streak (at most
// kMaxStreakSeries per cluster and reference, in the report's order: nodes,
// NICs and rails first, then links by drop); per node and rail its median write bandwidth (as initiator
// and as target) and low and failed cells; per node its preflight FAILs
// (and one series per failing check); sweeps queued and running; the
// server's upload counters. There is no Debian package of a C++ Prometheus
// client library, so the format is written here (tested with promtool and a
// real Prometheus).
// Thread safety: Render may be called concurrently (a cache per run).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"
#include "server/sweeps/sweep_manager.h"

namespace gdrbench::server::metrics {

struct Counters {
  std::atomic<uint64_t> uploads_stored{0};
  std::atomic<uint64_t> uploads_already_stored{0};
  std::atomic<uint64_t> uploads_rejected{0};
  std::atomic<uint64_t> requests_refused{0};  // bad or missing token
  std::atomic<uint64_t> connections_shed{0};  // HTTP: over the connection limits
};

// Escapes a label value (\\, \", \n) per the text format.
std::string EscapeLabel(const std::string& value);

inline constexpr int kMaxStreakSeries = 100;

class Exporter {
 public:
  // persist_runs: a finding counts in gdrbench_last_run_persistent_regressions
  // once its streak (consecutive runs with it) reaches this and it is
  // confirmed by a retest (Regression.confirmed).
  Exporter(store::Store& store, sweeps::SweepManager& sweeps, Counters& counters, uint32_t persist_runs = 2)
      : store_(store), sweeps_(sweeps), counters_(counters), persist_runs_(persist_runs) {}
  absl::StatusOr<std::string> Render();

 private:
  // The per-run part, cached by run key (a new run replaces it).
  absl::StatusOr<std::string> RunSeries(const store::RunRow& run);
  store::Store& store_;
  sweeps::SweepManager& sweeps_;
  Counters& counters_;
  uint32_t persist_runs_;
  std::mutex mu_;
  std::map<std::string, std::pair<int64_t, std::string>> cache_;  // cluster -> (run key, text)
};

}  // namespace gdrbench::server::metrics
