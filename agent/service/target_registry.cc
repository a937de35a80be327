#include "agent/service/target_registry.h"

#include "agent/service/open_target.h"

#include <algorithm>
#include <atomic>
#include <optional>

#include "absl/strings/str_cat.h"
#include "agent/memory/memory.h"
#include "agent/service/sweep_convert.h"
#include "agent/verbs/cm.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {

TargetRegistry::TargetRegistry(DeviceResolver resolve,
                               std::shared_ptr<bench::SessionFactory> sessions,
                               TargetLimits limits, SteadyClock clock, bool run_reaper,
                               CounterReader read_counters)
    : resolve_(std::move(resolve)),
      sessions_(std::move(sessions)),
      limits_(limits),
      clock_(clock ? std::move(clock) : SteadyClock([] { return Clock::now(); })),
      read_counters_(std::move(read_counters)) {
  if (run_reaper) reaper_ = std::thread([this] { ReapLoop(); });
}

TargetRegistry::~TargetRegistry() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  std::map<std::string, std::shared_ptr<Target>> left;
  {
    std::lock_guard lock(mu_);
    left.swap(targets_);
  }
  left.clear();  // joins workers, frees QPs and buffers
}

size_t TargetRegistry::size() const {
  std::lock_guard lock(mu_);
  return targets_.size();
}

uint64_t TargetRegistry::bytes_in_use() const {
  std::lock_guard lock(mu_);
  return total_bytes_;
}

std::shared_ptr<Target> TargetRegistry::Find(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = targets_.find(id);
  return it == targets_.end() ? nullptr : it->second;
}

namespace {

absl::Status NotFound(const std::string& id) {
  return absl::NotFoundError(absl::StrCat(
      "target ", id, " does not exist on this agent (closed, or freed when its lease expired)"));
}

// What an OpenTarget request asks for, validated.
struct OpenPlan {
  bench::SweepOptions options;
  memory::MemorySpec memory;
  int64_t lease_ns = 0;
  bench::BufferLayout layout;
  uint64_t slice = 0;  // one QP's share of the buffer
  uint64_t bytes = 0;  // the whole buffer
};

// Every check of an OpenTarget request that needs no hardware.
absl::StatusOr<OpenPlan> ValidateOpen(const v1::OpenTargetRequest& r, const TargetLimits& limits) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  const v1::SweepParams& params = r.params();
  if (params.sizes_bytes_size() == 0) {
    return bad("no message sizes: give params.sizes_bytes (the sizes the initiator will sweep)");
  }
  OpenPlan plan;
  GDR_ASSIGN_OR_RETURN(plan.options, ToSweepOptions(params));
  GDR_ASSIGN_OR_RETURN(plan.memory,
                       memory::MemorySpec::Parse(params.memory().empty() ? "host" : params.memory()));
  GDR_RETURN_IF_ERROR(CheckMemoryForTest(plan.memory, plan.options));
  if (!r.bind_address().empty()) {
    GDR_RETURN_IF_ERROR(verbs::ParseSockAddr(r.bind_address(), 0).status());
  }
  if (r.port_num() > 1) {
    return bad("port_num ", r.port_num(), ": only port 1 (or 0 = the first) is supported");
  }
  plan.lease_ns = r.lease_ns() == 0 ? limits.default_lease_ns : r.lease_ns();
  if (plan.lease_ns < limits.min_lease_ns || plan.lease_ns > limits.max_lease_ns) {
    return bad("lease ", plan.lease_ns / 1'000'000'000.0, " s outside ", limits.min_lease_ns / 1'000'000'000,
               " .. ", limits.max_lease_ns / 1'000'000'000, " s");
  }
  plan.layout = bench::PlanLayout(plan.options);
  if (r.buffer_bytes() > bench::kMaxBufferBytes) {
    return bad("buffer_bytes ", r.buffer_bytes(), " above the limit of ", bench::kMaxBufferBytes);
  }
  // buffer_bytes is a floor: the layout of the sizes (data area plus, with
  // verify, one region per size) decides the rest.
  plan.slice = bench::TargetSliceBytes(plan.layout, r.buffer_bytes());
  if (plan.slice > bench::kMaxBufferBytes / plan.options.qps) {
    return bad("the target needs ", plan.slice, " B x ", plan.options.qps, " QPs; the limit is ",
               bench::kMaxBufferBytes, " B");
  }
  plan.bytes = plan.slice * plan.options.qps;
  return plan;
}

// The port the session listens on: the one asked for, else the first
// active one (as the session picks it), else 1.
uint32_t ListeningPort(const verbs::DeviceInfo& device, uint32_t asked) {
  uint32_t port = asked;
  for (const verbs::PortInfo& p : device.ports) {
    if (port != 0) break;
    if (p.state == verbs::PortState::kActive) port = p.port_num;
  }
  return port == 0 ? 1 : port;
}

// The answer to OpenTarget for the target `id` its session `op` opened.
v1::OpenTargetResponse OpenedResponse(const std::string& id, const bench::TargetOpened& op, int64_t lease_ns,
                                      const std::string& device) {
  v1::OpenTargetResponse resp;
  resp.set_target_id(id);
  resp.set_address(op.address);
  resp.set_cm_port(op.cm_port);
  for (const bench::RemoteSlice& s : op.slices) {
    v1::RemoteBuffer* b = resp.add_buffers();
    b->set_addr(s.addr);
    b->set_rkey(s.rkey);
    b->set_length_bytes(s.length);
  }
  resp.set_lease_expires_unix_ns(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() +
      lease_ns);
  resp.set_memory_kind(op.memory_kind);
  resp.set_registration(op.registration);
  resp.set_device(device);
  resp.set_cm(ToProto(op.cm));
  if (op.cm == bench::CmMode::kOob) ToProto(op.oob, resp.mutable_oob());
  return resp;
}

}  // namespace

