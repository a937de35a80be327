// container_devices: the device nodes and limits GPUDirect RDMA needs in the
// agent's (or the job's) mount and resource namespace: /dev/infiniband/uverbs*
// and rdma_cm for every RDMA device, /dev/nvidia* for the GPUs, and enough
// locked memory (or CAP_IPC_LOCK) to pin buffers.
#include <cstdint>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

bool InContainer(const FsRoot& fs, std::string* why) {
  for (const char* marker : {"/.dockerenv", "/run/.containerenv"}) {
    if (fs.Exists(marker)) {
      *why = marker;
      return true;
    }
  }
  if (auto cg = fs.ReadFile("/proc/1/cgroup"); cg.ok()) {
    for (const char* k : {"docker", "kubepods", "containerd", "libpod", "lxc"}) {
      if (absl::StrContains(*cg, k)) {
        *why = absl::StrCat("/proc/1/cgroup mentions ", k);
        return true;
      }
    }
  }
  return false;
}

// CAP_IPC_LOCK (bit 14) in CapEff of /proc/self/status.
bool HasIpcLock(const FsRoot& fs) {
  auto st = fs.ReadFile("/proc/self/status");
  if (!st.ok()) return false;
  for (absl::string_view line : absl::StrSplit(*st, '\n')) {
    if (absl::ConsumePrefix(&line, "CapEff:")) {
      uint64_t caps = 0;
      if (absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &caps)) return (caps >> 14) & 1;
    }
  }
  return false;
}

// The agent's locked-memory limit from /proc/self/limits ("Max locked memory
// 8388608 8388608 bytes", or "unlimited"; proc(5)), recorded in `r`. Sets
// `issue` when it is below 1 GiB without CAP_IPC_LOCK; false when the limit
// cannot be told (no readable line, an unparseable value).
bool ReadMemlock(Context& ctx, CheckResult& r, std::string* issue) {
  const FsRoot& fs = ctx.fs();
  auto limits = fs.ReadFile("/proc/self/limits");
  if (!limits.ok()) {
    r.Saw(ctx.Where("/proc/self/limits"), "not readable");
    return false;
  }
  for (absl::string_view line : absl::StrSplit(*limits, '\n')) {
    if (!absl::StartsWith(line, "Max locked memory")) continue;
    std::vector<absl::string_view> f = absl::StrSplit(line.substr(17), ' ', absl::SkipEmpty());
    std::string soft = f.empty() ? "?" : std::string(f[0]);
    bool ipc_lock = HasIpcLock(fs);
    r.Saw(ctx.Where("/proc/self/limits"),
          absl::StrCat("memlock soft limit ", soft, ipc_lock ? " (CAP_IPC_LOCK held: not enforced)" : ""));
    uint64_t bytes = 0;
    bool numeric = absl::SimpleAtoi(soft, &bytes);
    if (soft != "unlimited" && !ipc_lock && numeric && bytes < (uint64_t{1} << 30)) {
      *issue = absl::StrCat("memlock limited to ", bytes / 1024, " KiB");
    }
    return soft == "unlimited" || ipc_lock || numeric;
  }
  r.Saw(ctx.Where("/proc/self/limits"), "no 'Max locked memory' line");
  return false;
}

}  // namespace

CheckResult CheckContainerDevices(Context& ctx) {
  const char* kId = "container_devices";
  const FsRoot& fs = ctx.fs();
  CheckResult r;
  r.id = kId;
  std::string why;
  bool container = InContainer(fs, &why);
  r.Saw("container", container ? absl::StrCat("yes (", why, ")") : "no");
  std::vector<std::string> missing;

  auto ibdevs = fs.ListDir("/sys/class/infiniband");
  size_t n_ib = ibdevs.ok() ? ibdevs->size() : 0;
  if (n_ib > 0) {
    auto dev = fs.ListDir("/dev/infiniband");
    size_t uverbs = 0;
    if (dev.ok()) {
      for (const auto& n : *dev) uverbs += absl::StartsWith(n, "uverbs") ? 1 : 0;
    }
    r.Saw(ctx.Where("/dev/infiniband"),
          dev.ok() ? absl::StrCat(absl::StrJoin(*dev, " "), dev->empty() ? "(empty)" : "") : "absent");
    if (uverbs < n_ib) {
      missing.push_back(absl::StrCat("/dev/infiniband/uverbs* (", uverbs, " for ", n_ib, " RDMA devices)"));
    }
    if (!fs.Exists("/dev/infiniband/rdma_cm")) missing.push_back("/dev/infiniband/rdma_cm");
  }
  if (HasNvidiaGpu(ctx)) {
    for (const char* node : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"}) {
      bool present = fs.Exists(node);
      r.Saw(ctx.Where(node), present ? "present" : "absent");
      if (!present) missing.push_back(node);
    }
  }
  std::string memlock_issue;
  bool memlock_known = ReadMemlock(ctx, r, &memlock_issue);
  if (!missing.empty()) {
    r.status = Status::kFail;
    r.summary = absl::StrCat("missing device nodes: ", absl::StrJoin(missing, ", "),
                             memlock_issue.empty() ? "" : "; " + memlock_issue);
    r.remediation =
        container
            ? "pass the devices into the container: docker run --device=/dev/infiniband "
              "--gpus all --ulimit memlock=-1 --cap-add=IPC_LOCK; Kubernetes: the RDMA shared "
              "device plugin (rdma/...) and nvidia.com/gpu resources"
            : "load ib_uverbs and rdma_ucm (modprobe ib_uverbs rdma_ucm) and the NVIDIA driver "
              "(nvidia-modprobe -u -c=0 creates /dev/nvidia*)";
    return r;
  }
  if (!memlock_issue.empty()) {
    r.status = Status::kWarn;
    r.summary = absl::StrCat(memlock_issue, ": large registrations will fail with ENOMEM");
    r.remediation =
        "raise the limit: ulimit -l unlimited (systemd: LimitMEMLOCK=infinity; "
        "/etc/security/limits.d: * - memlock unlimited; docker: --ulimit memlock=-1) or grant "
        "CAP_IPC_LOCK";
    return r;
  }
  if (!memlock_known) {
    // Unknown is not "sufficient": say so rather than PASS.
    r.status = Status::kWarn;
    r.summary = absl::StrCat(n_ib == 0 && !HasNvidiaGpu(ctx) ? "no RDMA or GPU devices to expose"
                                                             : "device nodes present",
                             "; cannot tell the memlock limit (no readable 'Max locked memory' line in "
                             "/proc/self/limits)");
    r.remediation = "read it where the agent runs: ulimit -l (unlimited, or CAP_IPC_LOCK, is what GPUDirect wants)";
    return r;
  }
  r.status = Status::kPass;
  r.summary = n_ib == 0 && !HasNvidiaGpu(ctx) ? "no RDMA or GPU devices to expose; memlock sufficient"
                                              : "device nodes present and memlock sufficient";
  return r;
}

}  // namespace gdrbench::agent::preflight
