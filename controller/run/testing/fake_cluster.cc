#include "controller/run/testing/fake_cluster.h"

#include <charconv>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "controller/run/clear_keeping.h"
#include "controller/run/probe.h"

namespace gdrbench::controller::run {

struct FakeCluster::Holds {
  enum class State { kHeld, kStarted };
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, State> targets;  // closed ones are erased
  uint64_t next = 0;
};

#define RETURN_IF_DOWN()                                                                                     \
  rpcs_.fetch_add(1, std::memory_order_relaxed);                                                             \
  if (down_) {                                                                                               \
    if (!down_why_.ok()) return down_why_;                                                                   \
    return absl::UnavailableError(absl::StrCat("agent fake", index_, ":1 unreachable: connection refused")); \
  }

#define GDR_FAKE_RETURN_IF_ERROR(expr) \
  if (absl::Status st_ = (expr); !st_.ok()) return st_

class FakeCluster::Agent final : public AgentApi {
 public:
  Agent(FakeCluster* c, uint32_t index) : c_(c), index_(index), address_(absl::StrCat("fake", index)) {}

  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override {
    RETURN_IF_DOWN();
    return Info();
  }

  v1::NodeInfo Info() const {
    v1::NodeInfo info;
    info.set_hostname(absl::StrCat("node", index_));
    for (uint32_t r = 0; r < c_->rails_; ++r) {
      auto* nic = info.add_nics();
      nic->set_device(absl::StrCat("nic", r));
      auto* p = nic->add_ports();
      p->set_port_num(1);
      p->set_port_state(v1::PORT_STATE_ACTIVE);
      p->set_active_rate_gbps(c_->link_gbps_);
      auto* rail = info.add_rails();
      rail->set_nic_device(nic->device());
      rail->set_gpu_index(r);
    }
    if (edit_) edit_(info);
    return info;
  }

  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest&) override {
    RETURN_IF_DOWN();
    v1::PreflightReport rep;
    rep.set_hostname(Info().hostname());
    auto* c = rep.add_checks();
    c->set_id("fake_check");
    c->set_status(preflight_);
    if (preflight_ == v1::CHECK_STATUS_FAIL) {
      c->set_summary("nvidia-peermem is not loaded");
      c->set_remediation("modprobe nvidia-peermem");
    }
    rep.set_overall(preflight_);
    return rep;
  }