TargetRegistry::ByteReservation::~ByteReservation() {
  if (registry_ == nullptr) return;
  std::lock_guard lock(registry_->mu_);
  registry_->total_bytes_ -= bytes_;
}

absl::StatusOr<TargetRegistry::ByteReservation> TargetRegistry::Reserve(uint64_t bytes,
                                                                        const std::string& device) {
  std::lock_guard lock(mu_);
  if (targets_.size() >= limits_.max_targets) {
    return absl::ResourceExhaustedError(
        absl::StrCat("this agent already holds ", targets_.size(), " targets (the limit): close some"));
  }
  if (total_bytes_ + bytes > limits_.max_total_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("a ", bytes, " B target would exceed this agent's memory limit for targets (",
                     limits_.max_total_bytes, " B, ", total_bytes_, " B in use)"));
  }
  total_bytes_ += bytes;
  return ByteReservation(this, bytes, absl::StrCat("t", next_id_++, "-", device));
}

absl::StatusOr<v1::OpenTargetResponse> TargetRegistry::Open(const v1::OpenTargetRequest& r) {
  // Validation first, all of it before any hardware is touched.
  GDR_ASSIGN_OR_RETURN(OpenPlan plan, ValidateOpen(r, limits_));
  GDR_ASSIGN_OR_RETURN(verbs::DeviceInfo device, resolve_(r.device()));
  const uint32_t counter_port = ListeningPort(device, r.port_num());
  GDR_ASSIGN_OR_RETURN(ByteReservation reserved, Reserve(plan.bytes, r.device()));
  const std::string& id = reserved.id();
  bench::TargetSpec ts{.device = std::move(device),
                       .bind_address = r.bind_address(),
                       .memory = plan.memory,
                       .options = plan.options,
                       .slice_bytes = plan.slice,
                       .cm = FromProto(r.params().cm()),
                       .hold_ready = r.hold_start()};
  auto counters_before = std::make_shared<CounterStart>();
  if (read_counters_) {
    ts.before_first_accept = [counters_before, read = read_counters_, device = r.device(), counter_port] {
      counters_before->Set(read(device, counter_port));
    };
  }
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<bench::TargetSession> session, sessions_->OpenTarget(ts));
  auto t = std::make_shared<Target>();
  t->id = id;
  t->bytes = plan.bytes;
  t->options = plan.options;
  t->layout = plan.layout;
  t->lease_ns = plan.lease_ns;
  t->session = std::move(session);
  t->counter_port = counter_port;
  t->hold = r.hold_start();
  // Before the initiator connects: the window holds the whole test (and is
  // moved to its start when the initiator first connects).
  t->counters_before = counters_before;
  if (read_counters_) t->counters_before->Set(read_counters_(r.device(), counter_port));
  t->Renew(clock_());

  const bench::TargetOpened& op = t->session->opened();
  v1::OpenTargetResponse resp = OpenedResponse(id, op, plan.lease_ns, r.device());
  resp.set_start_held(t->hold);
  Target* raw = t.get();
  SteadyClock clock = clock_;
  std::shared_ptr<bench::SessionFactory> sessions = sessions_;
  t->worker = std::thread([raw, clock, sessions] { raw->Work(clock, *sessions); });
  {
    std::lock_guard lock(mu_);
    targets_[id] = std::move(t);
    reserved.Keep();  // the target holds them now
  }
  spdlog::info("target {} open ({}{}): {} QP(s), {} B, lease {} s", id, bench::CmModeName(op.cm),
               r.hold_start() ? ", held until started" : "", plan.options.qps, plan.bytes,
               plan.lease_ns / 1'000'000'000);
  return resp;
}

