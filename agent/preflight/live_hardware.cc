#include "agent/preflight/live_hardware.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "agent/preflight/kernel_log.h"
#include "agent/preflight/sysfs_rdma.h"
#include "agent/verbs/handles.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {
namespace {

class LiveRdma : public RdmaQuery {
 public:
  explicit LiveRdma(const FsRoot& fs) : fs_(fs) {}
  std::string source() const override { return "ibv_query_port"; }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* absent_reason) override {
    return verbs::ListDevices(fs_, {}, absent_reason);
  }
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string& device) override {
    GDR_ASSIGN_OR_RETURN(verbs::ContextPtr ctx, verbs::OpenDevice(device));
    GDR_ASSIGN_OR_RETURN(verbs::PdPtr pd, verbs::AllocPd(ctx.get()));
    // fd -1: a driver that implements dma-buf registration rejects the fd
    // (EBADF); one that does not says EOPNOTSUPP/EPROTONOSUPPORT first.
    errno = 0;
    ibv_mr* mr = ibv_reg_dmabuf_mr(pd.get(), 0, 0, 0, -1, 0);
    int err = errno;
    if (mr != nullptr) {
      ibv_dereg_mr(mr);
      return true;
    }
    return !(err == EOPNOTSUPP || err == EPROTONOSUPPORT);
  }

 private:
  const FsRoot& fs_;
};

class LiveCuda : public CudaQuery {
 public:
  absl::StatusOr<std::string> DriverVersion() override {
    GDR_RETURN_IF_ERROR(Load());
    return driver_->DriverVersion();
  }
  absl::StatusOr<std::vector<CudaGpu>> ListGpus() override {
    GDR_RETURN_IF_ERROR(Load());
    GDR_ASSIGN_OR_RETURN(std::vector<cuda::GpuDevice> devs, driver_->ListDevices());
    std::vector<CudaGpu> out;
    for (auto& d : devs) {
      CudaGpu g;
      g.device = std::move(d);
#if GDRBENCH_HAVE_CUDA_H
      CUdevice dev = 0;
      if (driver_->api().cuDeviceGet(&dev, g.device.index) == CUDA_SUCCESS) {
        int v = 0;
        if (driver_->api().cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) ==
            CUDA_SUCCESS) {
          g.dmabuf_supported = v != 0;
        }
        if (driver_->api().cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED,
                                                dev) == CUDA_SUCCESS) {
          g.gpudirect_rdma = v != 0;
        }
      }
#endif
      out.push_back(std::move(g));
    }
    return out;
  }

 private:
  absl::Status Load() {
    if (driver_) return absl::OkStatus();
    if (!load_status_.ok()) return load_status_;
    auto d = cuda::CudaDriver::Load();
    if (!d.ok()) {
      load_status_ = d.status();
      return load_status_;
    }
    driver_ = std::move(*d);
    return absl::OkStatus();
  }
  std::unique_ptr<cuda::CudaDriver> driver_;
  absl::Status load_status_;
};

class OfflineCuda : public CudaQuery {
 public:
  absl::StatusOr<std::string> DriverVersion() override { return Offline(); }
  absl::StatusOr<std::vector<CudaGpu>> ListGpus() override { return Offline(); }

 private:
  static absl::Status Offline() {
    return absl::UnavailableError("offline run against a captured tree: no CUDA driver to ask");
  }
};

class OfflineProbe : public RegistrationProbe {
 public:
  absl::StatusOr<std::string> RegisterOnePage(const std::string&, int) override {
    return absl::UnavailableError("offline run against a captured tree: nothing to register");
  }
};

class OfflineLoad : public GpuLoad {
 public:
  absl::StatusOr<LoadResult> RunWhile(int, absl::Duration, const std::function<void()>&) override {
    return absl::UnavailableError("offline run against a captured tree: no GPU to load");
  }
};

}  // namespace

std::unique_ptr<RdmaQuery> MakeLiveRdma(const FsRoot& fs) { return std::make_unique<LiveRdma>(fs); }
std::unique_ptr<CudaQuery> MakeLiveCuda() { return std::make_unique<LiveCuda>(); }

Hardware MakeHardware(const FsRoot& fs) {
  Hardware hw;
  if (fs.is_live()) {
    hw.rdma = MakeLiveRdma(fs);
    hw.cuda = MakeLiveCuda();
    hw.probe = MakeLiveRegistrationProbe();
    hw.load = MakeLiveGpuLoad();
    hw.kernel_log = MakeDevKmsgLog();
  } else {
    hw.rdma = std::make_unique<SysfsRdma>(fs);
    hw.cuda = std::make_unique<OfflineCuda>();
    hw.probe = std::make_unique<OfflineProbe>();
    hw.load = std::make_unique<OfflineLoad>();
    hw.kernel_log = MakeCapturedKernelLog(fs);
  }
  return hw;
}

}  // namespace gdrbench::agent::preflight
