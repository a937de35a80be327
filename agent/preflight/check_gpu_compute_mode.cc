// gpu_compute_mode: a GPU in "prohibited" mode gives no context to anyone;
// in "exclusive_process" only one process may hold it, so the agent and a
// running job cannot share it.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {

CheckResult CheckGpuComputeMode(Context& ctx) {
  const char* kId = "gpu_compute_mode";
  if (!CudaWorthAsking(ctx)) return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  const auto& gpus = ctx.CudaGpus();
  if (!gpus.ok()) {
    if (!HasNvidiaGpu(ctx)) return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
    return Result(kId, Status::kSkip,
                  absl::StrCat("compute modes need the live CUDA driver: ", gpus.status().message()));
  }
  if (gpus->empty()) return Result(kId, Status::kSkip, "the CUDA driver sees no GPU");
  CheckResult r;
  r.id = kId;
  std::vector<std::string> prohibited, exclusive;
  for (const auto& g : *gpus) {
    r.Saw(absl::StrCat("cuDeviceGetAttribute(COMPUTE_MODE, GPU ", g.device.index, ")"), g.device.compute_mode);
    if (g.device.compute_mode == "prohibited") prohibited.push_back(absl::StrCat(g.device.index));
    if (g.device.compute_mode == "exclusive_process") exclusive.push_back(absl::StrCat(g.device.index));
  }
  if (!prohibited.empty()) {
    r.status = Status::kFail;
    r.summary = absl::StrCat("GPU(s) ", absl::StrJoin(prohibited, ","), " in prohibited compute mode");
    r.remediation = "nvidia-smi -i <gpu> -c DEFAULT (as root)";
  } else if (!exclusive.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("GPU(s) ", absl::StrJoin(exclusive, ","),
                             " in exclusive-process mode: a test fails while another process holds it");
    r.remediation = "run tests when the GPU is idle, or nvidia-smi -i <gpu> -c DEFAULT";
  } else {
    r.status = Status::kPass;
    r.summary = absl::StrCat("all ", gpus->size(), " GPU(s) in default compute mode");
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
