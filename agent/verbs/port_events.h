// Port faults seen at once: a thread per RDMA device reads the device's
// asynchronous events (ibv_get_async_event on a context of its own: the
// kernel delivers port events to every open context of the device) and stops
// the tests on that device and port the moment it goes down, instead of
// letting them wait out the QP's retry timeout.
//
//   PortEvents events;                       // one per agent
//   auto watch = events.Watch("mlx5_0", 1, cancelled);
//   RunSweep(..., watch->stop(), ...);       // ends within ~50 ms of the event
//   if (!watch->fault().empty()) ...         // "port 1 of mlx5_0 went down (IBV_EVENT_PORT_ERR)"
//
// The events that end a test: IBV_EVENT_PORT_ERR on its port,
// IBV_EVENT_DEVICE_FATAL on its device. stop() is also set within ~50 ms of
// `cancelled` (the caller went away), so one flag stops the test either way.
// A device whose context cannot be opened is logged once and watched for
// cancellation only.
//
// Thread safety: Watch and the watches may be used from any thread; a
// PortEvents must outlive its watches.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>


namespace gdrbench::agent::verbs {

class PortWatch {
 public:
  virtual ~PortWatch() = default;
  // True once the caller cancelled or the port (device) failed.
  virtual const std::atomic<bool>& stop() const = 0;
  // Why the port cannot carry the test; empty while it can.
  virtual std::string fault() const = 0;
};

// A watch that stops on `cancelled` only: what a fake NIC or a device
// without events gets.
std::unique_ptr<PortWatch> CancelOnlyWatch(const std::atomic<bool>& cancelled);

// The name of an async event the way the verbs headers spell it
// ("IBV_EVENT_PORT_ERR"); "event N" for one not known here.
const char* AsyncEventName(int event_type);

// Whether `event_type` on `event_port` (0 for device-wide events) ends a test
// on `port`; the sentence for its fault when it does, else empty.
std::string EventFault(int event_type, uint32_t event_port, const std::string& device, uint32_t port);

class PortEvents {
 public:
  PortEvents();
  ~PortEvents();  // stops and joins the device threads
  PortEvents(const PortEvents&) = delete;
  PortEvents& operator=(const PortEvents&) = delete;

  std::unique_ptr<PortWatch> Watch(const std::string& device, uint32_t port,
                                   const std::atomic<bool>& cancelled);

 private:
  class Device;
  class DeviceWatch;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Device>> devices_;  // guarded by mu_
};

}  // namespace gdrbench::agent::verbs
