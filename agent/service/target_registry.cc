#include "agent/service/target_registry.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "agent/bench/control.h"
#include "agent/bench/target_endpoint.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "agent/service/sweep_convert.h"
#include "agent/verbs/cm.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {

using Clock = std::chrono::steady_clock;

// One open target. The worker thread accepts the initiator's QPs and, for a
// bidirectional test, runs the sweep back; the destructor stops and joins it
// before the endpoint (QPs, MR, buffer) is freed.
class Target {
 public:
  ~Target() {
    stop.store(true);
    if (worker.joinable()) worker.join();
  }

  std::string id;
  uint64_t bytes = 0;
  bench::SweepOptions options;   // sizes, verify, qps; the reverse sweep for bidirectional
  bench::BufferLayout layout;
  int64_t lease_ns = 0;
  std::unique_ptr<bench::TargetEndpoint> endpoint;
  std::atomic<bool> stop{false};

  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point expires;          // guarded by mu
  bool accepted = false;              // guarded by mu
  bool worker_done = false;           // guarded by mu
  absl::Status accept_status;         // guarded by mu
  std::vector<bench::SizeOutcome> reverse;  // guarded by mu

  std::thread worker;  // last: joined first

  void Renew() {
    std::lock_guard lock(mu);
    expires = Clock::now() + std::chrono::nanoseconds(lease_ns);
  }

  // The reverse direction of a bidirectional test (verified when the test
  // verifies), then the "reverse sweep done" message to the initiator, which
  // keeps its QPs and buffer up until it arrives.
  void RunReverse() {
    bench::SweepIdentity ident{endpoint->path().device, endpoint->path().gid_index, ""};
    bench::VerbsOps& ops = endpoint->ops();
    bench::RunSweep(ops, options, endpoint->ReverseEndpoint(layout, options.seed), ident, stop,
                    [this](const bench::SizeOutcome& o) {
                      if (!o.ok) spdlog::warn("target {}: reverse sweep: {}", id, o.error);
                      std::lock_guard lock(mu);
                      reverse.push_back(o);
                    });
    absl::Status st =
        bench::SendControl(ops, 0, bench::ControlMessage::kReverseDone, 10'000'000'000);
    if (!st.ok()) spdlog::warn("target {}: {}", id, std::string(st.message()));
  }

  void Work() {
    int timeout_ms = static_cast<int>(std::min<int64_t>(lease_ns / 1'000'000, INT32_MAX));
    absl::Status st = endpoint->Accept(stop, timeout_ms);
    {
      std::lock_guard lock(mu);
      accept_status = st;
      accepted = st.ok();
      expires = Clock::now() + std::chrono::nanoseconds(lease_ns);
    }
    if (!st.ok()) {
      spdlog::warn("target {}: {}", id, std::string(st.message()));
    } else if (options.bidirectional) {
      RunReverse();
    }
    std::lock_guard lock(mu);
    worker_done = true;
    cv.notify_all();
  }
};

TargetRegistry::TargetRegistry(FsRoot fs, std::vector<std::string> owned, TargetLimits limits)
    : fs_(std::move(fs)), owned_(std::move(owned)), limits_(limits) {
  reaper_ = std::thread([this] { ReapLoop(); });
}

TargetRegistry::~TargetRegistry() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  reaper_.join();
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

std::shared_ptr<Target> TargetRegistry::Find(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = targets_.find(id);
  return it == targets_.end() ? nullptr : it->second;
}

absl::StatusOr<v1::OpenTargetResponse> TargetRegistry::Open(const v1::OpenTargetRequest& r) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  // Validation first, all of it before any hardware is touched.
  if (r.qps() != 0 && r.params().qps() != 0 && r.qps() != r.params().qps()) {
    return bad("qps (", r.qps(), ") and params.qps (", r.params().qps(), ") disagree");
  }
  v1::SweepParams params = r.params();
  if (r.sizes_bytes_size() > 0) {
    *params.mutable_sizes_bytes() = r.sizes_bytes();
  }
  if (params.sizes_bytes_size() == 0) {
    return bad("no message sizes: give sizes_bytes (the sizes the initiator will sweep)");
  }
  if (r.qps() != 0) params.set_qps(r.qps());
  params.set_verify(params.verify() || r.verify());
  params.set_bidirectional(params.bidirectional() || r.bidirectional());
  ASSIGN_OR_RETURN(bench::SweepOptions options, ToSweepOptions(params));
  ASSIGN_OR_RETURN(memory::MemorySpec spec, memory::MemorySpec::Parse(r.memory().empty() ? "host" : r.memory()));
  if (!r.bind_address().empty()) {
    RETURN_IF_ERROR(verbs::ParseSockAddr(r.bind_address(), 0).status());
  }
  if (r.port_num() > 1) {
    return bad("port_num ", r.port_num(), ": only port 1 (or 0 = the first) is supported");
  }
  int64_t lease_ns = r.lease_ns() == 0 ? limits_.default_lease_ns : r.lease_ns();
  if (lease_ns < limits_.min_lease_ns || lease_ns > limits_.max_lease_ns) {
    return bad("lease ", lease_ns / 1'000'000'000.0, " s outside ",
               limits_.min_lease_ns / 1'000'000'000, " .. ", limits_.max_lease_ns / 1'000'000'000,
               " s");
  }
  bench::BufferLayout layout =
      bench::PlanLayout(options.sizes_bytes, options.verify, options.bidirectional);
  if (r.buffer_bytes() > bench::kMaxBufferBytes) {
    return bad("buffer_bytes ", r.buffer_bytes(), " above the limit of ", bench::kMaxBufferBytes);
  }
  // buffer_bytes is a floor: the layout of the sizes (data area plus, with
  // verify, one region per size) decides the rest.
  uint64_t slice = bench::TargetSliceBytes(layout, r.buffer_bytes());
  if (slice > bench::kMaxBufferBytes / options.qps) {
    return bad("the target needs ", slice, " B x ", options.qps, " QPs; the limit is ",
               bench::kMaxBufferBytes, " B");
  }
  uint64_t bytes = slice * options.qps;
  RETURN_IF_ERROR(CheckDevice(fs_, owned_, r.device()));

