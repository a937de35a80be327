// The live GPU load behind pcie_link_degraded: device-to-host copies through
// agent/memory's gpu-staged buffer (cuMemAlloc + page-locked host memory,
// libcuda dlopen'ed, no cudart), on a worker thread, while the caller reads
// the link state. A GPU that lowered its link speed to save power trains
// back up within microseconds of real traffic; a degraded link stays low.
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "agent/memory/gpu_buffer.h"
#include "agent/preflight/live_hardware.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {
namespace {

constexpr size_t kCopyBytes = size_t{64} << 20;  // ~1-3 ms per copy at PCIe Gen4/5

class LiveGpuLoad : public GpuLoad {
 public:
  absl::StatusOr<LoadResult> RunWhile(int gpu, absl::Duration duration,
                                      const std::function<void()>& during) override {
#if GDRBENCH_HAVE_CUDA_H
    GDR_ASSIGN_OR_RETURN(auto buffer, memory::GpuStagedBuffer::Create(absl::StrCat(gpu), kCopyBytes, -1));
    GDR_RETURN_IF_ERROR(buffer->StageToHost(0, kCopyBytes));  // first copy: the link is up from here on
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> copies{1};
    absl::Status copy_status;
    auto start = std::chrono::steady_clock::now();
    std::thread worker([&] {
      while (!stop.load()) {
        if (auto s = buffer->StageToHost(0, kCopyBytes); !s.ok()) {
          copy_status = s;
          return;
        }
        copies.fetch_add(1);
      }
    });
    auto end = start + absl::ToChronoNanoseconds(duration);
    while (std::chrono::steady_clock::now() < end && copy_status.ok()) during();
    stop = true;
    worker.join();
    GDR_RETURN_IF_ERROR(copy_status);
    LoadResult r;
    r.method = absl::StrCat("cuMemcpyDtoH of ", kCopyBytes >> 20, " MiB from GPU ", gpu,
                            " into page-locked host memory");
    r.bytes = copies.load() * kCopyBytes;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
#else
    (void)gpu;
    (void)duration;
    (void)during;
    return absl::UnavailableError("this agent was built without cuda.h: no GPU load");
#endif
  }
};

}  // namespace

std::unique_ptr<GpuLoad> MakeLiveGpuLoad() { return std::make_unique<LiveGpuLoad>(); }

}  // namespace gdrbench::agent::preflight
