// What both connection modes share once the QPs are up: the SweepEndpoint
// of a direction, the latency endpoint, the target's part of a test (the
// reverse sweep then "reverse sweep done", or the latency responder) and the
// check of the reverse verify regions.
// Thread safety: the thread that owns the QPs.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "agent/bench/control.h"
#include "agent/bench/initiator.h"
#include "agent/bench/latency_sweep.h"
#include "agent/bench/sweep_options.h"
#include "agent/bench/write_sweep.h"
#include "agent/memory/memory.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::bench {

// A local buffer of `qps` slices of `slice_bytes`, registered with `lkey`.
struct LocalSlices {
  memory::Buffer* buffer = nullptr;
  uint64_t slice_bytes = 0;
  uint32_t lkey = 0;
};

// The direction from `local` to `remote` over `qps` (one per slice), with
// `verify_offsets` as its regions and `seed` (a TestSeed, or its
// ReverseSeed) as its pattern: each size's region gets SizeSeed(seed, size).
inline SweepEndpoint MakeEndpoint(const LocalSlices& local, const std::vector<ibv_qp*>& qps,
                                  const std::vector<RemoteSlice>& remote,
                                  std::vector<uint64_t> verify_offsets, uint64_t seed) {
  SweepEndpoint ep;
  ep.slice_bytes = local.slice_bytes;
  auto* base = static_cast<uint8_t*>(local.buffer->data());
  for (size_t q = 0; q < qps.size(); ++q) {
    ep.slices.push_back(QpTarget{.qp = qps[q],
                                 .local_addr = reinterpret_cast<uint64_t>(base + q * local.slice_bytes),
                                 .lkey = local.lkey,
                                 .remote_addr = q < remote.size() ? remote[q].addr : 0,
                                 .rkey = q < remote.size() ? remote[q].rkey : 0});
  }
  ep.verify_offsets = std::move(verify_offsets);
  memory::Buffer* buf = local.buffer;
  ep.fill_pattern = [buf, seed](uint64_t off, uint64_t len, std::string* err) {
    absl::Status st = buf->FillPattern(off, len, SizeSeed(seed, len));
    if (!st.ok()) *err = std::string(st.message());
    return st.ok();
  };
  if (buf->kind() == memory::Kind::kGpuStaged) {
    ep.stage = [buf](uint64_t off, uint64_t len, std::string* err) {
      absl::Status st = buf->StageToHost(off, len);
      if (!st.ok()) *err = std::string(st.message());
      return st.ok();
    };
  }
  return ep;
}

inline LatencyEndpoint MakeLatencyEndpoint(const SweepEndpoint& ep, const BufferLayout& layout,
                                           bool posts_first) {
  return LatencyEndpoint{.qp = ep.slices.front(), .recv_offset = layout.recv_offset,
                         .posts_first = posts_first};
}

// The target's part of a test once connected: the latency responder, or the
// reverse sweep of a bidirectional bandwidth test followed by "reverse sweep
// done" on QP 0. `reverse` is the target -> initiator direction.
template <typename Ops>
void RunTargetPart(Ops& ops, const SweepOptions& o, const BufferLayout& layout,
                   const SweepEndpoint& reverse, const SweepIdentity& id,
                   const std::atomic<bool>& stop, const std::atomic<bool>* abort,
                   const std::function<void(const SizeOutcome&)>& on_size) {
  if (o.test == TestKind::kWriteLat) {
    RunLatencySweep(ops, o, MakeLatencyEndpoint(reverse, layout, false), id, stop,
                    abort != nullptr ? abort : &stop, on_size);
    return;
  }
  if (!o.bidirectional) return;
  RunSweep(ops, o, reverse, id, stop, on_size);
  absl::Status st = SendControl(ops, 0, ControlMessage::kReverseDone, kControlSendTimeoutNs);
  if (!st.ok()) spdlog::warn("reverse sweep: {}", std::string(st.message()));
}

}  // namespace gdrbench::agent::bench
