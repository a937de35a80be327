// The checks whose answer needs the live node (a GPU load, two reads of the
// counters a second apart), driven by fakes over private copies of trees so
// they take milliseconds; and the formats they read, from their published
// definitions.
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "agent/counters/counter_history.h"
#include "agent/preflight/extract.h"
#include "agent/preflight/kernel_log.h"
#include "agent/preflight/kernel_modules.h"
#include "agent/preflight/secure_boot_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node.h"

namespace gdrbench::agent::preflight {
namespace {

using testing::HasSubstr;
using testing_fakes::Describe;
using testing_fakes::kTrees;
using testing_fakes::Node;
using testing_fakes::TreeCopy;

constexpr char kGpuSpeed[] = "/sys/bus/pci/devices/0000:03:00.0/current_link_speed";

TEST(PcieUnderLoad, IdleGpuReachesItsMaximumUnderLoadAndPasses) {
  TreeCopy tree("gpu-idle-link-speed");
  Node node(tree.dir());
  node.Live();
  node.load.on_load = [&] { tree.Write(kGpuSpeed, "32.0 GT/s PCIe\n"); };
  auto r = node.Run("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_EQ(node.load.runs, 1);
  EXPECT_EQ(node.load.last_gpu, 0);
  EXPECT_THAT(r.summary, HasSubstr("GPU0 idle at rest, at full speed under load"));
  EXPECT_THAT(Describe(r), HasSubstr("under load 32 GT/s = max (fake copy: 1.1 GB in 100 ms, 3 reads"));
}

TEST(PcieUnderLoad, GpuThatStaysLowUnderLoadIsDegraded) {
  TreeCopy tree("gpu-idle-link-speed");
  Node node(tree.dir());
  node.Live();
  node.load.on_load = [&] { tree.Write(kGpuSpeed, "16.0 GT/s PCIe\n"); };  // trains up, but only to Gen4
  auto r = node.Run("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("GPU0 (0000:03:00.0) x16 @ 2.5 GT/s (max x16 @ 32 GT/s), 16 GT/s under load"));
  EXPECT_THAT(r.remediation, HasSubstr("reseat"));
}

TEST(PcieUnderLoad, OfflineTheSameReadingIsAWarnNotAPass) {
  Node node("gpu-idle-link-speed");  // no GPU load: as offline
  auto r = node.Run("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(Describe(r), HasSubstr("idle or degraded: run live to tell"));
}

TEST(PcieUnderLoad, AtMaximumNoLoadUnlessAskedThenTheReadingIsShown) {
  Node node("healthy");
  node.Live();
  EXPECT_EQ(node.Run("pcie_link_degraded").status, Status::kPass);
  EXPECT_EQ(node.load.runs, 0);
  node.ctx.set_load_all_gpu_links(true);
  auto r = node.Run("pcie_link_degraded");
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_EQ(node.load.runs, 1);
  EXPECT_THAT(Describe(r), HasSubstr("under load 32 GT/s = max"));
}

constexpr char kSymbolError[] = "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error";

TEST(LinkErrorCounters, GrowingBetweenTwoReadsFailsOnARail) {
  TreeCopy tree("healthy");
  Node node(tree.dir());
  node.ctx.set_counter_wait([&] { tree.Write(kSymbolError, "9\n"); }, absl::Seconds(1));
  auto r = node.Run("link_error_counters");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("errors counting up now: mlx5_0 port 1 symbol_error +9"));
  EXPECT_THAT(r.summary, HasSubstr("read twice, 1s apart"));
  EXPECT_THAT(r.remediation, HasSubstr("replace the cable"));
}

TEST(LinkErrorCounters, GrowingOnAStorageNicWarns) {
  TreeCopy tree("dgx-a100");
  Node node(tree.dir());
  node.ctx.set_counter_wait(
      [&] { tree.Write("/sys/class/infiniband/mlx5_4/ports/1/counters/link_downed", "2\n"); },
      absl::Milliseconds(1));
  auto r = node.Run("link_error_counters");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("mlx5_4 port 1 link_downed +2 (not a GPU rail"));
}

TEST(LinkErrorCounters, StaticNonZeroWarnsZeroPasses) {
  TreeCopy tree("fault-link-errors");
  Node node(tree.dir());
  node.ctx.set_counter_wait([] {}, absl::Milliseconds(1));
  EXPECT_EQ(node.Run("link_error_counters").status, Status::kWarn);
  Node healthy("healthy");
  healthy.ctx.set_counter_wait([] {}, absl::Milliseconds(1));
  EXPECT_EQ(healthy.Run("link_error_counters").status, Status::kPass);
}

// In the agent the first read is its background sample (CounterHistory): no
// wait when every port has one at least the interval old.
TEST(LinkErrorCounters, AgainstTheAgentsSampleNoWait) {
  TreeCopy tree("healthy");
  Node node(tree.dir());
  auto history = std::make_shared<counters::CounterHistory>(
      FsRoot(tree.dir()), counters::HistoryOptions{.run_sampler = false});
  history->Tick();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  tree.Write(kSymbolError, "9\n");
  int waits = 0;
  node.ctx.set_counter_wait([&] { ++waits; }, absl::Milliseconds(20));
  node.ctx.set_counter_history(history);
  auto r = node.Run("link_error_counters");
  EXPECT_EQ(waits, 0);
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("errors counting up now: mlx5_0 port 1 symbol_error +9"));
  EXPECT_THAT(r.summary, HasSubstr("read now and in the agent's sample of"));
}

TEST(LinkErrorCounters, APortWithoutAnOldEnoughSampleIsReadTwice) {
  TreeCopy tree("healthy");
  Node node(tree.dir());
  auto history = std::make_shared<counters::CounterHistory>(
      FsRoot(tree.dir()), counters::HistoryOptions{.run_sampler = false});
  history->Tick();  // a sample, but younger than the interval
  int waits = 0;
  node.ctx.set_counter_wait([&] { ++waits; }, absl::Hours(1));
  node.ctx.set_counter_history(history);
  auto r = node.Run("link_error_counters");
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("read twice, 1h apart"));
}

// Secure Boot from bytes written here as the published format defines them
// (fs/efivarfs/file.c: u32 attributes, little-endian, then the value; UEFI
// "Globally Defined Variables": SecureBoot, vendor EFI_GLOBAL_VARIABLE
// 8be4df61-93ca-11d2-aa0d-00e098032b8c, attributes BS|RT = 0x06, one byte,
// 1 = enabled as mokutil --sb-state reads it), not from the generator.
TEST(SecureBootFormat, AVariableWrittenFromTheSpecIsRead) {
  TreeCopy tree("healthy");
  const unsigned char bytes[] = {0x06, 0x00, 0x00, 0x00, 0x01};
  tree.Write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
             std::string(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
  SecureBootState sb = ReadSecureBoot(FsRoot(tree.dir()));
  EXPECT_TRUE(sb.uefi);
  EXPECT_TRUE(sb.on());
  EXPECT_EQ(sb.setup_mode.value, 0);
  EXPECT_EQ(sb.lockdown, "none");
  auto r = Node(tree.dir()).Run("secure_boot");
  EXPECT_THAT(r.summary, HasSubstr("Secure Boot is on")) << Describe(r);
}

TEST(SecureBootFormat, TheGeneratedTreesCarryTheSpecsBytes) {
  std::ifstream in(kTrees + "secure-boot-signed/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
                   std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes, std::string("\x06\x00\x00\x00\x01", 5));
}

// The GUID the first version read (…-e0f9ae1d1a2d) is not EFI_GLOBAL_VARIABLE:
// a variable there is not Secure Boot, so the tree reads as off.
TEST(SecureBootFormat, AVariableUnderAnotherGuidIsNotSecureBoot) {
  auto r = Node("secure-boot-wrong-guid").Run("secure_boot");
  EXPECT_EQ(r.status, Status::kPass);
  EXPECT_THAT(r.summary, HasSubstr("without a SecureBoot variable"));
}

TEST(SecureBootFormat, LockdownLevelIsTheBracketedOne) {
  EXPECT_EQ(CurrentLockdown("none [integrity] confidentiality"), "integrity");
  EXPECT_EQ(CurrentLockdown("[none] integrity confidentiality"), "none");
  EXPECT_EQ(CurrentLockdown("none integrity"), "");
}

// Secure Boot on a tree whose modules' /sys/module/*/taint files are absent (a
// partial capture, an older agent's capture). The facts come from outside the
// code: the lent H200's own capture (tests/testdata/gpu-h200/README.md), whose
// /proc/modules reads "nvidia 14299136 - - Live 0xffffffffc0400000 (O)" and
// "nvidia_uvm ... (O)"; the kernel prints a module's taint letters there in
// parentheses, and nothing when it has none (kernel/module/main.c,
// module_flags()); E is "unsigned module was loaded" and P, O proprietary and
// out-of-tree (Documentation/admin-guide/tainted-kernels.rst). The SecureBoot
// variable is written as the UEFI spec defines it (see above).
class SecureBootTaint : public testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/gdrbench-sb-taint-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    ASSERT_TRUE(ExtractCapture(std::string(GDRBENCH_SOURCE_DIR) +
                                   "/tests/testdata/gpu-h200/h200-preflight-capture.tar.gz",
                               dir_)
                    .ok());
    const unsigned char on[] = {0x06, 0x00, 0x00, 0x00, 0x01};
    Write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
          std::string(reinterpret_cast<const char*>(on), sizeof(on)));
    for (const char* m : {"nvidia", "nvidia_uvm"}) std::filesystem::remove(dir_ + "/sys/module/" + m + "/taint");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& path, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + path).parent_path());
    std::ofstream(dir_ + path, std::ios::trunc | std::ios::binary) << content;
  }
  std::string ProcModules() {
    std::ifstream in(dir_ + "/proc/modules");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::string dir_;
};

