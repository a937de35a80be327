// FsRoot over a tree someone else made (issue 12, items 3 and 10): links
// that leave the root or whose target is missing in it are reported, never
// followed on this host; only regular files are read, and only up to a cap.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include "common/fs_root.h"
#include "common/limits.h"

namespace gdrbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class UntrustedTree : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("fsroot-untrusted-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    root_ = base_ / "tree";
    fs::create_directories(root_ / "sys/class/infiniband/mlx5_0");
    // A file of this host, outside the tree, that a hostile link names.
    host_file_ = (base_ / "host-secret").string();
    std::ofstream(host_file_) << "HOST SECRET\n";
  }
  void TearDown() override { fs::remove_all(base_); }
  fs::path base_, root_;
  std::string host_file_;
};

TEST_F(UntrustedTree, ALinkToAHostFileMissingInTheTreeIsNotFollowed) {
  fs::create_symlink(host_file_, root_ / "sys/class/infiniband/mlx5_0/fw_ver");
  FsRoot r(root_.string());
  auto fw = r.ReadFile("/sys/class/infiniband/mlx5_0/fw_ver");
  ASSERT_FALSE(fw.ok()) << "read the host's file: " << *fw;
  EXPECT_EQ(fw.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(fw.status().message()), HasSubstr("not in the captured tree"));
  EXPECT_FALSE(r.Exists("/sys/class/infiniband/mlx5_0/fw_ver"));
}

TEST_F(UntrustedTree, ADirectoryLinkToTheHostsProcIsNotFollowed) {
  fs::create_directory_symlink("/proc", root_ / "proc");
  FsRoot r(root_.string());
  auto cmdline = r.ReadFile("/proc/cmdline");
  EXPECT_FALSE(cmdline.ok()) << "read this host's kernel command line: " << *cmdline;
  auto modules = r.ListDir("/proc");
  EXPECT_FALSE(modules.ok()) << "listed this host's /proc";
  EXPECT_FALSE(r.IsDirectory("/proc/self"));
  EXPECT_FALSE(r.Exists("/proc/modules"));
}

TEST_F(UntrustedTree, DotDotPastTheRootStaysInside) {
  fs::create_symlink("../../../../../../../../" + host_file_, root_ / "sys/leak");
  FsRoot r(root_.string());
  auto leak = r.ReadFile("/sys/leak");
  ASSERT_FALSE(leak.ok()) << *leak;
  EXPECT_THAT(std::string(leak.status().message()), Not(HasSubstr("HOST SECRET")));
}

TEST_F(UntrustedTree, AFifoIsRefusedAtOnceNotWaitedOn) {
  ASSERT_EQ(mkfifo((root_ / "sys/fifo").c_str(), 0644), 0);
  FsRoot r(root_.string());
  auto read = std::async(std::launch::async, [&] { return r.ReadFile("/sys/fifo"); });
  if (read.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    // Unblock the reader so the test can end, then fail.
    int w = open((root_ / "sys/fifo").c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) close(w);
    FAIL() << "ReadFile blocked on a FIFO";
  }
  auto st = read.get().status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("FIFO, not a regular file"));
}

TEST_F(UntrustedTree, ALargeSparseFileIsRefusedUnread) {
  int fd = open((root_ / "sys/huge").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 500ll << 20), 0);  // 500 MB of holes
  close(fd);
  FsRoot r(root_.string());
  auto st = r.ReadFile("/sys/huge").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("more than"));
  // A caller that expects a larger file says so.
  std::ofstream(root_ / "sys/nine") << "123456789";
  EXPECT_EQ(r.ReadFile("/sys/nine", 8).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.ReadFile("/sys/nine", 9).ok());
}

TEST_F(UntrustedTree, SymlinkLoopsAreErrorsNotDirectories) {
  fs::create_symlink("b", root_ / "sys/class/infiniband/a");
  fs::create_symlink("a", root_ / "sys/class/infiniband/b");
  FsRoot r(root_.string());
  auto st = r.ReadFile("/sys/class/infiniband/a/fw_ver").status();
  EXPECT_THAT(std::string(st.message()), HasSubstr("symlink loop"));
  EXPECT_FALSE(r.IsDirectory("/sys/class/infiniband/a"));
  EXPECT_FALSE(r.Exists("/sys/class/infiniband/a"));
}

TEST(LiveRoot, DevZeroIsACharacterDeviceNotAFile) {
  FsRoot live;
  auto read = std::async(std::launch::async, [&] { return live.ReadFile("/dev/zero"); });
  ASSERT_EQ(read.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "read /dev/zero for 5 s";
  auto st = read.get().status();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("/dev/zero is a character device"));
}

TEST(LiveRoot, ProcAndSysFilesStillRead) {
  FsRoot live;
  auto v = live.ReadLine("/proc/version");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, HasSubstr("Linux"));
  EXPECT_TRUE(live.IsDirectory("/sys/class"));
}

}  // namespace
}  // namespace gdrbench
