// Fakes of the preflight hardware interfaces, with settable answers.
// Not thread-safe; for tests only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/preflight/hardware.h"

namespace gdrbench::agent::preflight::testing_fakes {

class FakeCuda : public CudaQuery {
 public:
  absl::StatusOr<std::string> version = std::string("12.8");
  absl::StatusOr<std::vector<CudaGpu>> gpus = std::vector<CudaGpu>{MakeGpu(0, "0000:03:00.0")};

  static CudaGpu MakeGpu(int index, std::string bdf, std::string mode = "default",
                         bool dmabuf = true) {
    CudaGpu g;
    g.device.index = index;
    g.device.pci_bdf = std::move(bdf);
    g.device.compute_mode = std::move(mode);
    g.device.name = "NVIDIA H100 80GB HBM3";
    g.dmabuf_supported = dmabuf;
    g.gpudirect_rdma = true;
    return g;
  }
  absl::StatusOr<std::string> DriverVersion() override { return version; }
  absl::StatusOr<std::vector<CudaGpu>> ListGpus() override { return gpus; }
};

class FakeProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> result = std::string("ibv_reg_dmabuf_mr");
  std::string last_device;
  int last_gpu = -1;
  absl::StatusOr<std::string> RegisterOnePage(const std::string& device, int gpu) override {
    last_device = device;
    last_gpu = gpu;
    return result;
  }
};

// Wraps another RdmaQuery (usually SysfsRdma over a tree) and answers the
// dma-buf probe as told.
class FakeDmabufRdma : public RdmaQuery {
 public:
  explicit FakeDmabufRdma(RdmaQuery& inner) : inner_(inner) {}
  absl::StatusOr<bool> dmabuf = true;
  std::string source() const override { return inner_.source(); }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* why) override {
    return inner_.ListDevices(why);
  }
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string&) override { return dmabuf; }

 private:
  RdmaQuery& inner_;
};

}  // namespace gdrbench::agent::preflight::testing_fakes

namespace gdrbench::agent::preflight::testing_fakes {

// A GPU load that runs `during` a few times and, before that, calls
// `on_load` (tests use it to make the tree show the link as it would be
// under load). `result` set to an error makes RunWhile fail with it.
class FakeLoad : public GpuLoad {
 public:
  std::function<void()> on_load;
  absl::Status result;
  int runs = 0;
  int last_gpu = -1;
  absl::StatusOr<LoadResult> RunWhile(int gpu, absl::Duration, const std::function<void()>& during) override {
    ++runs;
    last_gpu = gpu;
    if (!result.ok()) return result;
    if (on_load) on_load();
    for (int i = 0; i < 3; ++i) during();
    return LoadResult{"fake copy", 1u << 30, 0.1};
  }
};

// An RdmaQuery with no device (the H200 machine, the dev host).
class NoRdma : public RdmaQuery {
 public:
  std::string source() const override { return "ibv_get_device_list"; }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* why) override {
    if (why) *why = "no RDMA devices: /sys/class/infiniband is empty";
    return std::vector<verbs::DeviceInfo>{};
  }
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string&) override { return false; }
};

}  // namespace gdrbench::agent::preflight::testing_fakes
