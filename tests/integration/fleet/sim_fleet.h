// A simulated fleet (test-only): N agents served from one process, each the
// shipped AgentServer (its own listener, port, TLS or mTLS, admission and
// limits) over a SimMemberHandler (sim_member.h): real gRPC and TLS to the
// controller, the data path on the fake NIC, every member's NICs on one
// fake fabric. One process: N agent processes would each hold a gRPC
// runtime, and a 2-core host cannot start 1,024 of them.
//
// File descriptors: each member's listener sheds connections whose fd
// number passes the fds open when it started plus limits::kMaxConnections
// (listener.h). In one process every later member's listener counts against
// the first members, so Start reserves the numbers the controller's
// connections will take (kReservedPerMember per member) before it starts
// the members, and frees them once all serve. It raises RLIMIT_NOFILE to its
// hard limit first; FAILED_PRECONDITION when that cannot hold the fleet.
//
// Stop(i) is the member's death: its server stops (its port refuses), its
// calls in flight are cancelled, and its NICs die on the fabric (their
// peers' WRITEs end in a retry error), as when an agent's node goes.
//
// Thread safety: Stop from any thread; Start and the destructor from one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/service/server.h"
#include "tests/integration/fleet/sim_member.h"

namespace gdrbench::testing::fleet {

struct FleetConfig {
  uint32_t members = 0;
  std::string host = "127.0.0.1";  // every member listens on host:<a free port>
  std::string fs_root;             // the captured tree every member is
  rpc::ServerTlsConfig tls;        // every member's
  std::string name_prefix = "sim";
  // Member stop_member stops after it has opened stop_after_targets targets
  // (-1: none stops by itself).
  int stop_member = -1;
  uint32_t stop_after_targets = 0;
};

// fds kept free per member for the controller's connection to it (one
// channel per agent; slack for a reconnect).
inline constexpr int kReservedPerMember = 2;

class SimFleet {
 public:
  struct Member {
    std::string name;     // its host name and inventory name: <prefix><index, 4+ digits>
    std::string address;  // host:port
  };

  // INVALID_ARGUMENT for 0 members, more than the fabric's LIDs allow, or a
  // tree without RDMA devices; FAILED_PRECONDITION when the fd limit cannot
  // hold the fleet; a member's AgentServer::Start error naming the member.
  static absl::StatusOr<std::unique_ptr<SimFleet>> Start(const FleetConfig& config);
  ~SimFleet();

  const std::vector<Member>& members() const { return members_; }
  // The inventory (docs/inventory.md) naming every member; TLS comes from
  // the CLI's flags.
  std::string InventoryYaml() const;
  // Member i dies (above). Idempotent.
  void Stop(uint32_t i);
  bool stopped(uint32_t i) const { return stopped_[i]->load(); }

 private:
  SimFleet() = default;
  absl::Status StartMember(const FleetConfig& config, uint32_t i);

  agent::bench::testing::FakeFabric fabric_;  // first: outlives every member's NICs
  std::shared_ptr<SharedNode> node_;
  uint32_t nics_per_member_ = 0;
  std::vector<Member> members_;
  std::vector<std::unique_ptr<std::atomic<bool>>> stopped_;
  std::vector<std::unique_ptr<agent::service::AgentServer>> servers_;
  std::mutex stoppers_mu_;
  std::vector<std::thread> stoppers_;  // Stop()s the stop_member hook started; joined first
};

}  // namespace gdrbench::testing::fleet
