#include "controller/analysis/gdr.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gdrbench::controller::analysis {
namespace {

std::string SizeText(uint64_t b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return absl::StrCat(b >> 20, " MiB");
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return absl::StrCat(b >> 10, " KiB");
  return absl::StrCat(b, " B");
}

// "a->b rail 0": the pair, both ends suspect (either node's GPU path).
std::string PairSubject(const v1::PairResult& r) {
  return absl::StrCat(r.src().node().empty() ? r.src().agent_address() : r.src().node(), "->",
                      r.dst().node().empty() ? r.dst().agent_address() : r.dst().node(), " rail ",
                      r.rail());
}

constexpr char kSuspect[] =
    ": the link carries host memory at rate, so suspect the GPU path of either node (the GPU, "
    "nvidia-peermem or dma-buf, the GPU <-> NIC PCIe path: nvidia-smi topo -m, ACS), not the link";

}  // namespace

std::string MemoryKindOf(const std::string& spec) { return spec.substr(0, spec.find(':')); }

const v1::PairResult* HalfOfKind(const v1::PairResult& r, const std::string& kind) {
  auto find = [&](const std::string& want) -> const v1::PairResult* {
    if (MemoryKindOf(r.src().memory()) == want) return &r;
    for (const auto& h : r.memory_halves()) {
      if (MemoryKindOf(h.src().memory()) == want) return &h;
    }
    return nullptr;
  };
  const v1::PairResult* found = find(kind);
  if (found == nullptr && kind == "host") found = find("hugepage");
  return found;
}

bool CommonSize(const v1::PairResult& a, const v1::PairResult& b, bool staged_b, uint64_t* size,
                double* a_gbps, double* b_gbps) {
  if (a.status() != v1::RESULT_STATUS_OK || b.status() != v1::RESULT_STATUS_OK) return false;
  bool found = false;
  for (const auto& x : a.sizes()) {
    if (x.status() != v1::RESULT_STATUS_OK || !(x.bw_avg_gbps() > 0)) continue;
    if (found && x.size_bytes() <= *size) continue;
    for (const auto& y : b.sizes()) {
      if (y.size_bytes() != x.size_bytes() || y.status() != v1::RESULT_STATUS_OK) continue;
      const double bv = staged_b ? y.staged_bw_avg_gbps() : y.bw_avg_gbps();
      if (!(bv > 0)) continue;
      *size = x.size_bytes();
      *a_gbps = x.bw_avg_gbps();
      *b_gbps = bv;
      found = true;
      break;
    }
  }
  return found;
}

void FillMemoryRatios(v1::PairResult* r) {
  r->clear_gpu_host_ratio();
  r->clear_staged_host_ratio();
  const v1::PairResult* host = HalfOfKind(*r, "host");
  if (host == nullptr) return;
  uint64_t size = 0;
  double h = 0, other = 0;
  if (const v1::PairResult* gpu = HalfOfKind(*r, "gpu");
      gpu != nullptr && CommonSize(*host, *gpu, false, &size, &h, &other)) {
    r->set_gpu_host_ratio(other / h);
  }
  if (const v1::PairResult* staged = HalfOfKind(*r, "gpu-staged");
      staged != nullptr && CommonSize(*host, *staged, true, &size, &h, &other)) {
    r->set_staged_host_ratio(other / h);
  }
}

std::optional<v1::Blame> GdrBlame(const v1::PairResult& r, const v1::VerdictPolicy& policy) {
  if (r.memory_halves().empty()) return std::nullopt;
  const v1::PairResult* host = HalfOfKind(r, "host");
  const v1::PairResult* gpu = HalfOfKind(r, "gpu");
  if (host == nullptr || gpu == nullptr || host->status() != v1::RESULT_STATUS_OK) return std::nullopt;
  v1::Blame b;
  b.set_kind("gdr");
  b.set_subject(PairSubject(r));
  if (gpu->status() != v1::RESULT_STATUS_OK) {
    std::string status = v1::ResultStatus_Name(gpu->status());
    if (status.rfind("RESULT_STATUS_", 0) == 0) status = status.substr(14);
    b.set_reason(absl::StrCat("gpu memory ", status, " (",
                              gpu->reason(), ") while host memory passes on the same pair",
                              kSuspect));
    return b;
  }
  uint64_t size = 0;
  double h = 0, g = 0;
  if (policy.min_gpu_host_ratio() <= 0 || !CommonSize(*host, *gpu, false, &size, &h, &g) ||
      g >= policy.min_gpu_host_ratio() * h) {
    return std::nullopt;
  }
  b.set_reason(absl::StrFormat("gpu memory %.3g Gb/s is %.0f%% of host memory's %.3g Gb/s at %s "
                               "on the same pair (blamed below %.0f%%)",
                               g, 100 * g / h, h, SizeText(size), 100 * policy.min_gpu_host_ratio()) +
               kSuspect);
  b.set_evidence_gbps(g);
  return b;
}

std::vector<v1::Blame> GdrBlames(const std::vector<v1::PairResult>& pairs,
                                 const v1::VerdictPolicy& policy) {
  std::vector<v1::Blame> out;
  for (const v1::PairResult& r : pairs) {
    if (std::optional<v1::Blame> b = GdrBlame(r, policy); b.has_value()) out.push_back(*std::move(b));
  }
  return out;
}

size_t BadMemoryHalves(const std::vector<v1::PairResult>& pairs) {
  size_t bad = 0;
  for (const v1::PairResult& r : pairs) {
    for (const auto& h : r.memory_halves()) bad += h.status() != v1::RESULT_STATUS_OK;
  }
  return bad;
}

void JudgeMemoryHalves(const std::vector<v1::PairResult>& pairs, const v1::VerdictPolicy& policy,
                       const std::vector<std::string>& excluded, Outcome* outcome) {
  std::vector<v1::Blame> gdr = GdrBlames(pairs, policy);
  outcome->gdr_pairs = gdr.size();
  outcome->memory_halves_bad = BadMemoryHalves(pairs);
  for (auto& b : gdr) outcome->blame.push_back(std::move(b));
  Summarize(excluded, outcome);
}

}  // namespace gdrbench::controller::analysis
