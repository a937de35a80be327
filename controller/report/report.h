// Reports of a finished run, all rendered from the one schema, v1::Run
// (pairs, matrices with verdicts, blame, preflight): JSON (the proto through
// protobuf's json_util), CSV (a row per pair and size), a Markdown summary, a
// self-contained HTML page (heatmap per rail, bandwidth-vs-size curves per
// pair, failing cells with reasons and remedies) and JUnit XML (a test case
// per pair, for CI gates). Pure functions of the run; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::report {

// INTERNAL if json_util fails (it does not for well-formed messages).
absl::StatusOr<std::string> RenderJson(const v1::Run& run);
std::string RenderCsv(const v1::Run& run);
std::string RenderMarkdown(const v1::Run& run);
std::string RenderHtml(const v1::Run& run);
std::string RenderJUnit(const v1::Run& run);
// The verdict matrices as terminal text: one table per rail, Gb/s per cell,
// "FAIL"/"ERR"/"not run" for cells without a value, '*' after low values.
// Followed by RenderIncastText's table when the run has incast targets, and
// RenderMemoryKindsText's when it ran a --memory list.
std::string RenderMatrixText(const v1::Run& run);
// --mode incast: a row per target, rail and round: the K senders' sum, its
// expected rate and verdict, and each sender's Gb/s. "" without incast targets.
std::string RenderIncastText(const v1::Run& run);
// --memory lists (host,gpu): a row per pair with each kind's BW average side
// by side and the gpu/host and gpu-staged/host ratios. "" without lists.
std::string RenderMemoryKindsText(const v1::Run& run);
// One port's counters around a test: "rxe1 port 1: rcvd_seq_err +812,
// sent_pkts +26000, rcvd_pkts +25000; link_downed: went back from 3 to 0
// (...)", or why there are none ("not sampled" from an agent that sent none).
std::string DescribePortCounters(const v1::PortCounters& counters);
// Said wherever port counters are reported: they are the port's, not the
// test's.
inline constexpr char kPortCountersCaveat[] =
    "port counters count every QP on the port: other tests' and other tenants' traffic is included";

// Writes run.json, pairs.csv, summary.md, report.html and junit.xml into
// `dir` (created if missing). Returns the paths written. INTERNAL /
// PERMISSION_DENIED naming the path on failure.
absl::StatusOr<std::vector<std::string>> WriteReports(const v1::Run& run, const std::string& dir);

// Reads a run.json (e.g. a baseline). NOT_FOUND naming the path;
// INVALID_ARGUMENT when it does not parse as a v1::Run.
absl::StatusOr<v1::Run> LoadRunJson(const std::string& path);

}  // namespace gdrbench::controller::report
