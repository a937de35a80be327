#include "controller/run/memory_kinds.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/analysis/gdr.h"

namespace gdrbench::controller::run {
namespace {

// The identity of `from` (endpoints without what the agents reported, rail,
// round, expected rate): a later kind's half is the same pair.
void CopyIdentity(const v1::PairResult& from, v1::PairResult* to) {
  auto copy = [](const v1::Endpoint& src, v1::Endpoint* dst) {
    dst->set_node(src.node());
    dst->set_agent_address(src.agent_address());
    dst->set_nic_device(src.nic_device());
  };
  copy(from.src(), to->mutable_src());
  copy(from.dst(), to->mutable_dst());
  to->set_rail(from.rail());
  to->set_round(from.round());
  to->set_attempts(from.attempts());
  to->set_expected_gbps(from.expected_gbps());
  if (from.has_dst_rail()) to->set_dst_rail(from.dst_rail());
}

absl::Status RunKind(const PairSide& initiator, const PairSide& target, const KindSides& k,
                     const v1::SweepParams& p, bool bidirectional, const PairTestOptions& o,
                     v1::PairResult* r,
                     absl::FunctionRef<void(bool target, const absl::Status&)> on_answer) {
  r->mutable_src()->set_memory(k.initiator_memory);
  r->mutable_dst()->set_memory(k.target_memory);
  if (!k.unavailable.empty()) {
    r->set_status(v1::RESULT_STATUS_ERROR);
    r->set_reason(k.unavailable);
    return absl::OkStatus();
  }
  PairSide i = initiator, t = target;
  i.memory = k.initiator_memory;
  t.memory = k.target_memory;
  return RunPairTest(i, t, p, bidirectional, o, r, on_answer);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitMemoryKinds(absl::string_view memory) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view item : absl::StrSplit(memory, ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory '", memory, "': an empty kind in the list; give kinds separated by commas, "
          "e.g. host,gpu"));
    }
    if (!seen.insert(std::string(item)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory '", memory, "': ", item, " is named twice; name each kind once"));
    }
    out.emplace_back(item);
  }
  return out;
}

absl::Status RunPairTestPerKind(const PairSide& initiator, const PairSide& target,
                                absl::Span<const KindSides> kinds, const v1::SweepParams& p,
                                bool bidirectional, const PairTestOptions& o, v1::PairResult* r,
                                absl::FunctionRef<void(bool target, const absl::Status&)> on_answer) {
  absl::Status first = RunKind(initiator, target, kinds.front(), p, bidirectional, o, r, on_answer);
  for (size_t k = 1; k < kinds.size(); ++k) {
    v1::PairResult* half = r->add_memory_halves();
    CopyIdentity(*r, half);
    // Each kind's test its own verify seed (from the first's when that was
    // given; drawn otherwise).
    PairTestOptions ko = o;
    if (const uint64_t first_seed = o.verify_seed ? o.verify_seed : p.seed(); first_seed != 0) {
      ko.verify_seed = DeriveSeed(first_seed, k);
    }
    absl::Status st = RunKind(initiator, target, kinds[k], p, bidirectional, ko, half, on_answer);
    if (first.ok()) first = st;
  }
  analysis::FillMemoryRatios(r);
  return first;
}

}  // namespace gdrbench::controller::run
