// gpu_compute_mode: a GPU in "prohibited" mode gives no context to anyone;
// in "exclusive_process" only one process may hold it, so the agent and a
// running job cannot share it.
#include "absl/strings/match.h"
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
  std::vector<std::string> prohibited, exclusive, unknown;
  for (const auto& g : *gpus) {
    const std::string& mode = g.device.compute_mode;
    r.Saw(absl::StrCat("cuDeviceGetAttribute(COMPUTE_MODE, GPU ", g.device.index, ")"),
          mode.empty() ? "not readable" : mode);
    if (mode == "prohibited") prohibited.push_back(absl::StrCat(g.device.index));
    if (mode == "exclusive_process") exclusive.push_back(absl::StrCat(g.device.index));
    // Empty: the attribute could not be read; "mode N": a value this build does not know.
    if (mode.empty() || absl::StartsWith(mode, "mode ")) unknown.push_back(absl::StrCat(g.device.index));
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
  } else if (!unknown.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat("cannot tell the compute mode of GPU(s) ", absl::StrJoin(unknown, ","));
    r.remediation = "nvidia-smi -q -d COMPUTE (Compute Mode must be Default)";
  } else {
    r.status = Status::kPass;
    r.summary = absl::StrCat("all ", gpus->size(), " GPU(s) in default compute mode");
  }
  return r;
}

}  // namespace gdrbench::agent::preflight
