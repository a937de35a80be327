#include "common/fs_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gdrbench {
namespace {

namespace fs = std::filesystem;

class FsRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fsroot-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
    fs::create_directories(root_ / "sys/class/infiniband/mlx5_0");
    // An absolute link target must resolve inside the root, not on the host.
    fs::create_directory_symlink("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                                 root_ / "sys/class/infiniband/mlx5_0/device");
    fs::create_directory_symlink("../devices/pci0000:00", root_ / "sys/class/rel");
    std::ofstream(root_ / "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/numa_node")
        << "  1 \n2\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(FsRootTest, ReadsThroughTheRoot) {
  FsRoot r(root_.string() + "/");
  EXPECT_FALSE(r.is_live());
  auto line = r.ReadLine("/sys/class/infiniband/mlx5_0/device/numa_node");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "1");
  EXPECT_TRUE(r.Exists("/sys/class/infiniband/mlx5_0"));
  EXPECT_TRUE(r.IsDirectory("/sys/class/infiniband/mlx5_0/device"));
}

TEST_F(FsRootTest, MissingFileIsNotFoundNamingThePath) {
  FsRoot r(root_.string());
  auto st = r.ReadFile("/proc/driver/nvidia/version").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("/proc/driver/nvidia/version"));
}

TEST_F(FsRootTest, RealPathResolvesAbsoluteLinksInsideTheRoot) {
  FsRoot r(root_.string());
  auto p = r.RealPath("/sys/class/infiniband/mlx5_0/device");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
}

TEST_F(FsRootTest, RealPathResolvesRelativeLinks) {
  FsRoot r(root_.string());
  auto p = r.RealPath("/sys/class/rel/0000:00:01.0");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, "/sys/devices/pci0000:00/0000:00:01.0");
}

TEST_F(FsRootTest, ListDirIsSorted) {
  FsRoot r(root_.string());
  auto names = r.ListDir("/sys/class");
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ::testing::ElementsAre("infiniband", "rel"));
  EXPECT_EQ(r.ListDir("/nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(FsRoot, LiveRootIsSlash) {
  FsRoot r;
  EXPECT_TRUE(r.is_live());
  EXPECT_EQ(r.Resolve("/proc/version"), "/proc/version");
}

}  // namespace
}  // namespace gdrbench
