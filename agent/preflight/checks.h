// The preflight checks, one per check_<id>.cc, and their registry.
//
// Every check reads through Context (FsRoot + hardware interfaces), never
// throws, and says SKIP (with the reason) when its subject is absent or needs
// live hardware it cannot reach, FAIL/WARN with evidence and a remediation
// when something is wrong.
#pragma once

#include <string>
#include <vector>

#include "agent/preflight/context.h"
#include "agent/preflight/results.h"

namespace gdrbench::agent::preflight {

using CheckFn = CheckResult (*)(Context&);

struct CheckDef {
  const char* id;
  const char* description;
  CheckFn run;
};

// Every check, in the order a report lists them.
const std::vector<CheckDef>& AllChecks();

CheckResult CheckGpuNicTopology(Context& ctx);
CheckResult CheckNvidiaDriver(Context& ctx);
CheckResult CheckCudaDriver(Context& ctx);
CheckResult CheckRdmaDevices(Context& ctx);
CheckResult CheckRdmaPortActive(Context& ctx);
CheckResult CheckPeermemLoaded(Context& ctx);
CheckResult CheckPeermemPersistent(Context& ctx);
CheckResult CheckDmabufSupported(Context& ctx);
CheckResult CheckGpuRegistrationProbe(Context& ctx);
CheckResult CheckStackVersionAlignment(Context& ctx);
CheckResult CheckSecureBoot(Context& ctx);
CheckResult CheckContainerDevices(Context& ctx);
CheckResult CheckGpuComputeMode(Context& ctx);
CheckResult CheckPcieLinkDegraded(Context& ctx);
CheckResult CheckPcieAcs(Context& ctx);
CheckResult CheckIommuMode(Context& ctx);
CheckResult CheckRoceGid(Context& ctx);
CheckResult CheckMtu(Context& ctx);
CheckResult CheckPeermemLoadErrors(Context& ctx);
CheckResult CheckLinkErrorCounters(Context& ctx);

// Helpers shared by the checks.
CheckResult Result(const char* id, Status status, std::string summary,
                   std::string remediation = "");
// Whether the node has an NVIDIA GPU on its PCI bus (reads the topology).
bool HasNvidiaGpu(Context& ctx);
// Whether the CUDA driver is worth asking: a GPU on the PCI bus or a loaded
// NVIDIA driver. Loading libcuda where neither exists only costs time.
bool CudaWorthAsking(Context& ctx);

// Whether a fault on RDMA device `nic` FAILs (a GPU rail, or a node without
// GPUs: topology::Topology::Strict) or only WARNs (not a GPU rail). True
// when the topology cannot be read.
bool StrictNic(Context& ctx, const std::string& nic);
// " (not a GPU rail: <why>)" for a lenient NIC, "" for a strict one.
std::string NotRailNote(Context& ctx, const std::string& nic);
// The worse of two statuses.
Status Worse(Status a, Status b);

// The remedy when Secure Boot refuses unsigned NVIDIA/peermem/OFED modules.
extern const char kMokRemedy[];

}  // namespace gdrbench::agent::preflight