absl::Status TargetRegistry::Connect(const v1::ConnectTargetRequest& r) {
  if (r.target_id().empty()) return absl::InvalidArgumentError("no target_id given");
  std::shared_ptr<Target> t = Find(r.target_id());
  if (t == nullptr) return NotFound(r.target_id());
  t->Renew(clock_());
  if (r.start() && !t->hold) {
    return absl::FailedPreconditionError(
        absl::StrCat("target ", t->id, " was not opened with hold_start: it needs no start"));
  }
  // The initiator sends once told to (kReady): the test starts here, and the
  // port's counters count from here.
  auto restart_counters = [&] {
    if (std::optional<counters::Sample> open = t->counters_before->Get(); open.has_value()) {
      t->counters_before->Set(read_counters_(open->device, open->port));
    }
  };
  if (r.has_initiator() || !r.start()) {
    GDR_ASSIGN_OR_RETURN(bench::OobPeer peer, FromProto(r.initiator()));
    if (!t->hold) restart_counters();
    GDR_RETURN_IF_ERROR(t->session->Connect(peer));
    spdlog::info("target {}: connected out of band{}", t->id, t->hold && !r.start() ? ", held" : "");
  }
  if (!r.start()) return absl::OkStatus();
  restart_counters();
  {
    std::lock_guard lock(t->mu);
    t->started = true;
  }
  t->cv.notify_all();
  return absl::OkStatus();
}

