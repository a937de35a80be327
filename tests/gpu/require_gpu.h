// The gpu tier's skip: REQUIRE_GPU() at the top of a test skips it, saying
// why, on a machine without a usable NVIDIA GPU (no driver, or no GPU).
// Only with cuda.h (GDRBENCH_HAVE_CUDA_H).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "agent/cuda/driver.h"

namespace gdrbench::testing_gpu {

// Empty when a GPU is usable, else why not (the skip reason).
inline std::string NoGpuReason() {
  auto driver = agent::cuda::CudaDriver::Shared();
  if (!driver.ok()) return std::string(driver.status().message());
  auto devices = (*driver)->ListDevices();
  if (!devices.ok()) return std::string(devices.status().message());
  if (devices->empty()) return "the NVIDIA driver sees no GPU";
  return "";
}

}  // namespace gdrbench::testing_gpu

#define REQUIRE_GPU()                                                                 \
  do {                                                                                \
    if (std::string why = ::gdrbench::testing_gpu::NoGpuReason(); !why.empty()) {     \
      GTEST_SKIP() << "needs an NVIDIA GPU: " << why;                                 \
    }                                                                                 \
  } while (0)
