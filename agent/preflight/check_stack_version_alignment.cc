// stack_version_alignment: driver, CUDA, peermem and rdma-core/OFED come from
// one maintenance window. On one node: the user-space libcuda and
// nvidia-peermem must match the loaded kernel module (a partial upgrade gives
// "Driver/library version mismatch"); every pinned expectation must hold.
// HCA firmware (fw_ver): NICs of one firmware family (its first number, e.g.
// 28 for ConnectX-7, 22 for ConnectX-6 Dx) run one version, the pinned one
// when pinned; a mismatch FAILs on GPU rails, WARNs on other NICs.
// Across the fleet the controller compares the versions this check reports.
#include <map>
#include <set>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"

namespace gdrbench::agent::preflight {
namespace {

// "libcuda.so.580.95.05" in the usual library directories -> "580.95.05".
std::string LibcudaVersion(const FsRoot& fs, std::string* where) {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                          "/usr/lib", "/usr/local/nvidia/lib64"}) {
    auto names = fs.ListDir(dir);
    if (!names.ok()) continue;
    for (const auto& n : *names) {
      if (absl::StartsWith(n, "libcuda.so.") && n != "libcuda.so.1" &&
          std::count(n.begin(), n.end(), '.') >= 3) {
        *where = absl::StrCat(dir, "/", n);
        return n.substr(std::string("libcuda.so.").size());
      }
    }
  }
  return "";
}

std::string OfedVersion(const FsRoot& fs, std::string* where) {
  for (const char* path : {"/usr/bin/ofed_info", "/usr/sbin/ofed_info"}) {
    auto content = fs.ReadFile(path);
    if (!content.ok()) continue;
    static const std::regex kOfed(R"((MLNX_OFED_LINUX|OFED-internal|DOCA[A-Za-z_]*)-([0-9][0-9A-Za-z.\-]*[0-9]))");
    std::smatch m;
    if (std::regex_search(*content, m, kOfed)) {
      *where = path;
      return m[0];
    }
  }
  return "";
}

// "580" pins a branch, "580.95.05" one release.
bool Matches(const std::string& pinned, const std::string& observed) {
  return observed == pinned || absl::StartsWith(observed, pinned + ".") ||
         absl::StartsWith(observed, pinned + "-");
}

// "28.39.1002" -> "28": the firmware family (one per HCA generation).
std::string FirmwareFamily(const std::string& fw) { return fw.substr(0, fw.find('.')); }

// One firmware per family, and the pinned one (pins apply to their family).
void CheckFirmware(Context& ctx, CheckResult& r, std::vector<std::string>& problems,
                   std::vector<std::string>& warnings, std::vector<std::string>& fixes) {
  const auto& devs = ctx.RdmaDevices();
  if (!devs.ok()) return;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> families;  // family -> fw -> NICs
  for (const auto& d : *devs) {
    if (d.firmware_version.empty()) continue;
    r.Saw(ctx.Where(absl::StrCat("/sys/class/infiniband/", d.name, "/fw_ver")), d.firmware_version);
    families[FirmwareFamily(d.firmware_version)][d.firmware_version].push_back(d.name);
  }
  const std::string& pin = ctx.expect().hca_firmware;
  bool flash = false;
  for (const auto& [family, versions] : families) {
    bool pinned = !pin.empty() && FirmwareFamily(pin) == family;
    if (versions.size() < 2 && (!pinned || versions.begin()->first == pin)) continue;
    std::vector<std::string> parts;
    bool strict = false;
    for (const auto& [fw, nics] : versions) {
      if (pinned && fw == pin) continue;
      parts.push_back(absl::StrCat(absl::StrJoin(nics, ","), " ", fw));
      for (const auto& n : nics) strict = strict || StrictNic(ctx, n);
    }
    std::string what = pinned ? absl::StrCat("HCA firmware ", absl::StrJoin(parts, "; "), ", pinned ", pin)
                              : absl::StrCat("HCA firmware differs within family ", family, ": ",
                                             absl::StrJoin(parts, "; "));
    (strict ? problems : warnings).push_back(what);
    flash = true;
  }
  if (flash) {
    fixes.push_back("flash the NICs of one model to one firmware (mlxfwmanager -u -i <image>, or "
                    "mstflint -d <bdf> -i <image> burn) and reset them (mlxfwreset) in the maintenance window");
  }
}

// The versions of the node's stack; empty when not found.
struct StackVersions {
  std::string kmod;       // the NVIDIA kernel module
  std::string cuda;       // cuDriverGetVersion
  std::string rdma_core;  // libibverbs1's package
  std::string ofed;
};

