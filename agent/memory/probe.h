// A one-shot registration probe: the real question "can this NIC register
// this memory, and how?", asked with a throw-away context and PD. Used by
// preflight (the one-page GPU registration probe) and the gpu test tier.
//
// Thread safety: stateless; safe from any thread.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/memory/memory.h"

namespace gdrbench::agent::memory {

// Opens `rdma_device` (empty: the first device libibverbs lists), allocates a
// protection domain, registers `buffer` for local write + remote read/write,
// releases it all, and returns the method used ("ibv_reg_mr",
// "ibv_reg_dmabuf_mr", "ibv_reg_mr+peermem").
// Errors: FAILED_PRECONDITION "no RDMA device: ..." when libibverbs lists
// none; NOT_FOUND for an unknown device name (with the list); the errno of
// ibv_open_device / ibv_alloc_pd; Register's errors.
absl::StatusOr<std::string> ProbeRegistration(Buffer& buffer, const std::string& rdma_device);

}  // namespace gdrbench::agent::memory
