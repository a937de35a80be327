// peermem_load_errors: the kernel log's record of nvidia-peermem (or
// nv_peer_mem) failing to load because it was built against another ib_core
// than the one running: the driver/OFED mismatch. The module loader's own
// wording (kernel/module: "%s: Unknown symbol %s (err %d)", "%s: disagrees
// about version of symbol %s"), e.g. from public reports:
//   nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client
//   nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)
// Read live from /dev/kmsg, offline from the capture's copy of the log.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/preflight/checks.h"
#include "agent/preflight/peermem.h"

namespace gdrbench::agent::preflight {
namespace {

bool IsPeermemLoadFailure(const std::string& msg) {
  bool ours = absl::StartsWith(msg, "nvidia_peermem: ") || absl::StartsWith(msg, "nv_peer_mem: ");
  return ours && (absl::StrContains(msg, "Unknown symbol") ||
                  absl::StrContains(msg, "disagrees about version of symbol"));
}

}  // namespace

CheckResult CheckPeermemLoadErrors(Context& ctx) {
  const char* kId = "peermem_load_errors";
  if (ctx.kernel_log() == nullptr) return Result(kId, Status::kSkip, "no kernel log in this run");
  if (!HasNvidiaGpu(ctx)) return Result(kId, Status::kSkip, "no NVIDIA GPU on the PCI bus");
  std::string source = ctx.kernel_log()->source();
  auto messages = ctx.kernel_log()->Messages();
  if (!messages.ok()) {
    return Result(kId, Status::kSkip, absl::StrCat("cannot read the kernel log: ", messages.status().message()));
  }
  if (messages->empty()) {
    // An empty log (cleared with dmesg -c, or an empty capture) holds no evidence either way.
    return Result(kId, Status::kWarn,
                  absl::StrCat("cannot tell whether nvidia-peermem failed to load: the kernel log (", source,
                               ") is empty"),
                  "read the kernel log on the node (dmesg | grep -i peermem) or from the journal (journalctl -k)")
        .Saw(source, "0 messages");
  }
  std::vector<std::string> failures;
  for (const auto& m : *messages) {
    if (IsPeermemLoadFailure(m)) failures.push_back(m);
  }
  CheckResult r;
  r.id = kId;
  if (failures.empty()) {
    r.status = Status::kPass;
    r.summary = absl::StrCat("no nvidia-peermem load failure in ", messages->size(), " kernel log messages");
    r.Saw(source, absl::StrCat(messages->size(), " messages, none from a failed nvidia-peermem load"));
    return r;
  }
  size_t shown = 0;
  for (const auto& f : failures) {
    if (++shown > 4) break;
    r.Saw(source, f);
  }
  if (failures.size() > 4) r.Saw(source, absl::StrCat("... ", failures.size() - 4, " more"));
  bool loaded = ctx.ModuleLoaded("nvidia_peermem");
  for (const auto& m : PeermemMarkers()) loaded = loaded || ctx.fs().Exists(m);
  r.status = loaded ? Status::kWarn : Status::kFail;
  r.summary = absl::StrCat(
      failures.size(), " nvidia-peermem load failure(s) in the kernel log (unknown or mismatched "
      "ib_core symbols: the NVIDIA driver and the RDMA stack/OFED come from different builds)",
      loaded ? "; it is loaded now, so a later load worked" : "; it is not loaded");
  r.remediation =
      "rebuild nvidia-peermem against the running RDMA stack: install MLNX_OFED/DOCA-OFED first, then "
      "reinstall the NVIDIA driver (or dkms remove/install its module) so nvidia-peermem compiles "
      "against that ib_core; with inbox rdma-core, ib_core must export ib_register_peer_memory_client "
      "(grep it in /proc/kallsyms), otherwise use dma-buf (open kernel modules); then modprobe nvidia-peermem";
  return r;
}

}  // namespace gdrbench::agent::preflight