// Reads the stack's versions into the evidence; libcuda and nvidia_peermem
// must match the kernel module.
StackVersions ReadVersions(Context& ctx, CheckResult& r, std::vector<std::string>& problems,
                           std::vector<std::string>& fixes) {
  StackVersions v;
  v.kmod = ctx.Nvidia().version;
  const std::string& kmod = v.kmod;
  r.Saw(ctx.Where("/proc/driver/nvidia/version"), kmod.empty() ? "absent" : kmod);
  std::string libcuda_path;
  std::string libcuda = kmod.empty() ? "" : LibcudaVersion(ctx.fs(), &libcuda_path);
  if (!libcuda.empty()) r.Saw(ctx.Where(libcuda_path), libcuda);
  if (!kmod.empty() && !libcuda.empty() && kmod != libcuda) {
    problems.push_back(absl::StrCat("user-space libcuda ", libcuda, " != kernel module ", kmod));
    fixes.push_back("reboot (or unload and reload the nvidia modules) so the kernel module matches the installed driver");
  }
  auto peermem = ctx.fs().ReadLine("/sys/module/nvidia_peermem/version");
  if (peermem.ok()) {
    r.Saw(ctx.Where("/sys/module/nvidia_peermem/version"), *peermem);
    if (!kmod.empty() && *peermem != kmod) {
      problems.push_back(absl::StrCat("nvidia_peermem ", *peermem, " != driver ", kmod));
      fixes.push_back("rmmod nvidia_peermem && modprobe nvidia-peermem (it must come from the same driver package)");
    }
  }
  if (auto cuda = CudaWorthAsking(ctx) ? ctx.cuda().DriverVersion()
                                       : absl::StatusOr<std::string>(absl::NotFoundError(""));
      cuda.ok()) {
    v.cuda = *cuda;
    r.Saw("cuDriverGetVersion", v.cuda);
  }
  v.rdma_core = verbs::RdmaCoreVersion(ctx.fs());
  if (!v.rdma_core.empty()) {
    r.Saw(ctx.Where("/var/lib/dpkg/status"), absl::StrCat("rdma-core (libibverbs1) ", v.rdma_core));
  }
  std::string ofed_path;
  v.ofed = OfedVersion(ctx.fs(), &ofed_path);
  if (!v.ofed.empty()) r.Saw(ctx.Where(ofed_path), v.ofed);
  return v;
}

// Each pinned version (Expectations) against the one found.
void CheckPins(const Expectations& e, const StackVersions& v, std::vector<std::string>& problems,
               std::vector<std::string>& fixes) {
  auto pin = [&](const char* what, const std::string& pinned, const std::string& observed) {
    if (pinned.empty()) return;
    if (observed.empty() || !Matches(pinned, observed)) {
      problems.push_back(absl::StrCat(what, " is ", observed.empty() ? "absent" : observed,
                                      ", pinned ", pinned));
      fixes.push_back(absl::StrCat("install ", what, " ", pinned, " (the fleet's maintenance-window version)"));
    }
  };
  pin("NVIDIA driver", e.nvidia_driver, v.kmod);
  pin("CUDA driver", e.cuda_driver, v.cuda);
  pin("rdma-core", e.rdma_core, v.rdma_core);
  pin("OFED", e.ofed, v.ofed);
}

// A passing check's summary: every version found, and whether any was pinned.
std::string PassSummary(Context& ctx, const StackVersions& v) {
  std::vector<std::string> parts;
  if (!v.kmod.empty()) parts.push_back("driver " + v.kmod);
  if (!v.cuda.empty()) parts.push_back("CUDA " + v.cuda);
  if (!v.rdma_core.empty()) parts.push_back("rdma-core " + v.rdma_core);
  if (!v.ofed.empty()) parts.push_back(v.ofed);
  if (const auto& devs = ctx.RdmaDevices(); devs.ok()) {
    std::set<std::string> fws;
    for (const auto& d : *devs) {
      if (!d.firmware_version.empty()) fws.insert(d.firmware_version);
    }
    if (!fws.empty()) parts.push_back(absl::StrCat("HCA firmware ", absl::StrJoin(fws, "/")));
  }
  const Expectations& e = ctx.expect();
  return absl::StrCat(absl::StrJoin(parts, ", "), e.nvidia_driver.empty() && e.cuda_driver.empty() &&
                                                          e.rdma_core.empty() && e.ofed.empty() &&
                                                          e.hca_firmware.empty()
                                                      ? " (consistent; nothing pinned)"
                                                      : " (match the pinned versions)");
}

}  // namespace

CheckResult CheckStackVersionAlignment(Context& ctx) {
  const char* kId = "stack_version_alignment";
  CheckResult r;
  r.id = kId;
  std::vector<std::string> problems;
  std::vector<std::string> fixes;
  const StackVersions v = ReadVersions(ctx, r, problems, fixes);
  std::vector<std::string> warnings;
  CheckFirmware(ctx, r, problems, warnings, fixes);
  CheckPins(ctx.expect(), v, problems, fixes);

  if (!problems.empty() || !warnings.empty()) {
    r.status = problems.empty() ? Status::kWarn : Status::kFail;
    problems.insert(problems.end(), warnings.begin(), warnings.end());
    r.summary = absl::StrJoin(problems, "; ");
    r.remediation = absl::StrJoin(fixes, "; ");
    return r;
  }
  if (v.kmod.empty() && v.rdma_core.empty() && v.ofed.empty() && v.cuda.empty()) {
    r.status = Status::kSkip;
    r.summary = "no NVIDIA driver, CUDA, rdma-core or OFED version found to compare";
    return r;
  }
  r.status = Status::kPass;
  r.summary = PassSummary(ctx, v);
  return r;
}

}  // namespace gdrbench::agent::preflight