  std::string id;
  {
    std::lock_guard lock(mu_);
    if (targets_.size() >= limits_.max_targets) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this agent already holds ", targets_.size(), " targets (the limit): close some"));
    }
    if (total_bytes_ + bytes > limits_.max_total_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "a ", bytes, " B target would exceed this agent's memory limit for targets (",
          limits_.max_total_bytes, " B, ", total_bytes_, " B in use)"));
    }
    total_bytes_ += bytes;
    id = absl::StrCat("t", next_id_++, "-", r.device());
  }
  auto release = [&] {
    std::lock_guard lock(mu_);
    total_bytes_ -= bytes;
  };

  bench::TargetConfig tc{.device = r.device(),
                         .bind_address = r.bind_address(),
                         .memory = spec,
                         .slice_bytes = slice,
                         .qps = options.qps,
                         .tx_depth = options.tx_depth,
                         .cq_moderation = options.cq_moderation,
                         .qp_timeout = options.qp_timeout};
  auto endpoint = bench::TargetEndpoint::Open(fs_, tc);
  if (!endpoint.ok()) {
    release();
    return endpoint.status();
  }
  auto t = std::make_shared<Target>();
  t->id = id;
  t->bytes = bytes;
  t->options = options;
  t->layout = layout;
  t->lease_ns = lease_ns;
  t->endpoint = std::move(*endpoint);
  t->Renew();

  v1::OpenTargetResponse resp;
  resp.set_target_id(id);
  resp.set_address(t->endpoint->address());
  resp.set_cm_port(t->endpoint->cm_port());
  for (const bench::RemoteSlice& s : t->endpoint->slices()) {
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
  resp.set_memory_kind(t->endpoint->memory_kind());
  resp.set_registration(t->endpoint->registration());
  resp.set_device(r.device());

  Target* raw = t.get();
  t->worker = std::thread([raw] { raw->Work(); });
  {
    std::lock_guard lock(mu_);
    targets_[id] = std::move(t);
  }
  spdlog::info("target {} open: {} QP(s), {} B, lease {} s", id, options.qps, bytes,
               lease_ns / 1'000'000'000);
  return resp;
}

absl::StatusOr<v1::VerifyTargetResponse> TargetRegistry::Verify(const v1::VerifyTargetRequest& r,
                                                                std::chrono::milliseconds wait) {
  if (r.target_id().empty()) return absl::InvalidArgumentError("no target_id given");
  std::shared_ptr<Target> t = Find(r.target_id());
  if (t == nullptr) {
    return absl::NotFoundError(absl::StrCat("target ", r.target_id(),
                                            " does not exist on this agent (closed, or freed "
                                            "when its lease expired)"));
  }
  t->Renew();
  const bench::SweepOptions& o = t->options;
  std::vector<size_t> which;
  if (r.sizes_bytes_size() == 0) {
    for (size_t i = 0; i < o.sizes_bytes.size(); ++i) which.push_back(i);
  } else {
    for (uint64_t s : r.sizes_bytes()) {
      auto it = std::find(o.sizes_bytes.begin(), o.sizes_bytes.end(), s);
      if (it == o.sizes_bytes.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("size ", s, " B is not one this target was opened with"));
      }
      which.push_back(it - o.sizes_bytes.begin());
    }
  }
  v1::VerifyTargetResponse resp;
  {
    std::unique_lock lock(t->mu);
    if (!t->accepted) {
      if (!t->accept_status.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "target ", t->id, " never got its initiator: ", t->accept_status.message()));
      }
      return absl::FailedPreconditionError(
          absl::StrCat("target ", t->id, ": no initiator has connected yet"));
    }
    if (o.bidirectional) {
      if (!t->cv.wait_for(lock, wait, [&] { return t->worker_done; })) {
        return absl::UnavailableError(absl::StrCat(
            "target ", t->id, ": the reverse sweep is still running after ", wait.count(), " ms"));
      }
      for (const bench::SizeOutcome& so : t->reverse) ToProto(so, resp.add_reverse_sizes());
    }
  }
  if (!o.verify) {
    if (o.bidirectional) return resp;  // the caller came for the reverse results
    return absl::FailedPreconditionError(
        absl::StrCat("target ", t->id, " was opened without verify: nothing to check"));
  }
  uint64_t seed = r.seed() == 0 ? 1 : r.seed();
  memory::Buffer& buf = t->endpoint->buffer();
  uint64_t slice = t->endpoint->slice_bytes();
  uint64_t checked = 0;
  for (size_t i : which) {
    uint64_t size = o.sizes_bytes[i];
    v1::SizeResult* sr = resp.add_sizes();
    sr->set_size_bytes(size);
    sr->set_status(v1::RESULT_STATUS_OK);
    sr->set_verified(true);
    for (uint32_t q = 0; q < o.qps; ++q) {
      uint64_t region = q * slice + t->layout.verify_offsets[i];
      auto bad = buf.CheckPattern(region, size, seed);
      if (!bad.ok()) return bad.status();
      checked += size;
      if (*bad >= 0) {
        uint64_t rel = static_cast<uint64_t>(*bad) - region;
        sr->set_verified(false);
        sr->set_status(v1::RESULT_STATUS_FAILED);
        sr->set_verify_first_bad_offset(rel);
        sr->set_error(absl::StrCat("data mismatch at ", size, " B, QP ", q, ": first bad byte at ",
                                   "offset ", rel, " of the region the last pass wrote"));
        break;
      }
    }
  }
  resp.set_checked_bytes(checked);
  resp.set_method(buf.check_method());
  return resp;
}

absl::Status TargetRegistry::Close(const std::string& id) {
  if (id.empty()) return absl::InvalidArgumentError("no target_id given");
  std::shared_ptr<Target> t;
  {
    std::lock_guard lock(mu_);
    auto it = targets_.find(id);
    if (it == targets_.end()) {
      return absl::NotFoundError(absl::StrCat(
          "target ", id, " does not exist on this agent (closed, or freed when its lease expired)"));
    }
    t = std::move(it->second);
    targets_.erase(it);
    total_bytes_ -= t->bytes;
  }
  t.reset();  // outside the lock: joins the worker, frees QPs and memory
  spdlog::info("target {} closed", id);
  return absl::OkStatus();
}

void TargetRegistry::ReapLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, limits_.reap_period);
    if (stopping_) break;
    std::vector<std::shared_ptr<Target>> expired;
    auto now = Clock::now();
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
    if (expired.empty()) continue;
    lock.unlock();
    for (auto& t : expired) {
      spdlog::warn("target {}: lease of {} s expired without a call from its controller: freed",
                   t->id, t->lease_ns / 1'000'000'000);
      t.reset();
    }
    lock.lock();
  }
}

}  // namespace gdrbench::agent::service
