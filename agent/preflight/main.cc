// gdrbench-preflight: the preflight checks and the capture without gRPC, for
// machines built with the gpu preset (GDRBENCH_WITH_SERVICES=OFF). The agent's
// own `gdrbench-agent preflight|capture` do the same, with the same flags
// (preflight_flags.h); --json prints what `gdrbench-agent preflight --json`
// prints, without protobuf (report_json.h).
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "agent/preflight/capture.h"
#include "agent/preflight/preflight.h"
#include "agent/preflight/preflight_flags.h"
#include "agent/preflight/report_json.h"
#include "common/cli_exit.h"

int main(int argc, char** argv) {
  namespace pf = gdrbench::agent::preflight;
  pf::RemoveTempTreesOnSignals("gdrbench-preflight");  // before any thread starts
  CLI::App app{"gdrbench-preflight: the GPUDirect RDMA checklist of this node (or of a captured tree)"};
  std::string fs_root = "/";
  pf::RunOptions options;
  bool verbose = false, json = false;
  pf::AddOneShotPreflightFlags(&app, fs_root, json, verbose, options);
  std::string out;
  CLI::App* capture = app.add_subcommand("capture", "pack the files the checks read into a tarball");
  capture->add_option("--out", out, "FILE.tar.gz")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return gdrbench::ExitOnParseError(app, e, "gdrbench-preflight", argc, argv);
  }
  if (*capture) {
    if (auto st = pf::CaptureTree(gdrbench::FsRoot("/"), out); !st.ok()) {
      std::fprintf(stderr, "gdrbench-preflight: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::fprintf(stderr, "gdrbench-preflight: wrote %s\n", out.c_str());
    return 0;
  }
  auto report = pf::RunPreflightAt(fs_root, options);
  if (!report.ok()) {
    std::fprintf(stderr, "gdrbench-preflight: %s\n", std::string(report.status().message()).c_str());
    return 2;
  }
  std::fputs((json ? pf::ReportJson(*report) : pf::FormatReport(*report, verbose)).c_str(), stdout);
  return report->overall == pf::Status::kFail ? 1 : 0;
}
