// A SessionFactory over the fake NIC (fake_nic.h): the out-of-band sessions
// of agent/bench/oob_session.h with FakeNics on one FakeFabric, host buffers
// for memory. rdma_cm mode needs librdmacm and is not faked (UNIMPLEMENTED).
// Also a fake RoCE port for DeviceInfo. Thread safety: OpenTarget and
// OpenInitiator may be called from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "agent/bench/oob_session.h"
#include "agent/bench/session.h"
#include "tests/unit/agent/bench/fake_nic.h"

namespace gdrbench::agent::bench::testing {

// A RoCE v2 port with ::ffff:10.0.0.<host>/24 at GID index 1 (index 0 the
// IPv6 link-local one), as the lab's rxe ports look (deploy/lab/README.md).
inline verbs::DeviceInfo FakeRoceDevice(const std::string& name, int host) {
  verbs::DeviceInfo d;
  d.name = name;
  verbs::PortInfo p;
  p.port_num = 1;
  p.state = verbs::PortState::kActive;
  p.link_layer = "Ethernet";
  p.active_mtu_bytes = 4096;
  p.lid = 0;
  char v4[48];
  std::snprintf(v4, sizeof(v4), "0000:0000:0000:0000:0000:ffff:0a00:%04x", host);
  p.gids.push_back(verbs::GidEntry{.index = 0, .gid = "fe80:0000:0000:0000:0000:00ff:fe00:0001",
                                   .type = "RoCE v2", .netdev = "veth"});
  p.gids.push_back(verbs::GidEntry{.index = 1, .gid = v4, .type = "RoCE v2", .netdev = "veth"});
  p.ip_addresses = {absl::StrCat("10.0.0.", host)};
  p.ip_cidrs = {absl::StrCat("10.0.0.", host, "/24")};
  d.ports.push_back(p);
  return d;
}

class FakeSessionFactory final : public SessionFactory {
 public:
  // fake0 = 10.0.0.1, fake1 = 10.0.0.2, ...
  absl::StatusOr<verbs::DeviceInfo> ResolveDevice(const std::string& name) override {
    if (name.rfind("fake", 0) != 0 || name.size() < 5) {
      return absl::InvalidArgumentError(absl::StrCat("RDMA device '", name, "' is absent"));
    }
    return FakeRoceDevice(name, std::atoi(name.c_str() + 4) + 1);
  }
  absl::StatusOr<std::unique_ptr<TargetSession>> OpenTarget(const TargetSpec& spec) override {
    if (ResolveCmMode(spec.cm, spec.device.ports.front()) != CmMode::kOob || force_rdma_cm) {
      return absl::UnimplementedError("the fake fabric has no rdma_cm");
    }
    auto nic = std::make_unique<FakeNic>(&fabric, spec.device.ports.front());
    nic->device_name = spec.device.name;
    GDR_ASSIGN_OR_RETURN(auto t, OobTarget<FakeNic>::Open(std::move(nic), spec));
    ++targets_opened;
    return std::unique_ptr<TargetSession>(std::move(t));
  }
  absl::StatusOr<std::unique_ptr<InitiatorSession>> OpenInitiator(
      const InitiatorSpec& spec) override {
    if (spec.cm != CmMode::kOob) return absl::UnimplementedError("the fake fabric has no rdma_cm");
    auto nic = std::make_unique<FakeNic>(&fabric, spec.device.ports.front());
    nic->device_name = spec.device.name;
    GDR_ASSIGN_OR_RETURN(auto in, OobInitiator<FakeNic>::Open(std::move(nic), spec));
    return std::unique_ptr<InitiatorSession>(std::move(in));
  }

  // Faults the test raises: RaisePortDown ends the running test as a real
  // IBV_EVENT_PORT_ERR would (port_events.h); RaiseDataErrorOn(device,
  // fault) is an error event on the CQs or QPs of `device`'s session
  // (data_events.h): the watches of its objects stop within a millisecond,
  // as the real DataEvents' would, with `fault` as theirs. RaiseDataError:
  // one on the initiator's (fake0's) send CQ. The initiator's loop reads
  // the port watch's flag (stop_any), which both set.
  void RaisePortDown() {
    port_down = true;
    stop_any = true;
  }
  void RaiseDataError() {
    RaiseDataErrorOn("fake0", data_fault);
    stop_any = true;
  }
  void RaiseDataErrorOn(const std::string& device, const std::string& fault) {
    std::lock_guard lock(faults_mu_);
    device_faults_[device] = fault;
  }
  std::string DeviceFault(const std::string& device) {
    std::lock_guard lock(faults_mu_);
    auto it = device_faults_.find(device);
    return it == device_faults_.end() ? "" : it->second;
  }
  std::unique_ptr<verbs::PortWatch> WatchPort(const std::string&, uint32_t,
                                              const std::atomic<bool>&) override {
    class Watch final : public verbs::PortWatch {
     public:
      explicit Watch(FakeSessionFactory* f) : f_(f) {}
      const std::atomic<bool>& stop() const override { return f_->stop_any; }
      std::string fault() const override { return f_->port_down ? f_->port_fault : ""; }

     private:
      FakeSessionFactory* f_;
    };
    return std::make_unique<Watch>(this);
  }
  // A watch of `objects.device`: stops on `cancelled` or that device's
  // fault, polled every millisecond by its own thread.
  std::unique_ptr<verbs::DataWatch> WatchData(const verbs::DataObjects& objects,
                                              const std::atomic<bool>& cancelled) override {
    class DeviceWatch final : public verbs::DataWatch {
     public:
      DeviceWatch(FakeSessionFactory* f, std::string device, const std::atomic<bool>& cancelled)
          : f_(f), device_(std::move(device)), cancelled_(cancelled), thread_([this] { Loop(); }) {}
      ~DeviceWatch() override {
        done_ = true;
        thread_.join();
      }
      const std::atomic<bool>& stop() const override { return stop_; }
      std::string fault() const override { return f_->DeviceFault(device_); }

     private:
      void Loop() {
        while (!done_) {
          if (cancelled_.load() || !f_->DeviceFault(device_).empty()) stop_ = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      FakeSessionFactory* f_;
      const std::string device_;
      const std::atomic<bool>& cancelled_;
      std::atomic<bool> stop_{false};
      std::atomic<bool> done_{false};
      std::thread thread_;  // last: started after what it reads
    };
    return std::make_unique<DeviceWatch>(this, objects.device, cancelled);
  }

  FakeFabric fabric;
  std::atomic<bool> stop_any{false};
  std::atomic<bool> port_down{false};
  std::string data_fault = "the send CQ of fake0 overran (IBV_EVENT_CQ_ERR): completions were lost";
  std::string port_fault = "port 1 of fake0 went down (IBV_EVENT_PORT_ERR)";
  bool force_rdma_cm = false;
  int targets_opened = 0;

 private:
  std::mutex faults_mu_;
  std::map<std::string, std::string> device_faults_;  // guarded by faults_mu_
};

}  // namespace gdrbench::agent::bench::testing
