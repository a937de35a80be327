// gdrbench-preflight: the preflight checks and the capture without gRPC, for
// machines built with the gpu preset (GDRBENCH_WITH_SERVICES=OFF). The agent's
// own `gdrbench-agent preflight|capture` do the same (plus --json).
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/cli_exit.h"
#include "agent/preflight/capture.h"
#include "agent/preflight/preflight.h"

int main(int argc, char** argv) {
  namespace pf = gdrbench::agent::preflight;
  pf::RemoveTempTreesOnSignals("gdrbench-preflight");  // before any thread starts
  CLI::App app{"gdrbench-preflight: the GPUDirect RDMA checklist of this node (or of a captured tree)"};
  std::string fs_root = "/";
  pf::RunOptions options;
  bool verbose = false;
  app.add_option("--fs-root", fs_root, "a captured tree or capture .tar.gz (default: this node, live)")
      ->capture_default_str();
  app.add_option("--checks", options.checks, "only these checks (comma-separated ids)")->delimiter(',');
  app.add_option("--devices", options.devices, "RDMA devices to check, all rails (comma-separated)")
      ->delimiter(',');
  app.add_flag("--verbose", verbose, "show the evidence of passing checks too");
  app.add_flag("--pcie-under-load", options.load_all_gpu_links,
               "load every GPU for the PCIe link check, not only those below their maximum speed");
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
  std::fputs(pf::FormatReport(*report, verbose).c_str(), stdout);
  return report->overall == pf::Status::kFail ? 1 : 0;
}
