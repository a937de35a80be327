// The subcommands that talk to gdrbench-server (--server HOST:PORT, its gRPC
// API): `runs list|show|compare|upload`, `baseline set|show`, `report
// capacity` (the capacity report as text, CSV or JSON), and the upload a
// sweep does with --server. Exit codes: 0 done; 1 the server said
// no or could not be reached (one line on stderr); 2 bad usage.
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "controller/server_client/server_client.h"
#include "controller/sweep/streamed_run.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::cli {

struct ServerOptions {
  ServerClientConfig client;
  bool json = false;
  // runs list
  std::string cluster;
  uint32_t limit = 20;
  std::string passed;
  // runs show / compare / upload, baseline set
  std::string run;
  std::string other;
  double tolerance = 0;
  std::string path;  // upload: run.json or journal
  // report capacity
  std::string period = "30d";
  std::string format = "text";
  uint32_t weakest = 20;
  // report run
  std::string out;
};

// "30d", "4w" or "30" (days) -> days; INVALID_ARGUMENT otherwise (1 to 3660 days).
absl::StatusOr<uint32_t> ParsePeriodDays(const std::string& period);

// Registers `runs`, `baseline` and `report capacity` on `app`; `dispatch` is
// set to the command to run when one of them was chosen.
void AddServerSubcommands(CLI::App& app, ServerOptions& options, std::function<int()>* dispatch);

// Stores `run` on the server and prints one line about it (and its
// regressions) on stdout; `cluster` overrides the run's. Returns the
// response so the caller can add the regressions to its reports.
absl::StatusOr<v1::UploadRunResponse> UploadRun(const ServerClientConfig& server, v1::Run run,
                                                const std::string& cluster);
// The same for a sweep's run held as a StreamedRun: its chunks streamed
// from the compact matrices and the journal; `run`'s cluster is set.
absl::StatusOr<v1::UploadRunResponse> UploadRun(const ServerClientConfig& server, sweep::StreamedRun* run,
                                                const std::string& cluster);

// After `gdrbench sweep --server`: stores the sweep's `run` (its reports
// already in DIR), then writes the reports again with the regressions the
// server found (WriteSweepReports). Returns `rc` (the sweep's exit code), or
// 1 when the upload failed (the run stays in DIR/run.json).
int UploadAfterSweep(const ServerClientConfig& server, const std::string& cluster, const std::string& dir,
                     sweep::StreamedRun run, int rc);

// A run from a run.json or, for a sweep that never finished, from its
// journal (its finished tests judged with the default verdict policy).
absl::StatusOr<v1::Run> LoadRunOrJournal(const std::string& path);

}  // namespace gdrbench::controller::cli
