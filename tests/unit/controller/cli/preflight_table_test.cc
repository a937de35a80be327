#include "controller/cli/preflight_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gdrbench::controller::cli {
namespace {

using testing::HasSubstr;
using testing::Not;

v1::PreflightReport Report() {
  v1::PreflightReport r;
  r.set_hostname("node7");
  r.set_fs_root("/");
  r.set_overall(v1::CHECK_STATUS_FAIL);
  r.set_duration_ns(3'400'000);
  auto* ok = r.add_checks();
  ok->set_id("rdma_devices");
  ok->set_status(v1::CHECK_STATUS_PASS);
  ok->set_summary("1 RDMA device(s): mlx5_0");
  auto* e0 = ok->add_evidence();
  e0->set_source("ibv_query_port");
  e0->set_observed("mlx5_0 at 0000:04:00.0");
  auto* bad = r.add_checks();
  bad->set_id("peermem_persistent");
  bad->set_status(v1::CHECK_STATUS_FAIL);
  bad->set_summary("nvidia-peermem is neither loaded nor configured to load at boot");
  bad->set_remediation("echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf");
  auto* e1 = bad->add_evidence();
  e1->set_source("/etc/modules");
  e1->set_observed("does not list it");
  auto* skip = r.add_checks();
  skip->set_id("cuda_driver");
  skip->set_status(v1::CHECK_STATUS_SKIP);
  skip->set_summary("no NVIDIA GPU on the PCI bus");
  return r;
}

TEST(FormatPreflight, OneLinePerCheckThenDetailsOfFailures) {
  std::string out = FormatPreflight(Report());
  EXPECT_THAT(out, HasSubstr("preflight of node7\n"));
  EXPECT_THAT(out, HasSubstr("PASS  rdma_devices"));
  EXPECT_THAT(out, HasSubstr("FAIL  peermem_persistent"));
  EXPECT_THAT(out, HasSubstr("SKIP  cuda_driver"));
  EXPECT_THAT(out, HasSubstr("  /etc/modules: does not list it\n"));
  EXPECT_THAT(out, HasSubstr("  fix: echo nvidia-peermem > /etc/modules-load.d/nvidia-peermem.conf\n"));
  // Evidence of passing checks only with verbose.
  EXPECT_THAT(out, Not(HasSubstr("mlx5_0 at 0000:04:00.0")));
  EXPECT_THAT(FormatPreflight(Report(), true), HasSubstr("mlx5_0 at 0000:04:00.0"));
  EXPECT_THAT(out, HasSubstr("overall FAIL: 1 pass, 0 warn, 1 fail, 1 skip in 3.4 ms"));
}

TEST(FormatPreflight, NamesTheTreeOffline) {
  auto r = Report();
  r.set_fs_root("/tmp/capture");
  EXPECT_THAT(FormatPreflight(r), HasSubstr("preflight of node7 (tree /tmp/capture)"));
}

}  // namespace
}  // namespace gdrbench::controller::cli
