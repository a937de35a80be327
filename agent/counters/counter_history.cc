#include "agent/counters/counter_history.h"

#include <algorithm>

#include "absl/strings/numbers.h"

namespace gdrbench::agent::counters {

CounterHistory::CounterHistory(const FsRoot& fs, HistoryOptions options)
    : fs_(fs), options_(std::move(options)) {
  if (options_.run_sampler) sampler_ = std::thread([this] { Run(); });
}

CounterHistory::~CounterHistory() {
  {
    std::lock_guard lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

void CounterHistory::Run() {
  std::unique_lock lock(stop_mu_);
  while (!stop_) {
    lock.unlock();
    Tick();
    lock.lock();
    stop_cv_.wait_for(lock, options_.period, [this] { return stop_; });
  }
}

void CounterHistory::Tick() {
  std::lock_guard tick(tick_mu_);
  // The ports present now, from sysfs (no verbs: the sampler must not hold
  // a device context).
  std::vector<std::pair<std::string, uint32_t>> present;
  if (auto devs = fs_.ListDir("/sys/class/infiniband"); devs.ok()) {
    for (const std::string& dev : *devs) {
      if (!options_.devices.empty() &&
          std::find(options_.devices.begin(), options_.devices.end(), dev) == options_.devices.end()) {
        continue;
      }
      auto ports = fs_.ListDir("/sys/class/infiniband/" + dev + "/ports");
      if (!ports.ok()) continue;
      for (const std::string& p : *ports) {
        uint32_t n = 0;
        if (absl::SimpleAtoi(p, &n)) present.emplace_back(dev, n);
      }
    }
  }
  // New ports get their descriptors outside the lock; gone ones are dropped.
  std::vector<std::pair<std::pair<std::string, uint32_t>, std::unique_ptr<PortFiles>>> added;
  {
    std::lock_guard lock(mu_);
    for (auto it = ports_.begin(); it != ports_.end();) {
      it = std::find(present.begin(), present.end(), it->first) == present.end() ? ports_.erase(it)
                                                                                  : std::next(it);
    }
    for (const auto& key : present) {
      if (!ports_.count(key)) added.emplace_back(key, nullptr);
    }
  }
  for (auto& [key, files] : added) {
    files = std::make_unique<PortFiles>(fs_, key.first, key.second, LinkErrorCounters(), options_.keep_open);
  }
  std::vector<PortFiles*> to_read;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, files] : added) ports_[key].files = std::move(files);
    for (auto& [key, port] : ports_) to_read.push_back(port.files.get());
  }
  // Reading holds only the port's own lock (PortFiles): queries go on. A
  // port erased meanwhile is not: only Tick erases, under tick_mu_.
  std::vector<Sample> read;
  read.reserve(to_read.size());
  for (PortFiles* f : to_read) read.push_back(f->Read());
  std::lock_guard lock(mu_);
  for (Sample& s : read) {
    auto it = ports_.find({s.device, s.port});
    if (it == ports_.end()) continue;
    it->second.samples.push_back(std::move(s));
    while (it->second.samples.size() > std::max<size_t>(options_.keep, 1)) it->second.samples.pop_front();
  }
}

std::optional<Sample> CounterHistory::Before(const std::string& device, uint32_t port,
                                             std::chrono::nanoseconds min_age) const {
  const int64_t latest = NowNs() - min_age.count();
  std::lock_guard lock(mu_);
  auto it = ports_.find({device, port});
  if (it == ports_.end()) return std::nullopt;
  for (auto s = it->second.samples.rbegin(); s != it->second.samples.rend(); ++s) {
    if (s->taken_ns <= latest) return *s;
  }
  return std::nullopt;
}

}  // namespace gdrbench::agent::counters