  absl::Status OpenTarget(const v1::OpenTargetRequest& req, v1::OpenTargetResponse* resp) override {
    RETURN_IF_DOWN();
    if (!open_error_.ok()) return open_error_;
    // Filled in place: the caller reuses its answer (strings and the
    // buffer element keep their storage).
    resp->Clear();
    // The target id carries the target node and NIC so the initiator's fake
    // can evaluate the bandwidth model without shared state.
    char id[24];
    char* end = std::to_chars(id, id + 12, index_).ptr;
    *end++ = '/';
    std::string* target_id = resp->mutable_target_id();
    target_id->assign(id, end);
    target_id->append(req.device());
    if (req.hold_start() && c_->holds_start_) {
      std::lock_guard<std::mutex> lock(c_->holds_->mu);
      absl::StrAppend(target_id, "#", c_->holds_->next++);
      c_->holds_->targets[*target_id] = Holds::State::kHeld;
      resp->set_start_held(true);
    }
    Assign(resp->mutable_address(), address_);
    resp->set_cm_port(7471);
    auto* b = resp->add_buffers();
    b->set_addr(0x1000);
    b->set_rkey(42);
    b->set_length_bytes(req.buffer_bytes());
    open_.fetch_add(1, std::memory_order_relaxed);
    return absl::OkStatus();
  }

  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& req, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    return Sweep(req, timeout, on_message, nullptr);
  }
  absl::Status RunWriteSweepWithStop(const v1::RunWriteSweepRequest& req, std::chrono::milliseconds timeout,
                                     const std::function<bool(v1::RunWriteSweepResponse&)>& on_message,
                                     StreamStop& stop) override {
    return Sweep(req, timeout, on_message, &stop);
  }

  // A held sweep's wait for its target's start.
  absl::Status WaitForStart(const std::string& id, std::chrono::milliseconds timeout, StreamStop* stop) {
    Holds& h = *c_->holds_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (stop != nullptr && stop->stopped()) {
        return absl::CancelledError("RunWriteSweep: stopped by the controller while held");
      }
      std::unique_lock<std::mutex> lock(h.mu);
      auto it = h.targets.find(id);
      if (it == h.targets.end()) {
        return absl::UnavailableError(absl::StrCat("target ", id, " closed before its test was started"));
      }
      if (it->second == Holds::State::kStarted) return absl::OkStatus();
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError("RunWriteSweep: deadline exceeded waiting for the start");
      }
      h.cv.wait_for(lock, std::chrono::milliseconds(2));
    }
  }

  absl::Status ConnectTarget(const v1::ConnectTargetRequest& req) override {
    RETURN_IF_DOWN();
    if (!req.start()) return absl::UnimplementedError("the fake agents have no out-of-band mode");
    Holds& h = *c_->holds_;
    {
      std::lock_guard<std::mutex> lock(h.mu);
      auto it = h.targets.find(req.target_id());
      if (it == h.targets.end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("target ", req.target_id(), " was not opened with hold_start (or is closed)"));
      }
      it->second = Holds::State::kStarted;
    }
    h.cv.notify_all();
    return absl::OkStatus();
  }

  absl::Status Sweep(const v1::RunWriteSweepRequest& req, std::chrono::milliseconds timeout,
                     const std::function<bool(v1::RunWriteSweepResponse&)>& on_message, StreamStop* stop) {
    RETURN_IF_DOWN();
    if (req.wait_for_start()) GDR_FAKE_RETURN_IF_ERROR(WaitForStart(req.target_id(), timeout, stop));
    sweeps_.fetch_add(1, std::memory_order_relaxed);
    uint32_t dst = 0;
    const std::string& id = req.target_id();
    std::from_chars(id.data(), id.data() + id.size(), dst);
    double gbps = c_->model_ ? c_->model_(index_, dst, req.device()) : 0.95 * c_->link_gbps_;
    const std::string& memory = req.params().memory();
    if (c_->memory_factor_) gbps *= c_->memory_factor_(index_, dst, memory);
    // Reused messages (clear_keeping.h): this fake runs millions of times in
    // the controller bench.
    thread_local v1::RunWriteSweepResponse size_message, summary_message;
    for (uint64_t size : c_->sizes_) {
      v1::RunWriteSweepResponse& m = size_message;
      ClearKeeping(&m, Keep{&v1::RunWriteSweepResponse::release_size, &v1::RunWriteSweepResponse::set_allocated_size});
      auto* s = m.mutable_size();
      s->set_size_bytes(size);
      s->set_iterations(1000);
      s->set_bw_avg_gbps(gbps);
      s->set_bw_peak_gbps(gbps);
      s->set_status(gbps > 0 ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
      if (gbps <= 0) s->set_error("completion error: IBV_WC_RETRY_EXC_ERR (transport retry exceeded)");
      if (!on_message(m)) return absl::CancelledError("RunWriteSweep: stopped by the controller");
    }
    v1::RunWriteSweepResponse& m = summary_message;
    ClearKeeping(&m,
                 Keep{&v1::RunWriteSweepResponse::release_summary, &v1::RunWriteSweepResponse::set_allocated_summary});
    auto* sum = m.mutable_summary();
    sum->set_status(gbps > 0 ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
    if (gbps <= 0) sum->set_error("transport retry counter exceeded");
    Assign(sum->mutable_device(), req.device());
    const absl::string_view kind = memory.empty() ? "host" : absl::string_view(memory).substr(0, memory.find(':'));
    Assign(sum->mutable_memory_kind(), kind);
    Assign(sum->mutable_registration(), "ibv_reg_mr");
    sum->set_bw_avg_gbps_best(gbps);
    if (c_->counters_) c_->counters_(index_, dst, sum->mutable_counters());
    if (!on_message(m)) return absl::CancelledError("RunWriteSweep: stopped by the controller");
    return absl::OkStatus();
  }

  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& req) override {
    RETURN_IF_DOWN();
    v1::VerifyTargetResponse resp;
    uint32_t dst = 0;
    const std::string& id = req.target_id();
    auto slash = id.find('/');
    std::from_chars(id.data(), id.data() + id.size(), dst);
    std::string nic = slash == std::string::npos ? "" : id.substr(slash + 1, id.find('#') - slash - 1);
    for (uint64_t s : c_->sizes_) {
      auto* r = resp.add_sizes();
      r->set_size_bytes(s);
      r->set_verified(true);
      // The target's own direction of a bidirectional test (this fake
      // cannot tell which initiator wrote, so it models dst -> dst-1).
      auto* rev = resp.add_reverse_sizes();
      rev->set_size_bytes(s);
      double g = c_->model_ ? c_->model_(dst, dst, nic) : 0.95 * c_->link_gbps_;
      rev->set_bw_avg_gbps(g);
      rev->set_status(g > 0 ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
    }
    resp.set_method("cpu");
    return resp;
  }

  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    RETURN_IF_DOWN();
    if (id.find('#') != std::string::npos) {
      {
        std::lock_guard<std::mutex> lock(c_->holds_->mu);
        c_->holds_->targets.erase(id);
      }
      c_->holds_->cv.notify_all();
    }
    open_.fetch_sub(1, std::memory_order_relaxed);
    return v1::CloseTargetResponse{};
  }

  std::atomic<uint64_t> sweeps_{0};
  std::atomic<int64_t> open_{0};
  std::atomic<uint64_t> rpcs_{0};
  bool down_ = false;
  absl::Status down_why_;  // what a down agent answers; OK: "connection refused"
  absl::Status open_error_;
  v1::CheckStatus preflight_ = v1::CHECK_STATUS_PASS;
  std::function<void(v1::NodeInfo&)> edit_;

 private:
  FakeCluster* c_;
  uint32_t index_;
  std::string address_;  // what OpenTarget answers
};
#undef RETURN_IF_DOWN
#undef GDR_FAKE_RETURN_IF_ERROR

