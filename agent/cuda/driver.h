// The CUDA driver, loaded at run time. libcuda.so.1 is dlopen'ed, so the agent
// builds without the toolkit (then every call says so) and runs on nodes
// without GPUs (then Load() says why). `cuda.h` is used at build time only.
//
// Thread safety: a loaded CudaDriver is immutable; its entry points are the
// driver's own and as thread-safe as the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#if GDRBENCH_HAVE_CUDA_H
#include <cuda.h>
#endif

namespace gdrbench::agent::cuda {

struct GpuDevice {
  int index = 0;
  std::string uuid;      // "GPU-8f6c...": as nvidia-smi prints it
  std::string name;
  std::string pci_bdf;   // "0000:17:00.0", lower case
  uint64_t memory_total_bytes = 0;
  std::string compute_mode;  // "default", "exclusive_process", "prohibited"
};

#if GDRBENCH_HAVE_CUDA_H
// The driver entry points gdrbench uses. Every pointer is non-null once
// loaded; later additions go here and in driver.cc's symbol table.
struct CudaApi {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice);
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, CUdevice_attribute, CUdevice);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // Contexts (primary context per device, made current per thread).
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext*);
  CUresult (*cuCtxSynchronize)();
  // Memory.
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemHostRegister)(void*, size_t, unsigned int);
  CUresult (*cuMemHostUnregister)(void*);
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuPointerSetAttribute)(const void*, CUpointer_attribute, CUdeviceptr);
  // Optional (CUDA >= 11.7 drivers): null when the driver lacks it; the
  // dma-buf path then reports that the driver is too old.
  CUresult (*cuMemGetHandleForAddressRange)(void*, CUdeviceptr, size_t, CUmemRangeHandleType,
                                            unsigned long long);
  // Optional (CUDA >= 11.3): null when the driver lacks it; a verify on a GPU
  // that needs the flush then says it cannot be trusted.
  CUresult (*cuFlushGPUDirectRDMAWrites)(CUflushGPUDirectRDMAWritesTarget,
                                         CUflushGPUDirectRDMAWritesScope);
  // Modules and kernels.
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream, void**, void**);
};
#endif

class CudaDriver {
 public:
  // Loads libcuda.so.1 (or `library`) and calls cuInit(0).
  // Errors: UNIMPLEMENTED when built without cuda.h; NOT_FOUND when libcuda is
  // absent (no NVIDIA driver); FAILED_PRECONDITION when cuInit fails (e.g.
  // CUDA_ERROR_NO_DEVICE); INTERNAL when a symbol is missing (driver too old).
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load(
      const std::string& library = "libcuda.so.1");
  // The process-wide driver: loaded on first use, then kept (libcuda is never
  // unloaded). A failed load is remembered and returned again. Thread-safe.
  static absl::StatusOr<const CudaDriver*> Shared();
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // "13.0" from cuDriverGetVersion.
  absl::StatusOr<std::string> DriverVersion() const;
  // Every visible GPU, in CUDA's order.
  absl::StatusOr<std::vector<GpuDevice>> ListDevices() const;
  // The CUDA ordinal of `gpu`: an index ("0") or a PCI BDF ("0000:17:00.0",
  // any case, 4- or 8-digit domain). NOT_FOUND listing the GPUs there are.
  absl::StatusOr<int> ResolveDevice(const std::string& gpu) const;

#if GDRBENCH_HAVE_CUDA_H
  const CudaApi& api() const { return api_; }
  // The one conversion of CUresult: "<what>: CUDA_ERROR_X (description)".
  absl::Status ToStatus(CUresult result, absl::string_view what) const;
#endif

 private:
  CudaDriver() = default;
  void* handle_ = nullptr;
#if GDRBENCH_HAVE_CUDA_H
  CudaApi api_{};
#endif
};

}  // namespace gdrbench::agent::cuda
