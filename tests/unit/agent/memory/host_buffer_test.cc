#include "agent/memory/host_buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {
namespace {

using ::testing::HasSubstr;

TEST(HostBuffer, IsPageAlignedAndFilledAndChecked) {
  auto spec = MemorySpec::Parse("host");
  ASSERT_TRUE(spec.ok());
  auto buf = Allocate(*spec, 100000, -1);
  ASSERT_TRUE(buf.ok()) << buf.status();
  Buffer& b = **buf;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % sysconf(_SC_PAGESIZE), 0u);
  EXPECT_EQ(b.size(), 100000u);
  EXPECT_EQ(b.kind(), Kind::kHost);
  EXPECT_EQ(b.kind_name(), "host");
  EXPECT_EQ(b.check_method(), "cpu");
  ASSERT_TRUE(b.FillPattern(10, 50000, 77).ok());
  auto ok = b.CheckPattern(10, 50000, 77);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, -1);
  static_cast<uint8_t*>(b.data())[31337] ^= 1;
  auto bad = b.CheckPattern(10, 50000, 77);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(*bad, 31337);
}

TEST(HostBuffer, RejectsRangesOutsideTheBuffer) {
  auto buf = HostBuffer::Create(Kind::kHost, 4096, -1);
  ASSERT_TRUE(buf.ok()) << buf.status();
  EXPECT_EQ((*buf)->FillPattern(4000, 97, 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*buf)->CheckPattern(SIZE_MAX, 2, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*buf)->FillPattern(4000, 96, 1).ok());
}

TEST(HostBuffer, ZeroBytesIsInvalid) {
  auto buf = HostBuffer::Create(Kind::kHost, 0, -1);
  EXPECT_EQ(buf.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostBuffer, BindsToNodeZero) {
  // Every Linux machine has node 0, with or without NUMA.
  auto buf = HostBuffer::Create(Kind::kHost, 1 << 20, 0);
  ASSERT_TRUE(buf.ok()) << buf.status();
  EXPECT_EQ((*buf)->numa_node(), 0);
}

TEST(HostBuffer, NonexistentNumaNodeIsInvalidArgument) {
  auto buf = HostBuffer::Create(Kind::kHost, 1 << 20, 1000);
  ASSERT_FALSE(buf.ok());
  EXPECT_EQ(buf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(buf.status().message(), HasSubstr("NUMA node 1000"));
}

int FreeHugepages() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long value = 0;
  while (meminfo >> key) {
    if (key == "HugePages_Free:") {
      meminfo >> value;
      return static_cast<int>(value);
    }
    std::getline(meminfo, key);
  }
  return 0;
}

TEST(HostBuffer, HugepageWithoutReservedPagesSaysHowToReserve) {
  if (FreeHugepages() > 0) GTEST_SKIP() << "this machine has free hugepages";
  auto buf = HostBuffer::Create(Kind::kHugepage, 1 << 20, -1);
  ASSERT_FALSE(buf.ok());
  EXPECT_EQ(buf.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(buf.status().message(), HasSubstr("nr_hugepages"));
}

TEST(HostBuffer, HugepageBufferIsTwoMegabyteAligned) {
  if (FreeHugepages() < 2) GTEST_SKIP() << "needs 2 free 2 MiB hugepages (vm.nr_hugepages)";
  auto buf = HostBuffer::Create(Kind::kHugepage, 3 << 20, -1);
  ASSERT_TRUE(buf.ok()) << buf.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*buf)->data()) % kHugepageBytes, 0u);
  EXPECT_EQ((*buf)->mapped_bytes(), 4u << 20);
  ASSERT_TRUE((*buf)->FillPattern(0, 3 << 20, 3).ok());
  EXPECT_EQ(*(*buf)->CheckPattern(0, 3 << 20, 3), -1);
}

TEST(Register, NullProtectionDomainSaysNoRdmaDevice) {
  auto buf = HostBuffer::Create(Kind::kHost, 4096, -1);
  ASSERT_TRUE(buf.ok());
  auto reg = Register(nullptr, **buf, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reg.status().message(), HasSubstr("no RDMA device"));
}

}  // namespace
}  // namespace gdrbench::agent::memory
