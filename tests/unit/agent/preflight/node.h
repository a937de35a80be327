// One node for the preflight unit tests: a tree under tests/testdata (or a
// private copy of one, to change between two reads) plus fakes standing in
// for the live CUDA driver, the registration probe and the GPU load.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "agent/preflight/checks.h"
#include "agent/preflight/context.h"
#include "agent/preflight/kernel_log.h"
#include "agent/preflight/runner.h"
#include "agent/preflight/sysfs_rdma.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace gdrbench::agent::preflight::testing_fakes {

inline const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/preflight/";

// A private copy of a testdata tree, removed at the end: hard links (the
// build directory lives on the source's filesystem), symlinks kept, so a
// copy of a 12-NIC server costs milliseconds. Write replaces a file rather
// than writing through the link, so the original never changes.
class TreeCopy {
 public:
  explicit TreeCopy(const std::string& tree) {
    std::string base = std::string(GDRBENCH_BINARY_DIR) + "/tree-copies";
    std::filesystem::create_directories(base);
    std::string templ = base + "/" + tree + "-XXXXXX";
    dir_ = mkdtemp(templ.data());
    std::filesystem::copy(kTrees + tree, dir_,
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks |
                              std::filesystem::copy_options::create_hard_links);
  }
  ~TreeCopy() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  // Replaces `path` (e.g. "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error"),
  // resolving the tree's symlinks on the way.
  void Write(const std::string& path, const std::string& content) const {
    std::string file = std::filesystem::canonical(dir_ + path.substr(0, path.rfind('/'))).string() +
                       path.substr(path.rfind('/'));
    std::filesystem::remove(file);
    std::ofstream(file, std::ios::trunc) << content;
  }

 private:
  std::string dir_;
};

struct Node {
  explicit Node(const std::string& root, Expectations e = {}, std::vector<std::string> devices = {})
      : fs(root.front() == '/' ? root : kTrees + root),
        sysfs(fs),
        rdma(sysfs),
        log(MakeCapturedKernelLog(fs)),
        ctx(fs, rdma, cuda, probe, std::move(e), std::move(devices)) {
    ctx.set_kernel_log(log.get());  // offline: the tree's captured log; no GPU load
  }
  // As on a live node: GPU loads go to the fake.
  Node& Live() {
    ctx.set_gpu_load(&load);
    return *this;
  }
  CheckResult Run(const std::string& id) {
    auto report = RunPreflight(ctx, {id});
    EXPECT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->checks.size(), 1u);
    return report->checks.at(0);
  }
  std::map<std::string, CheckResult> RunAll() {
    auto report = RunPreflight(ctx, {});
    EXPECT_TRUE(report.ok()) << report.status();
    std::map<std::string, CheckResult> by_id;
    for (auto& c : report->checks) by_id[c.id] = c;
    return by_id;
  }
  FsRoot fs;
  SysfsRdma sysfs;
  FakeDmabufRdma rdma;
  FakeCuda cuda;
  FakeProbe probe;
  FakeLoad load;
  std::unique_ptr<KernelLog> log;
  Context ctx;
};

inline std::string Describe(const CheckResult& r) {
  std::string s = std::string(StatusName(r.status)) + " " + r.id + ": " + r.summary;
  for (const auto& e : r.evidence) s += "\n  " + e.source + ": " + e.observed;
  if (!r.remediation.empty()) s += "\n  fix: " + r.remediation;
  return s;
}

}  // namespace gdrbench::agent::preflight::testing_fakes
