// Pieces both sides of a test share: the connect private data (the
// initiator's buffer slice, so a bidirectional target can write back), and
// what a side allocated and registered.
#pragma once

#include <cstdint>
#include <cstring>
#include <endian.h>
#include <string>

#include "absl/status/statusor.h"
#include "agent/bench/verbs_ops.h"
#include "agent/verbs/handles.h"

namespace gdrbench::agent::bench {

// Carried in rdma_connect's private data (24 bytes, big-endian).
struct ConnectData {
  uint32_t qp_index = 0;
  uint32_t rkey = 0;
  uint64_t addr = 0;
  uint64_t length = 0;

  static constexpr uint8_t kBytes = 24;
  void Encode(uint8_t* out) const {
    uint32_t a = htobe32(qp_index), b = htobe32(rkey);
    uint64_t c = htobe64(addr), d = htobe64(length);
    std::memcpy(out, &a, 4);
    std::memcpy(out + 4, &b, 4);
    std::memcpy(out + 8, &c, 8);
    std::memcpy(out + 16, &d, 8);
  }
  // INVALID_ARGUMENT when the data is too short (not a gdrbench initiator).
  static absl::StatusOr<ConnectData> Decode(const uint8_t* in, size_t len) {
    if (len < kBytes) {
      return absl::InvalidArgumentError(
          "connection request without gdrbench connect data (not a gdrbench initiator)");
    }
    ConnectData d;
    uint32_t a, b;
    uint64_t c, e;
    std::memcpy(&a, in, 4);
    std::memcpy(&b, in + 4, 4);
    std::memcpy(&c, in + 8, 8);
    std::memcpy(&e, in + 16, 8);
    d.qp_index = be32toh(a);
    d.rkey = be32toh(b);
    d.addr = be64toh(c);
    d.length = be64toh(e);
    return d;
  }
};

// The send CQ of a side that may post `tx_depth` WRITEs per QP (a
// completion asked every `cq_moderation`) plus kControlSendSlots control
// SENDs and keep-alives: room for every WQE of every QP, since a provider
// may flush each outstanding WQE with a completion of its own when a QP
// fails, signalled or not.
inline int CqEntriesFor(uint32_t qps, uint32_t tx_depth, uint32_t cq_moderation) {
  (void)cq_moderation;
  return static_cast<int>(qps * (tx_depth + kControlSendSlots) + 16);
}

}  // namespace gdrbench::agent::bench
