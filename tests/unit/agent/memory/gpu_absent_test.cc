// GPU kinds on a machine without a GPU: a clear error, never host memory.
// (The gpu tier, tests/gpu/memory, covers machines with one.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/cuda/driver.h"
#include "agent/memory/host_buffer.h"
#include "agent/memory/memory.h"
#include "agent/memory/probe.h"

namespace gdrbench::agent::memory {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

bool HaveGpu() {
  auto driver = cuda::CudaDriver::Shared();
  if (!driver.ok()) return false;
  auto devices = (*driver)->ListDevices();
  return devices.ok() && !devices->empty();
}

TEST(GpuAbsent, GpuKindsFailWithTheReasonAndNoFallback) {
  if (HaveGpu()) GTEST_SKIP() << "this machine has a GPU; tests/gpu/memory covers it";
  for (const char* text : {"gpu:0", "gpu-staged:0", "gpu:0000:17:00.0"}) {
    auto spec = MemorySpec::Parse(text);
    ASSERT_TRUE(spec.ok()) << spec.status();
    auto buf = Allocate(*spec, 4096, -1);
    ASSERT_FALSE(buf.ok()) << text << " allocated " << (*buf)->kind_name() << " memory";
    EXPECT_THAT(buf.status().code(), AnyOf(absl::StatusCode::kFailedPrecondition,
                                           absl::StatusCode::kNotFound))
        << buf.status();
    EXPECT_THAT(buf.status().message(),
                AnyOf(HasSubstr("no NVIDIA driver"), HasSubstr("CUDA_ERROR_NO_DEVICE"),
                      HasSubstr("built without cuda.h"), HasSubstr("0 GPU(s)")))
        << buf.status();
    EXPECT_THAT(buf.status().message(), HasSubstr(spec->ToString()))
        << buf.status();
  }
}

TEST(ProbeRegistration, HostBufferRegistersOrSaysNoRdmaDevice) {
  auto buf = HostBuffer::Create(Kind::kHost, 4096, -1);
  ASSERT_TRUE(buf.ok()) << buf.status();
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list != nullptr) ibv_free_device_list(list);
  auto method = ProbeRegistration(**buf, "");
  if (count == 0) {
    ASSERT_FALSE(method.ok());
    EXPECT_EQ(method.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(method.status().message(), HasSubstr("no RDMA device"));
  } else {
    ASSERT_TRUE(method.ok()) << method.status();
    EXPECT_EQ(*method, "ibv_reg_mr");
  }
}

TEST(ProbeRegistration, UnknownDeviceNameIsNotFoundOrNoDevice) {
  auto buf = HostBuffer::Create(Kind::kHost, 4096, -1);
  ASSERT_TRUE(buf.ok()) << buf.status();
  auto method = ProbeRegistration(**buf, "no_such_nic9");
  ASSERT_FALSE(method.ok());
  EXPECT_THAT(method.status().message(),
              AnyOf(HasSubstr("no RDMA device \"no_such_nic9\""), HasSubstr("no RDMA device:")));
}

}  // namespace
}  // namespace gdrbench::agent::memory
