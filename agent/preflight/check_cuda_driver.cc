// cuda_driver: libcuda loads, cuInit succeeds, and cuDriverGetVersion answers.
#include "absl/strings/str_cat.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckCudaDriver(Context& ctx) {
  const char* kId = "cuda_driver";
  if (!CudaWorthAsking(ctx)) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus and no NVIDIA driver");
  }
  auto version = ctx.cuda().DriverVersion();
  if (absl::IsUnavailable(version.status())) {
    return Result(kId, Status::kSkip, absl::StrCat("needs the live CUDA driver: ", version.status().message()));
  }
  if (!HasNvidiaGpu(ctx) && !version.ok()) {
    return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus")
        .Saw("cuDriverGetVersion", std::string(version.status().message()));
  }
  if (!version.ok()) {
    return Result(kId, Status::kFail,
                  absl::StrCat("the CUDA driver does not answer: ", version.status().message()),
                  "install the driver's user-space libraries (libcuda.so.1, e.g. "
                  "libnvidia-compute-<ver>) matching the kernel module; in containers use the "
                  "NVIDIA container toolkit (--gpus all) so libcuda is mounted")
        .Saw("dlopen(libcuda.so.1) + cuInit(0)", std::string(version.status().message()));
  }
  CheckResult r = Result(kId, Status::kPass, absl::StrCat("CUDA driver API ", *version));
  r.Saw("cuDriverGetVersion", *version);
  const auto& gpus = ctx.CudaGpus();
  if (gpus.ok()) {
    r.Saw("cuDeviceGetCount", absl::StrCat(gpus->size(), " GPU(s)"));
    if (gpus->empty() && HasNvidiaGpu(ctx)) {
      r.status = Status::kFail;
      r.summary = "the CUDA driver answers but sees no GPU although one is on the PCI bus";
      r.remediation = "check CUDA_VISIBLE_DEVICES and the container's --gpus; nvidia-smi should list the GPU";
    }
  } else {
    r.Saw("cuDeviceGetCount", std::string(gpus.status().message()));
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