TEST_F(SecureBootTaint, ProcModulesTellsTheTaintWhenSysfsCannot) {
  auto nvidia = ReadModuleTaint(FsRoot(dir_), "nvidia");
  EXPECT_EQ(nvidia.letters, "O");
  EXPECT_EQ(nvidia.source, "/proc/modules");
  auto r = Node(dir_).Run("secure_boot");
  EXPECT_EQ(r.status, Status::kPass) << Describe(r);
  EXPECT_THAT(Describe(r), HasSubstr("/proc/modules: O ('nvidia 14299136 - - Live 0xffffffffc0400000 (O)')"));
}

TEST_F(SecureBootTaint, AnUnsignedModuleInProcModulesFails) {
  std::string mods = ProcModules();
  size_t at = mods.find("Live 0xffffffffc0400000 (O)");
  ASSERT_NE(at, std::string::npos) << mods;
  mods.replace(at, std::string("Live 0xffffffffc0400000 (O)").size(), "Live 0xffffffffc0400000 (POE)");
  Write("/proc/modules", mods);
  auto r = Node(dir_).Run("secure_boot");
  EXPECT_EQ(r.status, Status::kFail) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("unsigned modules are loaded (nvidia: taint E)"));
}

TEST_F(SecureBootTaint, NoTaintInProcModulesIsNoTaint) {
  // module_flags() prints nothing for a module without taints: six fields.
  Write("/proc/modules", "nvidia 14299136 - - Live 0xffffffffc0400000\n");
  std::filesystem::remove_all(dir_ + "/sys/module/nvidia_uvm");
  auto nvidia = ReadModuleTaint(FsRoot(dir_), "nvidia");
  EXPECT_EQ(nvidia.letters, "");
  EXPECT_EQ(Node(dir_).Run("secure_boot").status, Status::kPass);
}

