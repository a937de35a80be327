#include "agent/memory/gpu_pattern.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::memory {

#if GDRBENCH_HAVE_CUDA_H

namespace {
constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlocksPerSm = 8;
}  // namespace

absl::StatusOr<std::shared_ptr<GpuPattern>> GpuPattern::ForContext(
    std::shared_ptr<cuda::GpuContext> ctx) {
  // One instance per GPU for the life of the process, like the primary context.
  static std::mutex mu;
  static auto* cache = new std::map<int, std::shared_ptr<GpuPattern>>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(ctx->ordinal()); it != cache->end()) return it->second;

  std::shared_ptr<GpuPattern> p(new GpuPattern());
  const cuda::CudaApi& api = ctx->api();
  const cuda::CudaDriver& driver = ctx->driver();
  GDR_ASSIGN_OR_RETURN(p->module_, cuda::Module::Load(ctx, kPatternKernelsPtx, kPatternKernelsMissing));
  GDR_ASSIGN_OR_RETURN(p->fill_, p->module_->Function("gdr_pattern_fill"));
  GDR_ASSIGN_OR_RETURN(p->check_, p->module_->Function("gdr_pattern_check"));
  cuda::ScopedCurrent current(*ctx);
  GDR_RETURN_IF_ERROR(current.status());
  CUdevice dev;
  int sms = 0;
  if (api.cuDeviceGet(&dev, ctx->ordinal()) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) !=
          CUDA_SUCCESS ||
      sms <= 0) {
    sms = 16;  // only sizes the grid; the grid-stride loop is correct for any
  }
  p->max_blocks_ = static_cast<unsigned>(sms) * kBlocksPerSm;
  if (CUresult r = api.cuMemAlloc(&p->first_bad_, sizeof(unsigned long long)); r != CUDA_SUCCESS) {
    return driver.ToStatus(r, "cuMemAlloc of the pattern check's result word");
  }
  spdlog::debug("memory: pattern kernels loaded on GPU {} ({} SMs)", ctx->ordinal(), sms);
  (*cache)[ctx->ordinal()] = p;
  return p;
}

GpuPattern::~GpuPattern() {
  if (first_bad_ != 0 && module_ != nullptr) {
    cuda::ScopedCurrent current(module_->context());
    module_->context().api().cuMemFree(first_bad_);
  }
}

cuda::LaunchShape GpuPattern::Shape(size_t length) const {
  const size_t pairs = length / 16 + 1;
  size_t blocks = (pairs + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > max_blocks_) blocks = max_blocks_;
  if (blocks == 0) blocks = 1;
  return cuda::LaunchShape{static_cast<unsigned>(blocks), kThreadsPerBlock};
}

absl::Status GpuPattern::Fill(CUdeviceptr base, size_t offset, size_t length,
                              uint64_t seed) const {
  if (length == 0) return absl::OkStatus();
  unsigned long long b = base, o = offset, l = length, s = seed;
  void* args[] = {&b, &o, &l, &s};
  return module_->LaunchAndWait(fill_, Shape(length), args, "gdr_pattern_fill");
}

absl::StatusOr<int64_t> GpuPattern::Check(CUdeviceptr base, size_t offset, size_t length,
                                          uint64_t seed) const {
  if (length == 0) return -1;
  std::lock_guard<std::mutex> lock(check_mu_);
  const cuda::GpuContext& ctx = module_->context();
  const cuda::CudaApi& api = ctx.api();
  {
    cuda::ScopedCurrent current(ctx);
    GDR_RETURN_IF_ERROR(current.status());
    if (CUresult r = api.cuMemsetD8(first_bad_, 0xFF, sizeof(unsigned long long));
        r != CUDA_SUCCESS) {
      return ctx.driver().ToStatus(r, "cuMemsetD8 of the pattern check's result word");
    }
  }
  unsigned long long b = base, o = offset, l = length, s = seed, f = first_bad_;
  void* args[] = {&b, &o, &l, &s, &f};
  GDR_RETURN_IF_ERROR(module_->LaunchAndWait(check_, Shape(length), args, "gdr_pattern_check"));
  unsigned long long first_bad = 0;
  cuda::ScopedCurrent current(ctx);
  GDR_RETURN_IF_ERROR(current.status());
  if (CUresult r = api.cuMemcpyDtoH(&first_bad, first_bad_, sizeof(first_bad));
      r != CUDA_SUCCESS) {
    return ctx.driver().ToStatus(r, "cuMemcpyDtoH of the pattern check's result");
  }
  return first_bad == ~0ull ? int64_t{-1} : static_cast<int64_t>(first_bad);
}

#endif  // GDRBENCH_HAVE_CUDA_H

}  // namespace gdrbench::agent::memory
