// The agent's request handler: plain C++ over the v1 messages, independent of
// the RPC layer (grpc_service.h only converts). Every method validates its
// request and returns INVALID_ARGUMENT with a sentence on bad input.
//
// Thread safety: all methods may be called concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/background_jobs.h"
#include "common/fs_root.h"
#include "gdrbench/v1/agent.pb.h"

namespace gdrbench::agent::service {

class TargetRegistry;  // target_registry.h
}  // namespace gdrbench::agent::service
namespace gdrbench::agent::bench {
class SessionFactory;  // bench/session.h
}  // namespace gdrbench::agent::bench
namespace gdrbench::agent::counters {
class CounterHistory;  // counters/counter_history.h
class PortFiles;       // counters/port_counters.h
struct Sample;
}  // namespace gdrbench::agent::counters
namespace gdrbench::agent::service {

struct AgentConfig {
  std::string fs_root = "/";
  std::vector<std::string> devices;  // RDMA devices this agent owns; empty = all
};

class AgentHandler {
 public:
  explicit AgentHandler(AgentConfig config);
  // With the data path's sessions made by `sessions` (tests: the fake NIC's).
  AgentHandler(AgentConfig config, std::shared_ptr<bench::SessionFactory> sessions);
  virtual ~AgentHandler();

  virtual absl::StatusOr<v1::NodeInfo> GetNodeInfo(const v1::GetNodeInfoRequest& request);
  virtual absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& request);
  virtual absl::StatusOr<v1::OpenTargetResponse> OpenTarget(const v1::OpenTargetRequest& request);
  // Calls `emit` once per size, then once with the summary. `emit` returns
  // false when the caller went away; the sweep then stops. `cancelled` is
  // polled between sizes.
  virtual absl::Status RunWriteSweep(
      const v1::RunWriteSweepRequest& request,
      const std::function<bool(const v1::RunWriteSweepResponse&)>& emit,
      const std::atomic<bool>& cancelled);
  // Out of band: the initiator's half (RunWriteSweep's first message).
  virtual absl::StatusOr<v1::ConnectTargetResponse> ConnectTarget(
      const v1::ConnectTargetRequest& request);
  virtual absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(
      const v1::VerifyTargetRequest& request);
  virtual absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const v1::CloseTargetRequest& request);

 protected:
  // The data path's targets (datapath_rpc.cc), made on first use.
  TargetRegistry& targets();

  // A port's TestCounters() around a test, through kept descriptors.
  // Virtual for a simulated node (tests), whose captured files never change.
  virtual counters::Sample ReadTestCounters(const std::string& device, uint32_t port);

  const AgentConfig config_;
  const FsRoot fs_;

 private:
  std::shared_ptr<bench::SessionFactory> sessions_;
  // Live only: the owned ports' error counters every second, for the
  // preflight's link_error_counters (no second's wait per sweep).
  std::shared_ptr<counters::CounterHistory> counter_history_;
  std::mutex counter_files_mu_;
  std::map<std::pair<std::string, uint32_t>, std::shared_ptr<counters::PortFiles>> counter_files_;
  std::once_flag targets_once_;
  std::shared_ptr<TargetRegistry> targets_;  // shared_ptr: the type is incomplete here

 protected:
  // Teardowns that outlast an answer (a port fault's QPs); last, so they are
  // joined before the sessions and targets they use go.
  BackgroundJobs background_;
};

}  // namespace gdrbench::agent::service
