// The GPU registration policy with fake verbs/CUDA: order, methods, and the
// failure text (both attempts, reasons, remedies, no host fallback).
#include "agent/memory/gpu_register.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace gdrbench::agent::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class FakeOps : public GpuRegistrationOps {
 public:
  std::string NicName() const override { return "mlx5_7"; }
  std::string GpuName() const override { return "GPU 3 (0000:9a:00.0)"; }
  absl::StatusOr<UniqueFd> ExportDmaBuf() override {
    calls.push_back("export");
    if (!export_status.ok()) return export_status;
    return UniqueFd(-1);  // nothing to close
  }
  ibv_mr* RegisterDmaBuf(int fd, int* err) override {
    calls.push_back("reg_dmabuf");
    *err = dmabuf_errno;
    return dmabuf_errno == 0 ? &mr : nullptr;
  }
  ibv_mr* RegisterPeermem(int* err) override {
    calls.push_back("reg_peermem");
    *err = peermem_errno;
    return peermem_errno == 0 ? &mr : nullptr;
  }
  bool PeermemLoaded() const override { return peermem_loaded; }

  absl::Status export_status = absl::OkStatus();
  int dmabuf_errno = 0;
  int peermem_errno = 0;
  bool peermem_loaded = false;
  std::vector<std::string> calls;
  ibv_mr mr{};
};

// The fake MR is not a verbs object: never let MrDeleter see it.
void Forget(absl::StatusOr<Registration>& reg) {
  if (reg.ok()) (void)reg->mr.release();
}

TEST(RegisterGpu, DmaBufFirstAndOnlyWhenItWorks) {
  FakeOps ops;
  auto reg = RegisterGpuWith(ops);
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->method, "ibv_reg_dmabuf_mr");
  EXPECT_EQ(reg->mr.get(), &ops.mr);
  EXPECT_THAT(ops.calls, ElementsAre("export", "reg_dmabuf"));
  Forget(reg);
}

TEST(RegisterGpu, PeermemWhenTheNicCannotImportDmaBufs) {
  FakeOps ops;
  ops.dmabuf_errno = EOPNOTSUPP;
  auto reg = RegisterGpuWith(ops);
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->method, "ibv_reg_mr+peermem");
  EXPECT_THAT(ops.calls, ElementsAre("export", "reg_dmabuf", "reg_peermem"));
  Forget(reg);
}

TEST(RegisterGpu, PeermemWhenTheGpuCannotExport) {
  FakeOps ops;
  ops.export_status = absl::UnimplementedError("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0");
  auto reg = RegisterGpuWith(ops);
  ASSERT_TRUE(reg.ok()) << reg.status();
  EXPECT_EQ(reg->method, "ibv_reg_mr+peermem");
  EXPECT_THAT(ops.calls, ElementsAre("export", "reg_peermem"));
  Forget(reg);
}

TEST(RegisterGpu, BothFailingNamesBothAttemptsReasonsAndRemedies) {
  FakeOps ops;
  ops.dmabuf_errno = EOPNOTSUPP;
  ops.peermem_errno = EFAULT;
  auto reg = RegisterGpuWith(ops);
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(reg.status().message());
  EXPECT_THAT(msg, HasSubstr("GPU memory on GPU 3 (0000:9a:00.0) cannot be registered with "
                             "mlx5_7 (no fallback to host memory)"));
  EXPECT_THAT(msg, HasSubstr("tried dma-buf: ibv_reg_dmabuf_mr on mlx5_7"));
  EXPECT_THAT(msg, HasSubstr("does not import dma-bufs"));
  EXPECT_THAT(msg, HasSubstr("tried peermem: ibv_reg_mr of the device pointer on mlx5_7"));
  EXPECT_THAT(msg, HasSubstr("nvidia-peermem is not loaded"));
  EXPECT_THAT(msg, HasSubstr("Remedy: use rdma-core >= 34"));
  EXPECT_THAT(msg, HasSubstr("`modprobe nvidia-peermem`"));
}

TEST(RegisterGpu, PeermemLoadedButFailingPointsAtDmesg) {
  FakeOps ops;
  ops.export_status = absl::UnimplementedError("driver lacks cuMemGetHandleForAddressRange");
  ops.peermem_errno = EINVAL;
  ops.peermem_loaded = true;
  auto reg = RegisterGpuWith(ops);
  ASSERT_FALSE(reg.ok());
  const std::string msg(reg.status().message());
  EXPECT_THAT(msg, HasSubstr("tried dma-buf: driver lacks cuMemGetHandleForAddressRange"));
  EXPECT_THAT(msg, HasSubstr("although nvidia_peermem is loaded"));
  EXPECT_THAT(msg, HasSubstr("check dmesg"));
  EXPECT_THAT(msg, Not(HasSubstr("modprobe")));
}

}  // namespace
}  // namespace gdrbench::agent::memory