TEST_F(SecureBootTaint, NeitherSourceReadableIsAWarnNotAPass) {
  std::filesystem::remove(dir_ + "/proc/modules");  // loaded per /sys/module/nvidia/initstate only
  auto nvidia = ReadModuleTaint(FsRoot(dir_), "nvidia");
  EXPECT_FALSE(nvidia.letters.has_value());
  auto r = Node(dir_).Run("secure_boot");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(r.summary, HasSubstr("cannot tell whether the modules are signed"));
  EXPECT_THAT(r.summary, HasSubstr("nvidia, nvidia_uvm"));
  EXPECT_THAT(Describe(r), HasSubstr("not readable, nor is /proc/modules"));
}

TEST_F(SecureBootTaint, AModuleProcModulesDoesNotListIsUnknown) {
  Write("/proc/modules", "rdma_rxe 135168 0 - Live 0xffffffffc0a7d000\n");
  auto r = Node(dir_).Run("secure_boot");
  EXPECT_EQ(r.status, Status::kWarn) << Describe(r);
  EXPECT_THAT(Describe(r), HasSubstr("does not list nvidia"));
}

// Kernel log lines in the three forms a log arrives in: a /dev/kmsg record
// (Documentation/ABI/testing/dev-kmsg: "prio,seq,usec,flags;msg"), `dmesg`
// and `dmesg -T` output, as quoted in NVIDIA/gpu-operator#2868.
TEST(KernelLog, MessagesFromEveryForm) {
  EXPECT_EQ(LogMessage("4,1789,17216024,-;nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)"),
            "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)");
  EXPECT_EQ(LogMessage("[   17.216024] nvidia_peermem: Unknown symbol x (err -2)"),
            "nvidia_peermem: Unknown symbol x (err -2)");
  EXPECT_EQ(LogMessage("[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol "
                       "ib_register_peer_memory_client"),
            "nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client");
  EXPECT_EQ(LogMessage("  #1  #2  #3"), "  #1  #2  #3");  // a message that starts with blanks
  EXPECT_EQ(LogMessage("plain line"), "plain line");
}

}  // namespace
}  // namespace gdrbench::agent::preflight
