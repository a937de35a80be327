#include "tests/integration/fleet/sim_fleet.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::testing::fleet {
namespace {

// Open descriptors on /dev/null, closed when it goes.
class FdReservation {
 public:
  explicit FdReservation(int count) {
    for (int i = 0; i < count; ++i) {
      int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      fds_.push_back(fd);
    }
  }
  ~FdReservation() {
    for (int fd : fds_) close(fd);
  }
  int size() const { return static_cast<int>(fds_.size()); }

 private:
  std::vector<int> fds_;
};

// Each member's listener (and its spare for EMFILE), its connection and its
// reservation, the gRPC runtime's and the process's own.
constexpr int kFdsPerMember = 2 + 2 * kReservedPerMember;
constexpr int kFdsBase = 256;

absl::Status CheckFileLimit(uint32_t members) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  const int64_t need = kFdsBase + int64_t{members} * kFdsPerMember + limits::kReservedFds;
  const int64_t most = std::min<int64_t>(static_cast<int64_t>(rl.rlim_cur), limits::kMaxOpenFds);
  if (need > most) {
    return absl::FailedPreconditionError(
        absl::StrCat(members, " members need about ", need, " file descriptors; this process may open ", most,
                     " (RLIMIT_NOFILE ", rl.rlim_cur, ", the listener's cap ", limits::kMaxOpenFds,
                     "): raise ulimit -n or run fewer"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<SimFleet>> SimFleet::Start(const FleetConfig& config) {
  if (config.members == 0) return absl::InvalidArgumentError("a fleet needs at least one member");
  GDR_RETURN_IF_ERROR(CheckFileLimit(config.members));
  std::unique_ptr<SimFleet> fleet(new SimFleet());
  GDR_ASSIGN_OR_RETURN(fleet->node_, SharedNode::Read(config.fs_root));
  fleet->nics_per_member_ = static_cast<uint32_t>(fleet->node_->devices().size());
  if (uint64_t{config.members} * fleet->nics_per_member_ >= kMaxLid) {
    return absl::InvalidArgumentError(absl::StrCat(config.members, " members x ", fleet->nics_per_member_,
                                                   " NICs need more than the ", kMaxLid,
                                                   " unicast LIDs of one fabric"));
  }
  fleet->members_.reserve(config.members);  // no reallocation under a running Stop()
  fleet->stopped_.reserve(config.members);
  fleet->servers_.reserve(config.members);
  {
    // The numbers the controller's connections will take (above).
    FdReservation reserved(static_cast<int>(config.members) * kReservedPerMember + kFdsBase);
    for (uint32_t i = 0; i < config.members; ++i) {
      if (auto st = fleet->StartMember(config, i); !st.ok()) {
        return absl::Status(st.code(), absl::StrCat("member ", i, ": ", st.message()));
      }
    }
  }
  spdlog::info("simulated fleet: {} members of {} ({} NICs each) on {}", config.members, config.fs_root,
               fleet->nics_per_member_, config.host);
  return fleet;
}

absl::Status SimFleet::StartMember(const FleetConfig& config, uint32_t i) {
  Member m;
  m.name = absl::StrFormat("%s%04u", config.name_prefix, i);
  agent::service::AgentServerConfig sc;
  sc.listen = absl::StrCat(config.host, ":0");
  sc.tls = config.tls;
  sc.agent.fs_root = config.fs_root;
  std::function<void(uint32_t)> hook;
  if (config.stop_member == static_cast<int>(i)) {
    hook = [this, i, at = config.stop_after_targets](uint32_t opened) {
      if (opened != at) return;
      std::lock_guard lock(stoppers_mu_);
      stoppers_.emplace_back([this, i] { Stop(i); });
    };
  }
  sc.make_handler = [this, i, name = m.name, hook](const agent::service::AgentConfig&) {
    auto h = std::make_unique<SimMemberHandler>(node_, i, name, &fabric_);
    if (hook) h->OnTargetOpened(hook);
    return std::unique_ptr<agent::service::AgentHandler>(std::move(h));
  };
  GDR_ASSIGN_OR_RETURN(auto server, agent::service::AgentServer::Start(std::move(sc)));
  m.address = absl::StrCat(config.host, ":", server->port());
  members_.push_back(std::move(m));
  stopped_.push_back(std::make_unique<std::atomic<bool>>(false));
  servers_.push_back(std::move(server));
  return absl::OkStatus();
}

SimFleet::~SimFleet() {
  std::lock_guard lock(stoppers_mu_);
  for (std::thread& t : stoppers_) t.join();
}

std::string SimFleet::InventoryYaml() const {
  std::string out = absl::StrCat("# ", members_.size(),
                                 " simulated fleet members (gdrbench-sim-fleet, test-only)\nnodes:\n");
  for (const Member& m : members_)
    absl::StrAppend(&out, "  - {name: ", m.name, ", address: '", m.address, "'}\n");
  return out;
}

void SimFleet::Stop(uint32_t i) {
  if (i >= servers_.size() || stopped_[i]->exchange(true)) return;
  const uint32_t first = 1 + i * nics_per_member_, last = first + nics_per_member_;
  fabric_.KillNics([&](uint32_t lid) { return lid >= first && lid < last; });
  servers_[i]->Shutdown(0);
  spdlog::warn("simulated fleet: {} ({}) stopped", members_[i].name, members_[i].address);
}

}  // namespace gdrbench::testing::fleet
