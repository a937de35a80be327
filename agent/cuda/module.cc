#include "agent/cuda/module.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::cuda {

#if GDRBENCH_HAVE_CUDA_H

absl::StatusOr<std::unique_ptr<Module>> Module::Load(std::shared_ptr<GpuContext> ctx,
                                                     const char* ptx,
                                                     absl::string_view why_empty) {
  if (ptx == nullptr || ptx[0] == '\0') {
    return absl::FailedPreconditionError(why_empty);
  }
  ScopedCurrent current(*ctx);
  if (!current.status().ok()) return current.status();
  CUmodule module = nullptr;
  if (CUresult r = ctx->api().cuModuleLoadData(&module, ptx); r != CUDA_SUCCESS) {
    absl::Status st =
        ctx->driver().ToStatus(r, absl::StrCat("cuModuleLoadData(GPU ", ctx->ordinal(), ")"));
    return absl::FailedPreconditionError(absl::StrCat(
        st.message(), "; the driver could not JIT the embedded PTX (driver older than the "
                      "nvcc that built gdrbench?)"));
  }
  return std::unique_ptr<Module>(new Module(std::move(ctx), module));
}

Module::~Module() {
  ScopedCurrent current(*ctx_);
  if (CUresult r = ctx_->api().cuModuleUnload(module_); r != CUDA_SUCCESS) {
    spdlog::error("cuda: {}", std::string(ctx_->driver().ToStatus(r, "cuModuleUnload").message()));
  }
}

absl::StatusOr<CUfunction> Module::Function(const char* name) const {
  CUfunction fn = nullptr;
  if (CUresult r = ctx_->api().cuModuleGetFunction(&fn, module_, name); r != CUDA_SUCCESS) {
    absl::Status st = ctx_->driver().ToStatus(r, absl::StrCat("cuModuleGetFunction(", name, ")"));
    return absl::NotFoundError(st.message());
  }
  return fn;
}

absl::Status Module::LaunchAndWait(CUfunction fn, LaunchShape shape, void** args,
                                   absl::string_view what) const {
  ScopedCurrent current(*ctx_);
  if (!current.status().ok()) return current.status();
  const CudaApi& api = ctx_->api();
  if (CUresult r = api.cuLaunchKernel(fn, shape.grid_x, 1, 1, shape.block_x, 1, 1, 0, nullptr,
                                      args, nullptr);
      r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat("cuLaunchKernel(", what, ")"));
  }
  if (CUresult r = api.cuCtxSynchronize(); r != CUDA_SUCCESS) {
    return ctx_->driver().ToStatus(r, absl::StrCat(what, " kernel"));
  }
  return absl::OkStatus();
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::cuda
