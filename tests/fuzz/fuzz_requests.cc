// libFuzzer: the protobuf bytes of each agent request as a controller (or
// anyone reaching the port) sends them, through the agent's own validation
// of the data path and preflight requests (agent/service/sweep_convert,
// agent/memory's spec parser, preflight_proto) and rpc::ToGrpc, which
// carries their errors back. Invariants: nothing crashes or hangs; what is
// accepted is inside common/sweep_limits.h; an error leaves as at most
// limits::kMaxErrorMessageBytes (plus the marker of a cut).
// The first byte picks the request type, the rest is its wire encoding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/memory/memory.h"
#include "agent/service/preflight_proto.h"
#include "agent/service/sweep_convert.h"
#include "common/limits.h"
#include "common/rpc/status.h"
#include "common/sweep_limits.h"
#include "gdrbench/v1/agent.pb.h"

namespace {

namespace v1 = gdrbench::v1;
namespace svc = gdrbench::agent::service;
namespace lim = gdrbench::sweep_limits;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// An error as the client would receive it.
void Sent(const absl::Status& st) {
  if (st.ok()) return;
  grpc::Status g = gdrbench::rpc::ToGrpc(st);
  Check(!g.ok());
  Check(g.error_message().size() <= gdrbench::limits::kMaxErrorMessageBytes + 64);
}

void Params(const v1::SweepParams& p) {
  auto o = svc::ToSweepOptions(p);
  Sent(o.status());
  if (o.ok()) {
    Check(!o->sizes_bytes.empty() && o->sizes_bytes.size() <= lim::kMaxSizes);
    for (uint64_t s : o->sizes_bytes) Check(s >= lim::kMinSizeBytes && s <= lim::kMaxSizeBytes);
    Check(o->qps >= 1 && o->qps <= lim::kMaxQps);
    Check(o->tx_depth >= 1 && o->tx_depth <= lim::kMaxTxDepth);
    Check(o->iterations <= lim::kMaxIterations && o->duration_ns <= lim::kMaxDurationNs);
    Check(o->post_list >= 1 && o->post_list <= lim::kMaxPostList);
  }
  auto m = gdrbench::agent::memory::MemorySpec::Parse(p.memory());
  Sent(m.status());
  if (m.ok() && o.ok()) Sent(svc::CheckMemoryForTest(*m, *o));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int kind = data[0] % 6;
  const void* bytes = data + 1;
  const int n = static_cast<int>(size - 1);
  switch (kind) {
    case 0: {
      v1::SweepParams p;
      if (p.ParseFromArray(bytes, n)) Params(p);
      break;
    }
    case 1: {
      v1::OpenTargetRequest r;
      if (!r.ParseFromArray(bytes, n)) break;
      Params(r.params());
      break;
    }
    case 2: {
      v1::RunWriteSweepRequest r;
      if (!r.ParseFromArray(bytes, n)) break;
      Params(r.params());
      if (r.has_target_oob()) Sent(svc::FromProto(r.target_oob()).status());
      break;
    }
    case 3: {
      v1::ConnectTargetRequest r;
      if (r.ParseFromArray(bytes, n)) Sent(svc::FromProto(r.initiator()).status());
      break;
    }
    case 4: {
      v1::RunPreflightRequest r;
      if (r.ParseFromArray(bytes, n)) (void)svc::FromProto(r.expectations());
      break;
    }
    case 5: {
      // Any message's strings quoted into an error: the cut must hold.
      Sent(absl::InvalidArgumentError(std::string(static_cast<const char*>(bytes), static_cast<size_t>(n))));
      break;
    }
  }
  return 0;
}
