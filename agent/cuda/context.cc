#include "agent/cuda/context.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::cuda {

#if GDRBENCH_HAVE_CUDA_H

absl::StatusOr<std::shared_ptr<GpuContext>> GpuContext::Retain(const CudaDriver& driver,
                                                               int ordinal) {
  const CudaApi& api = driver.api();
  CUdevice device;
  if (CUresult r = api.cuDeviceGet(&device, ordinal); r != CUDA_SUCCESS) {
    return driver.ToStatus(r, absl::StrCat("cuDeviceGet(", ordinal, ")"));
  }
  CUcontext context = nullptr;
  if (CUresult r = api.cuDevicePrimaryCtxRetain(&context, device); r != CUDA_SUCCESS) {
    return driver.ToStatus(r, absl::StrCat("cuDevicePrimaryCtxRetain(GPU ", ordinal, ")"));
  }
  std::shared_ptr<GpuContext> ctx(new GpuContext(driver, ordinal, device, context));
  char bdf[64] = {};
  if (api.cuDeviceGetPCIBusId(bdf, sizeof(bdf), device) == CUDA_SUCCESS) {
    std::string s = absl::AsciiStrToLower(bdf);
    ctx->pci_bdf_ = s.size() == 16 ? s.substr(4) : s;
  }
  spdlog::debug("cuda: retained the primary context of GPU {} ({})", ordinal, ctx->pci_bdf_);
  return ctx;
}

GpuContext::~GpuContext() {
  if (CUresult r = api().cuDevicePrimaryCtxRelease(device_); r != CUDA_SUCCESS) {
    spdlog::error("cuda: {}", std::string(driver_.ToStatus(r, "cuDevicePrimaryCtxRelease").message()));
  }
}

ScopedCurrent::ScopedCurrent(const GpuContext& ctx) : ctx_(ctx) {
  if (CUresult r = ctx.api().cuCtxPushCurrent(ctx.context()); r != CUDA_SUCCESS) {
    status_ = ctx.driver().ToStatus(r, absl::StrCat("cuCtxPushCurrent(GPU ", ctx.ordinal(), ")"));
  }
}

ScopedCurrent::~ScopedCurrent() {
  if (!status_.ok()) return;
  CUcontext popped = nullptr;
  if (CUresult r = ctx_.api().cuCtxPopCurrent(&popped); r != CUDA_SUCCESS) {
    spdlog::error("cuda: {}", std::string(ctx_.driver().ToStatus(r, "cuCtxPopCurrent").message()));
  }
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::cuda
