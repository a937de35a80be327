// A SessionFactory over the fake NIC (fake_nic.h): the out-of-band sessions
// of agent/bench/oob_session.h with FakeNics on one FakeFabric, host buffers
// for memory. rdma_cm mode needs librdmacm and is not faked (UNIMPLEMENTED).
// Also a fake RoCE port for DeviceInfo. Thread safety: OpenTarget and
// OpenInitiator may be called from several threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>

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
  p.state = "PORT_ACTIVE";
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
    ASSIGN_OR_RETURN(auto t, OobTarget<FakeNic>::Open(std::move(nic), spec));
    ++targets_opened;
    return std::unique_ptr<TargetSession>(std::move(t));
  }
  absl::StatusOr<std::unique_ptr<InitiatorSession>> OpenInitiator(
      const InitiatorSpec& spec) override {
    if (spec.cm != CmMode::kOob) return absl::UnimplementedError("the fake fabric has no rdma_cm");
    auto nic = std::make_unique<FakeNic>(&fabric, spec.device.ports.front());
    ASSIGN_OR_RETURN(auto in, OobInitiator<FakeNic>::Open(std::move(nic), spec));
    return std::unique_ptr<InitiatorSession>(std::move(in));
  }

  // Faults the test raises: RaisePortDown ends the running test as a real
  // IBV_EVENT_PORT_ERR would (port_events.h), RaiseDataError as an error
  // event on the test's own CQ or QP (data_events.h). Either sets the one
  // stop flag the data loop reads.
  void RaisePortDown() {
    port_down = true;
    stop_any = true;
  }
  void RaiseDataError() {
    data_error = true;
    stop_any = true;
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
  std::unique_ptr<verbs::DataWatch> WatchData(const verbs::DataObjects&, const std::atomic<bool>&) override {
    class Watch final : public verbs::DataWatch {
     public:
      explicit Watch(FakeSessionFactory* f) : f_(f) {}
      const std::atomic<bool>& stop() const override { return f_->stop_any; }
      std::string fault() const override { return f_->data_error ? f_->data_fault : ""; }

     private:
      FakeSessionFactory* f_;
    };
    return std::make_unique<Watch>(this);
  }

  FakeFabric fabric;
  std::atomic<bool> stop_any{false};
  std::atomic<bool> port_down{false};
  std::atomic<bool> data_error{false};
  std::string data_fault = "the send CQ of fake0 overran (IBV_EVENT_CQ_ERR): completions were lost";
  std::string port_fault = "port 1 of fake0 went down (IBV_EVENT_PORT_ERR)";
  bool force_rdma_cm = false;
  int targets_opened = 0;
};

}  // namespace gdrbench::agent::bench::testing
