// Capture tarballs from support tickets are untrusted (issue 12, item 2):
// unpacked as data only, whatever the archive holds. The tarballs are made
// by Python's tarfile (hostile_captures.py), not by our code.
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/preflight/capture.h"
#include "agent/preflight/extract.h"
#include "agent/preflight/preflight.h"

namespace gdrbench::agent::preflight {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class HostileCaptures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(fs::temp_directory_path() / ("hostile-captures-" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    std::string cmd = "python3 " GDRBENCH_SOURCE_DIR "/tests/unit/agent/preflight/hostile_captures.py " + *dir_;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override {
    dest_ = *dir_ + "/out-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dest_);
  }
  static std::string Tar(const char* name) { return *dir_ + "/" + name + ".tar.gz"; }
  absl::Status Extract(const char* name, ExtractLimits caps = {}) {
    return ExtractCapture(Tar(name), dest_, caps);
  }
  static mode_t Mode(const std::string& p) {
    struct stat st;
    return lstat(p.c_str(), &st) == 0 ? st.st_mode : 0;
  }
  static std::string* dir_;
  std::string dest_;
};
std::string* HostileCaptures::dir_ = nullptr;

TEST_F(HostileCaptures, AGoodCaptureUnpacksWithLinksAndNoSetuid) {
  ASSERT_TRUE(Extract("good").ok());
  std::ifstream fw(dest_ + "/sys/class/infiniband/mlx5_0/fw_ver");
  std::string v;
  fw >> v;
  EXPECT_EQ(v, "28.39.1002");
  EXPECT_TRUE(S_ISLNK(Mode(dest_ + "/sys/class/infiniband/mlx5_0")));
  EXPECT_EQ(Mode(dest_ + "/usr/bin/tool") & 07777, 0755u) << "setuid kept";
  EXPECT_EQ(Mode(dest_ + "/etc/hostname") & 07777, 0644u);
}

TEST_F(HostileCaptures, DevicesFifosAndHardLinksRefuseTheCapture) {
  for (const char* name : {"chardev", "fifo", "hardlink"}) {
    absl::Status st = Extract(name);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << name << ": " << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr("a capture holds files, directories and symlinks")) << name;
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ + "/sys/zero")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest_ + "/sys/fifo")));
}

TEST_F(HostileCaptures, NothingIsWrittenThroughASymlink) {
  absl::Status st = Extract("through_symlink");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("goes through 'escape'"));
  EXPECT_FALSE(fs::exists("/tmp/gdrbench-owned"));
}

TEST_F(HostileCaptures, CapsOnEntriesAndBytes) {
  EXPECT_THAT(std::string(Extract("many", {.entries = 10}).message()), HasSubstr("more than 10 entries"));
  EXPECT_THAT(std::string(Extract("big", {.file_bytes = 1 << 20}).message()), HasSubstr("larger than 1 MiB"));
  EXPECT_THAT(std::string(Extract("big", {.total_bytes = 2 << 20}).message()), HasSubstr("unpacks to more than 2 MiB"));
}

TEST_F(HostileCaptures, NotATarballIsOneSentence) {
  absl::Status st = Extract("not-a-tarball");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("is not a gzip'd tar"));
  EXPECT_EQ(std::string(st.message()).find('\n'), std::string::npos);
}

TEST_F(HostileCaptures, AFifoNamedAsTheTarballIsRefusedNotWaitedOn) {
  std::string fifo = dest_ + "/capture.tar.gz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  absl::Status st = ExtractCapture(fifo, dest_);
  EXPECT_THAT(std::string(st.message()), HasSubstr("is not a regular file"));
}

// The whole front door: a refused capture leaves no temporary tree behind,
// and the private tree is 0700 while it exists.
TEST_F(HostileCaptures, OfflinePreflightRefusesAndCleansUp) {
  std::string tmp = dest_ + "/tmp";
  fs::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  auto report = RunPreflightAt(Tar("chardev"), {});
  EXPECT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr("character device"));
  EXPECT_TRUE(fs::is_empty(tmp)) << "a temporary tree was left behind";
  auto tree = ExtractTree(Tar("good"));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(Mode(*tree) & 07777, 0700u);
  RemoveTree(*tree);
  unsetenv("TMPDIR");
}

}  // namespace
}  // namespace gdrbench::agent::preflight