FakeCluster::FakeCluster(uint32_t nodes, uint32_t rails, double link_gbps)
    : rails_(rails), link_gbps_(link_gbps), holds_(std::make_unique<Holds>()) {
  for (uint32_t i = 0; i < nodes; ++i) agents_.push_back(std::make_unique<Agent>(this, i));
}

FakeCluster::~FakeCluster() = default;

AgentApi* FakeCluster::agent(uint32_t i) { return agents_[i].get(); }

namespace {

// One of the agents' counters summed over them.
template <typename Agent, typename T>
T SumOver(const std::vector<std::unique_ptr<Agent>>& agents, std::atomic<T> Agent::*counter) {
  T n = 0;
  for (const auto& a : agents) n += ((*a).*counter).load();
  return n;
}

}  // namespace

uint64_t FakeCluster::sweeps() const { return SumOver(agents_, &Agent::sweeps_); }
int64_t FakeCluster::open_targets() const { return SumOver(agents_, &Agent::open_); }
uint64_t FakeCluster::rpcs() const { return SumOver(agents_, &Agent::rpcs_); }

size_t FakeCluster::held_targets() const {
  std::lock_guard<std::mutex> lock(holds_->mu);
  size_t n = 0;
  for (const auto& [id, state] : holds_->targets) n += state == Holds::State::kHeld;
  return n;
}

std::vector<inventory::Node> FakeCluster::InventoryNodes() const {
  std::vector<inventory::Node> nodes;
  for (uint32_t i = 0; i < size(); ++i) {
    nodes.push_back({"node" + std::to_string(i), "fake" + std::to_string(i) + ":1", {}, 0, 0});
  }
  return nodes;
}

std::vector<AgentApi*> FakeCluster::agents() {
  std::vector<AgentApi*> out;
  for (auto& a : agents_) out.push_back(a.get());
  return out;
}

absl::StatusOr<Plan> FakeCluster::PlanFor(const v1::SweepParams& params, const std::string& memory,
                                          const schedule::ScheduleOptions& options,
                                          const std::vector<AgentApi*>& via) {
  inventory::Inventory inv;
  inv.nodes = InventoryNodes();
  ProbeResult probe = ProbeNodes(inv, via.empty() ? agents() : via, {});
  return MakePlan(probe.nodes, memory, options, params);
}

void FakeCluster::SetDown(uint32_t node, bool down, absl::Status why) {
  agents_[node]->down_ = down;
  agents_[node]->down_why_ = std::move(why);
}
void FakeCluster::SetOpenTargetError(uint32_t node, absl::Status status) {
  agents_[node]->open_error_ = std::move(status);
}
void FakeCluster::SetPreflight(uint32_t node, v1::CheckStatus status) {
  agents_[node]->preflight_ = status;
}
void FakeCluster::EditNodeInfo(uint32_t node, std::function<void(v1::NodeInfo&)> edit) {
  agents_[node]->edit_ = std::move(edit);
}

}  // namespace gdrbench::controller::run
