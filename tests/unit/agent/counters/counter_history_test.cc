// Kept-descriptor reads (PortFiles) and the background history, on private
// copies of tests/testdata/counters (file names and format from the kernel:
// one decimal value and a newline per attribute, see that folder's README).
#include "agent/counters/counter_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace gdrbench::agent::counters {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kTrees = std::string(GDRBENCH_SOURCE_DIR) + "/tests/testdata/counters/";
const std::string kPort = "/sys/class/infiniband/mlx5_0/ports/1/";

class Tree {
 public:
  explicit Tree(const std::string& name) {
    std::string base = std::string(GDRBENCH_BINARY_DIR) + "/tree-copies";
    fs::create_directories(base);
    std::string templ = base + "/counters-" + name + "-XXXXXX";
    dir_ = mkdtemp(templ.data());
    fs::copy(kTrees + name, dir_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~Tree() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  // Rewrites a file in place (same inode: a kept descriptor must see it).
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(dir_ + path, std::ios::in | std::ios::out | std::ios::trunc) << text;
  }

 private:
  std::string dir_;
};

TEST(PortFiles, KeptDescriptorsReadWhatReadPortReadsAndSeeRewrites) {
  Tree tree("mlx5-before");
  FsRoot root(tree.dir());
  PortFiles files(root, "mlx5_0", 1, TestCounters(), /*keep_open=*/true);
  Sample kept = files.Read();
  Sample fresh = ReadPort(root, "mlx5_0", 1, TestCounters());
  EXPECT_EQ(kept.values, fresh.values);
  EXPECT_FALSE(kept.values.empty());
  EXPECT_EQ(kept.device, "mlx5_0");
  EXPECT_EQ(kept.port, 1u);
  tree.Write(kPort + "counters/symbol_error", "65535\n");
  Sample again = files.Read();
  EXPECT_EQ(again.values.at("counters/symbol_error"), 65535u);
  EXPECT_GE(again.taken_ns, kept.taken_ns);
  // A value that does not parse is left out, as ReadPort leaves it out.
  tree.Write(kPort + "counters/symbol_error", "N/A\n");
  EXPECT_EQ(files.Read().values.count("counters/symbol_error"), 0u);
  EXPECT_EQ(ReadPort(root, "mlx5_0", 1, TestCounters()).values.count("counters/symbol_error"), 0u);
}

TEST(PortFiles, APortWithoutCountersReadsEmpty) {
  Tree tree("no-counters");
  PortFiles files(FsRoot(tree.dir()), "mlx5_0", 1, TestCounters(), /*keep_open=*/true);
  EXPECT_TRUE(files.Read().values.empty());
}

TEST(CounterHistory, BeforeIsTheNewestSampleOldEnough) {
  Tree tree("mlx5-before");
  FsRoot root(tree.dir());
  CounterHistory h(root, HistoryOptions{.keep = 2, .run_sampler = false, .keep_open = true});
  EXPECT_FALSE(h.Before("mlx5_0", 1, milliseconds(0)).has_value()) << "nothing sampled yet";
  h.Tick();
  std::this_thread::sleep_for(milliseconds(30));
  tree.Write(kPort + "counters/symbol_error", "7\n");
  h.Tick();
  // Both samples are at least 0 ms old: the newest (7); only the first is 20 ms old.
  std::optional<Sample> newest = h.Before("mlx5_0", 1, milliseconds(0));
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->values.at("counters/symbol_error"), 7u);
  std::optional<Sample> older = h.Before("mlx5_0", 1, milliseconds(20));
  ASSERT_TRUE(older.has_value());
  EXPECT_NE(older->values.at("counters/symbol_error"), 7u);
  EXPECT_FALSE(h.Before("mlx5_0", 1, std::chrono::hours(1)).has_value());
  EXPECT_FALSE(h.Before("mlx5_0", 2, milliseconds(0)).has_value()) << "no such port";
  // Only the preflight's error counters are kept, not the packet counters.
  EXPECT_EQ(newest->values.count("counters/port_xmit_packets"), 0u);
  // keep = 2: a third tick pushes the first sample out. Whatever is old
  // enough now (on a loaded host the second sample may be 50 ms old too) is
  // never the first sample.
  std::this_thread::sleep_for(milliseconds(30));
  h.Tick();
  for (auto age : {milliseconds(20), milliseconds(50), milliseconds(200)}) {
    std::optional<Sample> s = h.Before("mlx5_0", 1, age);
    if (s) EXPECT_GT(s->taken_ns, older->taken_ns) << "the first sample is kept (" << age.count() << " ms)";
  }
  std::optional<Sample> second = h.Before("mlx5_0", 1, milliseconds(20));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->values.at("counters/symbol_error"), 7u);
  EXPECT_GT(second->taken_ns, older->taken_ns);
}

TEST(CounterHistory, OnlyOwnedDevicesAndGoneDevicesAreDropped) {
  Tree tree("mlx5-before");
  CounterHistory other(FsRoot(tree.dir()), HistoryOptions{.devices = {"mlx5_1"}, .run_sampler = false});
  other.Tick();
  EXPECT_FALSE(other.Before("mlx5_0", 1, milliseconds(0)).has_value());
  CounterHistory h(FsRoot(tree.dir()), HistoryOptions{.devices = {"mlx5_0"}, .run_sampler = false});
  h.Tick();
  EXPECT_TRUE(h.Before("mlx5_0", 1, milliseconds(0)).has_value());
  fs::remove_all(tree.dir() + "/sys/class/infiniband/mlx5_0");
  h.Tick();
  EXPECT_FALSE(h.Before("mlx5_0", 1, milliseconds(0)).has_value());
}

TEST(CounterHistory, TheSamplerTicksOnItsOwnAndStops) {
  Tree tree("mlx5-before");
  FsRoot root(tree.dir());
  auto h = std::make_unique<CounterHistory>(root, HistoryOptions{.period = milliseconds(5)});
  bool seen = false;
  for (int i = 0; i < 400 && !seen; ++i) {
    std::this_thread::sleep_for(milliseconds(5));
    seen = h->Before("mlx5_0", 1, milliseconds(10)).has_value();
  }
  EXPECT_TRUE(seen) << "no sample 10 ms old after 2 s";
  h.reset();  // joins the sampler
}

}  // namespace
}  // namespace gdrbench::agent::counters
