#include "agent/verbs/port_events.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <chrono>
#include <list>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/verbs/handles.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::verbs {

namespace {

constexpr int kPollMs = 50;  // the longest a cancellation or an event waits

class CancelOnly final : public PortWatch {
 public:
  explicit CancelOnly(const std::atomic<bool>& cancelled) : cancelled_(cancelled) {}
  const std::atomic<bool>& stop() const override { return cancelled_; }
  std::string fault() const override { return ""; }

 private:
  const std::atomic<bool>& cancelled_;
};

}  // namespace

std::unique_ptr<PortWatch> CancelOnlyWatch(const std::atomic<bool>& cancelled) {
  return std::make_unique<CancelOnly>(cancelled);
}

const char* AsyncEventName(int event_type) {
  switch (event_type) {
    case IBV_EVENT_CQ_ERR: return "IBV_EVENT_CQ_ERR";
    case IBV_EVENT_QP_FATAL: return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR: return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR: return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_COMM_EST: return "IBV_EVENT_COMM_EST";
    case IBV_EVENT_SQ_DRAINED: return "IBV_EVENT_SQ_DRAINED";
    case IBV_EVENT_PATH_MIG: return "IBV_EVENT_PATH_MIG";
    case IBV_EVENT_PATH_MIG_ERR: return "IBV_EVENT_PATH_MIG_ERR";
    case IBV_EVENT_DEVICE_FATAL: return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_PORT_ACTIVE: return "IBV_EVENT_PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR: return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_LID_CHANGE: return "IBV_EVENT_LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE: return "IBV_EVENT_PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE: return "IBV_EVENT_SM_CHANGE";
    case IBV_EVENT_SRQ_ERR: return "IBV_EVENT_SRQ_ERR";
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "IBV_EVENT_SRQ_LIMIT_REACHED";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "IBV_EVENT_QP_LAST_WQE_REACHED";
    case IBV_EVENT_CLIENT_REREGISTER: return "IBV_EVENT_CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE: return "IBV_EVENT_GID_CHANGE";
    case IBV_EVENT_WQ_FATAL: return "IBV_EVENT_WQ_FATAL";
  }
  return "an unknown event";
}

std::string EventFault(int event_type, uint32_t event_port, const std::string& device, uint32_t port) {
  if (event_type == IBV_EVENT_PORT_ERR && event_port == port) {
    return absl::StrCat("port ", port, " of ", device, " went down (IBV_EVENT_PORT_ERR)");
  }
  if (event_type == IBV_EVENT_DEVICE_FATAL) {
    return absl::StrCat(device, " failed (IBV_EVENT_DEVICE_FATAL): reset the device or reload its driver");
  }
  return "";
}

// One device: its own context, its thread, the watches on it.
class PortEvents::Device {
 public:
  struct Sub {
    uint32_t port;
    const std::atomic<bool>* cancelled;
    std::atomic<bool> stop{false};
    std::string fault;  // guarded by Device::mu_
  };

  explicit Device(std::string name) : name_(std::move(name)) {
    auto ctx = OpenDevice(name_);
    if (!ctx.ok()) {
      spdlog::warn("port events of {}: {} (tests on it stop on cancellation only)", name_,
                   std::string(ctx.status().message()));
    } else {
      ctx_ = std::move(*ctx);
      int flags = fcntl(ctx_->async_fd, F_GETFL);
      if (flags < 0 || fcntl(ctx_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        spdlog::warn("port events of {}: O_NONBLOCK on its async fd failed", name_);
        ctx_.reset();
      }
    }
    thread_ = std::thread([this] { Loop(); });
  }

  ~Device() {
    done_ = true;
    thread_.join();
  }

  Sub* Add(uint32_t port, const std::atomic<bool>& cancelled) {
    std::lock_guard<std::mutex> l(mu_);
    subs_.emplace_back();
    Sub* s = &subs_.back();
    s->port = port;
    s->cancelled = &cancelled;
    return s;
  }

  void Remove(Sub* s) {
    std::lock_guard<std::mutex> l(mu_);
    subs_.remove_if([s](const Sub& x) { return &x == s; });
  }

  std::string FaultOf(const Sub* s) {
    std::lock_guard<std::mutex> l(mu_);
    return s->fault;
  }

 private:
  void Loop() {
    while (!done_) {
      if (ctx_) {
        pollfd p{ctx_->async_fd, POLLIN, 0};
        if (poll(&p, 1, kPollMs) > 0) Drain();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      }
      std::lock_guard<std::mutex> l(mu_);
      for (Sub& s : subs_) {
        if (s.cancelled->load()) s.stop = true;
      }
    }
  }

  void Drain() {
    ibv_async_event ev{};
    while (ibv_get_async_event(ctx_.get(), &ev) == 0) {
      const uint32_t port = ev.event_type == IBV_EVENT_PORT_ERR || ev.event_type == IBV_EVENT_PORT_ACTIVE
                                ? static_cast<uint32_t>(ev.element.port_num)
                                : 0;
      const int type = ev.event_type;
      ibv_ack_async_event(&ev);
      spdlog::info("{}: {}{}", name_, AsyncEventName(type), port ? absl::StrCat(" on port ", port) : "");
      std::lock_guard<std::mutex> l(mu_);
      for (Sub& s : subs_) {
        std::string f = verbs::EventFault(type, port, name_, s.port);
        if (f.empty() || !s.fault.empty()) continue;
        s.fault = std::move(f);
        s.stop = true;
      }
    }
  }

  const std::string name_;
  ContextPtr ctx_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::list<Sub> subs_;  // guarded by mu_
  std::thread thread_;
};

class PortEvents::DeviceWatch final : public PortWatch {
 public:
  DeviceWatch(std::shared_ptr<Device> d, Device::Sub* s) : d_(std::move(d)), s_(s) {}
  ~DeviceWatch() override { d_->Remove(s_); }
  const std::atomic<bool>& stop() const override { return s_->stop; }
  std::string fault() const override { return d_->FaultOf(s_); }

 private:
  std::shared_ptr<Device> d_;
  Device::Sub* s_;
};

PortEvents::PortEvents() = default;
PortEvents::~PortEvents() = default;

std::unique_ptr<PortWatch> PortEvents::Watch(const std::string& device, uint32_t port,
                                             const std::atomic<bool>& cancelled) {
  std::shared_ptr<Device> d;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto& slot = devices_[device];
    if (!slot) slot = std::make_shared<Device>(device);
    d = slot;
  }
  Device::Sub* s = d->Add(port, cancelled);
  return std::make_unique<DeviceWatch>(std::move(d), s);
}

}  // namespace gdrbench::agent::verbs
