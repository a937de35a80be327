// The data path of a simulated fleet member (test-only): the out-of-band
// sessions of agent/bench/oob_session.h over the unit tests' fake NIC
// (tests/unit/agent/bench/fake_nic.h), every member's NICs on one FakeFabric
// shared by the whole fleet, so a test between two members runs the same
// session code as between two real agents, with the QP exchange through the
// controller's gRPC.
//
// A member's NICs are the captured tree's (their names, rates, firmware),
// each given a LID and a GID of its own (MemberDevice): the fabric checks a
// QP's destination against its peer's address like a real RC QP. The wire
// runs at the port's active rate on the fake NIC's simulated clock: a test
// takes the CPU time of its loop, not the wire time it reports.
//
// Thread safety: OpenTarget/OpenInitiator/ResolveDevice from any thread.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/bench/oob_session.h"
#include "agent/bench/session.h"
#include "common/status.h"
#include "tests/unit/agent/bench/fake_nic.h"

namespace gdrbench::testing::fleet {

// Unicast LIDs end at 0xBFFF: members x NICs must stay below it.
inline constexpr uint32_t kMaxLid = 0xBFFF;

// `device` (from the captured tree) as member `member`'s NIC number `nic`:
// port 1 ACTIVE with LID 1 + member x nics + nic, GID index 0 the link-local
// GID of that LID, and the tree's MTU or 4096 where the tree has none; no
// NUMA node (host buffers are this host's).
inline agent::verbs::DeviceInfo MemberDevice(const agent::verbs::DeviceInfo& device, uint32_t member,
                                             uint32_t nic, uint32_t nics) {
  agent::verbs::DeviceInfo d = device;
  d.numa_node = -1;  // buffers in this host's memory: the tree's NUMA nodes need not exist here
  if (d.ports.empty()) d.ports.emplace_back();
  agent::verbs::PortInfo& p = d.ports.front();
  p.port_num = 1;
  p.state = agent::verbs::PortState::kActive;
  p.lid = 1 + member * nics + nic;
  if (p.active_mtu_bytes == 0) p.active_mtu_bytes = 4096;
  char gid[48];
  std::snprintf(gid, sizeof(gid), "fe80:0000:0000:0000:0000:0000:%04x:%04x", member, nic);
  p.gids = {agent::verbs::GidEntry{.index = 0, .gid = gid, .type = "IB", .netdev = ""}};
  p.ip_addresses.clear();  // no IPoIB: out of band, as the fake fabric has no rdma_cm
  p.ip_cidrs.clear();
  return d;
}

class SimSessionFactory final : public agent::bench::SessionFactory {
 public:
  // `devices`: the member's NICs (MemberDevice's). `fabric` outlives this.
  SimSessionFactory(agent::bench::testing::FakeFabric* fabric, std::vector<agent::verbs::DeviceInfo> devices)
      : fabric_(fabric), devices_(std::move(devices)) {}

  absl::StatusOr<agent::verbs::DeviceInfo> ResolveDevice(const std::string& name) override {
    std::string present;
    for (const auto& d : devices_) {
      if (d.name == name) return d;
      present += (present.empty() ? "" : ", ") + d.name;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("RDMA device '", name, "' is absent (present: ", present, ")"));
  }
  absl::StatusOr<std::unique_ptr<agent::bench::TargetSession>> OpenTarget(
      const agent::bench::TargetSpec& spec) override {
    if (agent::bench::ResolveCmMode(spec.cm, spec.device.ports.front()) != agent::bench::CmMode::kOob) {
      return absl::UnimplementedError("a simulated fleet member has no rdma_cm (use --cm oob)");
    }
    GDR_ASSIGN_OR_RETURN(
        auto t, agent::bench::OobTarget<agent::bench::testing::FakeNic>::Open(MakeNic(spec.device), spec));
    return std::unique_ptr<agent::bench::TargetSession>(std::move(t));
  }
  absl::StatusOr<std::unique_ptr<agent::bench::InitiatorSession>> OpenInitiator(
      const agent::bench::InitiatorSpec& spec) override {
    if (spec.cm != agent::bench::CmMode::kOob) {
      return absl::UnimplementedError("a simulated fleet member has no rdma_cm (use --cm oob)");
    }
    GDR_ASSIGN_OR_RETURN(auto in, agent::bench::OobInitiator<agent::bench::testing::FakeNic>::Open(
                                      MakeNic(spec.device), spec));
    return std::unique_ptr<agent::bench::InitiatorSession>(std::move(in));
  }

 private:
  std::unique_ptr<agent::bench::testing::FakeNic> MakeNic(const agent::verbs::DeviceInfo& device) {
    const agent::verbs::PortInfo& port = device.ports.front();
    auto nic = std::make_unique<agent::bench::testing::FakeNic>(fabric_, port);
    nic->device_name = device.name;
    nic->wire_gbps = port.active_rate_gbps;
    nic->idle_sleep = std::chrono::milliseconds(1);  // as the real NIC's loop sleeps (verbs_ops.h)
    return nic;
  }

  agent::bench::testing::FakeFabric* fabric_;
  const std::vector<agent::verbs::DeviceInfo> devices_;
};

}  // namespace gdrbench::testing::fleet
