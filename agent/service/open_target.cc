#include "agent/service/open_target.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {

void Target::Work(const SteadyClock& clock, bench::SessionFactory& sessions) {
  int timeout_ms = static_cast<int>(std::min<int64_t>(lease_ns / 1'000'000, INT32_MAX));
  absl::Status st = session->Accept(stop, timeout_ms);
  if (st.ok() && hold) st = AwaitStart();
  {
    std::lock_guard lock(mu);
    accept_status = st;
    accept_returned = true;
    accepted = st.ok();
    expires = clock() + std::chrono::nanoseconds(lease_ns);
  }
  cv.notify_all();
  if (!st.ok()) {
    spdlog::warn("target {}: {}", id, std::string(st.message()));
  } else {
    RunOwnPart(sessions);
  }
  std::lock_guard lock(mu);
  worker_done = true;
  cv.notify_all();
}

absl::Status Target::AwaitStart() {
  {
    std::unique_lock lock(mu);
    while (!started) {
      if (stop.load()) return absl::AbortedError("target closed before its test was started");
      cv.wait_for(lock, std::chrono::milliseconds(100));
    }
  }
  return session->SendReady();
}

void Target::RunOwnPart(bench::SessionFactory& sessions) {
  auto keep = [this](const bench::SizeOutcome& o) {
    if (!o.ok) spdlog::warn("target {}: {}", id, o.error);
    std::lock_guard lock(mu);
    reverse.push_back(o);
  };
  if (!options.bidirectional && options.test != bench::TestKind::kWriteLat) {
    session->Run(stop, keep);  // nothing of its own to run: no watch either
    return;
  }
  std::unique_ptr<verbs::DataWatch> watch = sessions.WatchData(session->data_objects(), stop);
  session->Run(watch->stop(), keep);
  const std::string fault = watch->fault();
  if (fault.empty()) return;
  std::lock_guard lock(mu);
  const size_t total = options.sizes_bytes.size();
  bench::SizeOutcome f;
  if (!reverse.empty() && !reverse.back().ok) {  // the size the fault stopped
    f.size_bytes = reverse.back().size_bytes;
    reverse.pop_back();
  } else if (reverse.size() < total) {
    f.size_bytes = options.sizes_bytes[reverse.size()];
  }
  f.error = absl::StrCat("target side: ", fault, "; ", reverse.size(), " of ", total, " sizes ran");
  spdlog::warn("target {}: {}", id, f.error);
  reverse.push_back(std::move(f));
}

}  // namespace gdrbench::agent::service