absl::StatusOr<v1::VerifyTargetResponse> TargetRegistry::Verify(const v1::VerifyTargetRequest& r,
                                                                std::chrono::milliseconds wait) {
  if (r.target_id().empty()) return absl::InvalidArgumentError("no target_id given");
  std::shared_ptr<Target> t = Find(r.target_id());
  if (t == nullptr) return NotFound(r.target_id());
  t->Renew(clock_());
  const bench::SweepOptions& o = t->options;
  std::vector<uint64_t> sizes, offsets;
  for (size_t i = 0; i < o.sizes_bytes.size(); ++i) {
    bool asked = r.sizes_bytes_size() == 0;
    for (uint64_t s : r.sizes_bytes()) asked = asked || s == o.sizes_bytes[i];
    if (!asked) continue;
    sizes.push_back(o.sizes_bytes[i]);
    if (i < t->layout.verify_offsets.size()) offsets.push_back(t->layout.verify_offsets[i]);
  }
  for (uint64_t s : r.sizes_bytes()) {
    if (std::find(o.sizes_bytes.begin(), o.sizes_bytes.end(), s) == o.sizes_bytes.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("size ", s, " B is not one this target was opened with"));
    }
  }
  v1::VerifyTargetResponse resp;
  const bool own_part = o.bidirectional;
  {
    std::unique_lock lock(t->mu);
    // The initiator may be done before this target's worker has seen its
    // connection (out of band, Connect() returns on the RPC thread and the
    // worker wakes after): give the worker a moment.
    t->cv.wait_for(lock, std::min<std::chrono::milliseconds>(wait, std::chrono::seconds(2)),
                   [&] { return t->accept_returned; });
    if (!t->accepted) {
      if (!t->accept_status.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "target ", t->id, " never got its initiator: ", t->accept_status.message()));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("target ", t->id, ": no initiator has connected yet"));
    }
    if (own_part) {
      if (!t->cv.wait_for(lock, wait, [&] { return t->worker_done; })) {
        return absl::UnavailableError(absl::StrCat(
            "target ", t->id, ": the reverse sweep is still running after ", wait.count(), " ms"));
      }
      for (const bench::SizeOutcome& so : t->reverse) ToProto(so, resp.add_reverse_sizes());
    }
  }
  if (!o.verify) {
    if (own_part) return resp;  // the caller came for the reverse results
    return absl::FailedPreconditionError(
        absl::StrCat("target ", t->id, " was opened without verify: nothing to check"));
  }
  const uint64_t seed = bench::TestSeed(r.seed() == 0 ? 1 : r.seed(), t->session->opened().slices);
  memory::Buffer& buf = t->session->buffer();
  std::vector<bench::ReverseCheck> checks =
      bench::CheckRegions(buf, sizes, offsets, t->session->slice_bytes(), o.qps, seed);
  for (const bench::ReverseCheck& c : checks) {
    v1::SizeResult* sr = resp.add_sizes();
    sr->set_size_bytes(c.size_bytes);
    sr->set_verified(c.verified);
    sr->set_status(c.verified ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
    sr->set_verify_first_bad_offset(c.first_bad_offset);
    sr->set_error(c.error);
  }
  uint64_t checked = 0;
  for (uint64_t s : sizes) checked += s * o.qps;
  resp.set_checked_bytes(checked);
  resp.set_method(buf.check_method());
  return resp;
}

absl::StatusOr<v1::CloseTargetResponse> TargetRegistry::Close(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("no target_id given");
  std::shared_ptr<Target> t;
  {
    std::lock_guard lock(mu_);
    auto it = targets_.find(id);
    if (it == targets_.end()) return NotFound(id);
    t = std::move(it->second);
    targets_.erase(it);
    total_bytes_ -= t->bytes;
  }
  v1::CloseTargetResponse resp;
  if (std::optional<counters::Sample> start = t->counters_before->Get(); start.has_value()) {
    const counters::Sample& before = *start;
    ToProto(counters::Diff(before, read_counters_(before.device, before.port)),
            resp.mutable_counters());
  }
  // The answer does not wait for the teardown (joining the worker, rdma_cm's
  // disconnect, QPs, MR, buffer): the controller's next step on this NIC
  // may. The registry's destructor waits for it.
  closing_.Start([t = std::move(t), id]() mutable {
    t.reset();
    spdlog::info("target {} closed", id);
  });
  return resp;
}

std::vector<std::string> TargetRegistry::ReapExpired(Clock::time_point now) {
  std::vector<std::shared_ptr<Target>> expired;
  {
    std::lock_guard lock(mu_);
    for (auto it = targets_.begin(); it != targets_.end();) {
      bool gone;
      {
        std::lock_guard tl(it->second->mu);
        gone = now > it->second->expires;
      }
      if (gone) {
        total_bytes_ -= it->second->bytes;
        expired.push_back(std::move(it->second));
        it = targets_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<std::string> ids;
  for (auto& t : expired) {  // outside the lock: joining a worker takes time
    spdlog::warn("target {}: lease of {} s expired without a call from its controller: freed",
                 t->id, t->lease_ns / 1'000'000'000);
    ids.push_back(t->id);
    t.reset();
  }
  return ids;
}

void TargetRegistry::ReapLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, limits_.reap_period);
    if (stopping_) break;
    lock.unlock();
    ReapExpired(clock_());
    lock.lock();
  }
}

}  // namespace gdrbench::agent::service
