// The error counters of every RDMA port the agent owns, sampled in the
// background every `period`, so the preflight's link_error_counters compares
// a read taken now with one taken at least a second ago instead of sleeping a
// second between two reads on every sweep (gdrbench-preflight, a one-shot
// process, still reads twice a second apart).
//
// Each tick lists /sys/class/infiniband (a device that appears is tracked, one
// that goes is dropped) and reads every tracked port through kept descriptors
// (PortFiles); a port keeps its last `keep` samples.
//
// Thread safety: all methods may be called concurrently with the sampler.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/counters/port_counters.h"
#include "common/fs_root.h"

namespace gdrbench::agent::counters {

struct HistoryOptions {
  std::chrono::milliseconds period{1000};
  size_t keep = 3;  // samples per port: with period 1 s, the newest >= 1 s old is 1-2 s old
  // The devices to track (the agent's --devices); empty = every device.
  std::vector<std::string> devices = {};
  // False: no thread; a test calls Tick().
  bool run_sampler = true;
  // Read through kept descriptors (PortFiles); nullopt: on a live node.
  std::optional<bool> keep_open = std::nullopt;
};

class CounterHistory {
 public:
  CounterHistory(const FsRoot& fs, HistoryOptions options);
  ~CounterHistory();  // stops and joins the sampler
  CounterHistory(const CounterHistory&) = delete;
  CounterHistory& operator=(const CounterHistory&) = delete;

  // One round: list the devices and their ports, sample each.
  void Tick();

  // The newest sample of the port taken at least `min_age` before now;
  // nullopt when the port is not tracked or its samples are all younger.
  std::optional<Sample> Before(const std::string& device, uint32_t port,
                               std::chrono::nanoseconds min_age) const;

 private:
  struct Port {
    std::unique_ptr<PortFiles> files;
    std::deque<Sample> samples;  // oldest first
  };
  void Run();

  const FsRoot fs_;  // a copy: it is only the root path
  const HistoryOptions options_;
  mutable std::mutex mu_;  // ports_
  std::map<std::pair<std::string, uint32_t>, Port> ports_;
  std::mutex tick_mu_;  // one Tick at a time
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread sampler_;
};

}  // namespace gdrbench::agent::counters
