#include "agent/cuda/driver.h"

#include <dlfcn.h>

#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gdrbench::agent::cuda {

#if !GDRBENCH_HAVE_CUDA_H

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(const std::string&) {
  return absl::UnimplementedError("gdrbench was built without cuda.h: GPU support compiled out");
}
CudaDriver::~CudaDriver() = default;
absl::StatusOr<std::string> CudaDriver::DriverVersion() const {
  return absl::UnimplementedError("built without cuda.h");
}
absl::StatusOr<std::vector<GpuDevice>> CudaDriver::ListDevices() const {
  return absl::UnimplementedError("built without cuda.h");
}
absl::StatusOr<const CudaDriver*> CudaDriver::Shared() {
  return absl::UnimplementedError("gdrbench was built without cuda.h: GPU support compiled out");
}
absl::StatusOr<int> CudaDriver::ResolveDevice(const std::string&) const {
  return absl::UnimplementedError("built without cuda.h");
}

#else

namespace {

template <typename Fn>
bool Bind(void* handle, const char* name, Fn*& out) {
  out = reinterpret_cast<Fn*>(dlsym(handle, name));
  return out != nullptr;
}

std::string FormatUuid(const CUuuid& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  return absl::StrFormat("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                         b[12], b[13], b[14], b[15]);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "no NVIDIA driver: cannot load ", library, " (", dlerror(),
        "); install the NVIDIA driver or run the agent where it is visible"));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  driver->handle_ = handle;
  CudaApi& a = driver->api_;
  bool ok = Bind(handle, "cuInit", a.cuInit) &&
            Bind(handle, "cuDriverGetVersion", a.cuDriverGetVersion) &&
            Bind(handle, "cuDeviceGetCount", a.cuDeviceGetCount) &&
            Bind(handle, "cuDeviceGet", a.cuDeviceGet) &&
            Bind(handle, "cuDeviceGetName", a.cuDeviceGetName) &&
            Bind(handle, "cuDeviceGetUuid_v2", a.cuDeviceGetUuid) &&
            Bind(handle, "cuDeviceGetPCIBusId", a.cuDeviceGetPCIBusId) &&
            Bind(handle, "cuDeviceTotalMem_v2", a.cuDeviceTotalMem) &&
            Bind(handle, "cuDeviceGetAttribute", a.cuDeviceGetAttribute) &&
            Bind(handle, "cuGetErrorName", a.cuGetErrorName) &&
            Bind(handle, "cuGetErrorString", a.cuGetErrorString) &&
            Bind(handle, "cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain) &&
            Bind(handle, "cuDevicePrimaryCtxRelease_v2", a.cuDevicePrimaryCtxRelease) &&
            Bind(handle, "cuCtxPushCurrent_v2", a.cuCtxPushCurrent) &&
            Bind(handle, "cuCtxPopCurrent_v2", a.cuCtxPopCurrent) &&
            Bind(handle, "cuCtxSynchronize", a.cuCtxSynchronize) &&
            Bind(handle, "cuMemAlloc_v2", a.cuMemAlloc) &&
            Bind(handle, "cuMemFree_v2", a.cuMemFree) &&
            Bind(handle, "cuMemHostRegister_v2", a.cuMemHostRegister) &&
            Bind(handle, "cuMemHostUnregister", a.cuMemHostUnregister) &&
            Bind(handle, "cuMemGetInfo_v2", a.cuMemGetInfo) &&
            Bind(handle, "cuMemcpyHtoD_v2", a.cuMemcpyHtoD) &&
            Bind(handle, "cuMemcpyDtoH_v2", a.cuMemcpyDtoH) &&
            Bind(handle, "cuMemsetD8_v2", a.cuMemsetD8) &&
            Bind(handle, "cuPointerSetAttribute", a.cuPointerSetAttribute) &&
            Bind(handle, "cuModuleLoadData", a.cuModuleLoadData) &&
            Bind(handle, "cuModuleUnload", a.cuModuleUnload) &&
            Bind(handle, "cuModuleGetFunction", a.cuModuleGetFunction) &&
            Bind(handle, "cuLaunchKernel", a.cuLaunchKernel);
  if (!ok) {
    return absl::InternalError(absl::StrCat("NVIDIA driver too old: ", library,
                                            " lacks a symbol gdrbench needs (", dlerror(), ")"));
  }
  // Optional: absent before CUDA 11.7; the dma-buf path says so when null.
  Bind(handle, "cuMemGetHandleForAddressRange", a.cuMemGetHandleForAddressRange);
  Bind(handle, "cuFlushGPUDirectRDMAWrites", a.cuFlushGPUDirectRDMAWrites);
  if (CUresult r = a.cuInit(0); r != CUDA_SUCCESS) {
    absl::Status st = driver->ToStatus(r, "cuInit");
    return absl::FailedPreconditionError(st.message());
  }
  return driver;
}

CudaDriver::~CudaDriver() {
  // libcuda is never dlclose'd: the driver keeps threads and contexts alive
  // past the last handle, and unloading it under them crashes at exit.
}

absl::StatusOr<const CudaDriver*> CudaDriver::Shared() {
  // Leaked on purpose: contexts and buffers may outlive static destruction.
  static const auto* shared = new absl::StatusOr<std::unique_ptr<CudaDriver>>(Load());
  if (!shared->ok()) return shared->status();
  return shared->value().get();
}

absl::StatusOr<int> CudaDriver::ResolveDevice(const std::string& gpu) const {
  GDR_ASSIGN_OR_RETURN(std::vector<GpuDevice> devices, ListDevices());
  std::string want = absl::AsciiStrToLower(gpu);
  if (want.size() == 16) want = want.substr(4);  // CUDA's 8-digit domain
  if (want.size() == 7) want = absl::StrCat("0000:", want);
  int index = -1;
  if (absl::SimpleAtoi(want, &index)) {
    if (index >= 0 && index < static_cast<int>(devices.size())) return index;
  } else {
    for (const GpuDevice& d : devices) {
      if (d.pci_bdf == want) return d.index;
    }
  }
  std::vector<std::string> have;
  for (const GpuDevice& d : devices) have.push_back(absl::StrCat(d.index, "=", d.pci_bdf));
  return absl::NotFoundError(absl::StrCat(
      "no GPU \"", gpu, "\": this node has ", devices.size(), " GPU(s)",
      devices.empty() ? "" : absl::StrCat(" (", absl::StrJoin(have, ", "), ")")));
}

absl::Status CudaDriver::ToStatus(CUresult result, absl::string_view what) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = "CUDA_ERROR_UNKNOWN";
  const char* desc = "";
  if (api_.cuGetErrorName) api_.cuGetErrorName(result, &name);
  if (api_.cuGetErrorString) api_.cuGetErrorString(result, &desc);
  std::string msg = absl::StrCat(what, ": ", name, " (", desc, ")");
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(msg);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
      return absl::InvalidArgumentError(msg);
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
      return absl::FailedPreconditionError(msg);
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::UnimplementedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::StatusOr<std::string> CudaDriver::DriverVersion() const {
  int v = 0;
  if (CUresult r = api_.cuDriverGetVersion(&v); r != CUDA_SUCCESS) {
    return ToStatus(r, "cuDriverGetVersion");
  }
  return absl::StrCat(v / 1000, ".", (v % 1000) / 10);
}

absl::StatusOr<std::vector<GpuDevice>> CudaDriver::ListDevices() const {
  int count = 0;
  if (CUresult r = api_.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    return ToStatus(r, "cuDeviceGetCount");
  }
  std::vector<GpuDevice> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (CUresult r = api_.cuDeviceGet(&dev, i); r != CUDA_SUCCESS) {
      return ToStatus(r, absl::StrCat("cuDeviceGet(", i, ")"));
    }
    GpuDevice g;
    g.index = i;
    char buf[256] = {};
    if (api_.cuDeviceGetName(buf, sizeof(buf), dev) == CUDA_SUCCESS) g.name = buf;
    CUuuid uuid;
    if (api_.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) g.uuid = FormatUuid(uuid);
    char bdf[64] = {};
    if (api_.cuDeviceGetPCIBusId(bdf, sizeof(bdf), dev) == CUDA_SUCCESS) {
      // CUDA prints "00000000:17:00.0"; sysfs and nvidia-smi -q use a 4-digit domain.
      std::string s = absl::AsciiStrToLower(bdf);
      if (s.size() == 16) s = s.substr(4);
      g.pci_bdf = s;
    }
    size_t mem = 0;
    if (api_.cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS) g.memory_total_bytes = mem;
    int mode = 0;
    if (api_.cuDeviceGetAttribute(&mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev) == CUDA_SUCCESS) {
      switch (mode) {
        case CU_COMPUTEMODE_DEFAULT: g.compute_mode = "default"; break;
        case CU_COMPUTEMODE_PROHIBITED: g.compute_mode = "prohibited"; break;
        case CU_COMPUTEMODE_EXCLUSIVE_PROCESS: g.compute_mode = "exclusive_process"; break;
        default: g.compute_mode = absl::StrCat("mode ", mode);
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

#endif

}  // namespace gdrbench::agent::cuda
