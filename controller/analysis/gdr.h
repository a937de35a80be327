// Blame kind "gdr": host and GPU memory measured on the same pair
// (--memory host,gpu, run/memory_kinds.h) tell a node's PCIe/GPUDirect path
// apart from the link. When the host half of a pair passes (status OK) and
// its gpu half failed, or measured below min_gpu_host_ratio x host at the
// largest size both measured, the link carried host memory at rate, so the
// GPU side is to blame: the GPU, nvidia-peermem or dma-buf, the GPU <-> NIC
// PCIe path of one of the two nodes. The matrices and the other blames see
// the first kind only; these blames come on top.
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/analysis/verdicts.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

// The kind a spec names: "gpu:3" -> "gpu", "gpu-staged:0" -> "gpu-staged".
std::string MemoryKindOf(const std::string& spec);

// The result of `kind` ("host", "gpu", ...) on a pair: the result itself or
// one of its memory_halves, the first that ran that kind (by the initiator's
// memory spec); nullptr when none did. "host" also matches "hugepage" (host
// memory too) when no host half is there.
const v1::PairResult* HalfOfKind(const v1::PairResult& r, const std::string& kind);

// The largest size both results measured OK, and each one's BW average there
// (`staged_b`: b's copy + wire BW, staged_bw_avg_gbps). False when both
// results are not OK or share no such size.
bool CommonSize(const v1::PairResult& a, const v1::PairResult& b, bool staged_b, uint64_t* size,
                double* a_gbps, double* b_gbps);

// Sets gpu_host_ratio and staged_host_ratio of `r` from it and its halves (0
// when a kind is missing, failed or shares no OK size with host).
void FillMemoryRatios(v1::PairResult* r);

// The "gdr" blame of one pair, nullopt when it has none (the reports mark
// the pair's gpu half with it).
std::optional<v1::Blame> GdrBlame(const v1::PairResult& r, const v1::VerdictPolicy& policy);

// One "gdr" blame per such pair, in `pairs` order; none with the check off
// (min_gpu_host_ratio 0 is off for low ratios; a failed gpu half beside a
// passing host half is blamed whatever the ratio).
std::vector<v1::Blame> GdrBlames(const std::vector<v1::PairResult>& pairs,
                                 const v1::VerdictPolicy& policy);

// The memory halves (later kinds of a --memory list) that did not finish OK.
size_t BadMemoryHalves(const std::vector<v1::PairResult>& pairs);

// Adds GdrBlames to `outcome`, counts the bad halves and re-summarizes: a
// run with a failed half or a gdr blame does not pass. `excluded` as Judge.
void JudgeMemoryHalves(const std::vector<v1::PairResult>& pairs, const v1::VerdictPolicy& policy,
                       const std::vector<std::string>& excluded, Outcome* outcome);

}  // namespace gdrbench::controller::analysis
