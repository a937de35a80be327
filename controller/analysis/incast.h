// The incast view of a run (--mode incast): per target, round and rail, the
// sum of its K senders' bandwidths at the verdict size, judged against the
// target port's link rate.
//
// Verdict policy (why two numbers): a sender's cell is held to its fair share,
// min(its port, the target's port / K) (FillIdentity), so the absolute check
// keeps its meaning, and the fleet-relative check needs no change: every
// cell of an incast run shares a port K ways, so the fleet it is compared with
// is the fleet of incast cells. What a cell cannot show is the receiver: the
// per-target aggregate is judged here against the whole target port with the
// same min_fraction_of_link, so a receiver that cannot absorb K writers (PCIe,
// NIC RX, congestion control) is named as the target, not as K slow links.
// Pure functions; thread-safe.
#pragma once

#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

// Groups `run.pairs` by (round, target, rail): one IncastTarget each, ordered
// by rail, round, target. The size is the largest size any sender of the group
// measured OK (the group's verdict size; all sizes when none did: the largest
// asked). Sender verdicts come from the run's matrices at that size (retested
// groups appear again under their retest round; the matrices hold the latest
// values). expected_gbps: the sum of the senders' fair shares (their
// expected_gbps), which is the target port's rate when every sender's port is
// at least port / K, and what the senders can send at most otherwise; 0 when
// a sender's rate is unknown. The verdict needs policy.min_fraction_of_link > 0.
std::vector<v1::IncastTarget> IncastTargets(const v1::Run& run);

// Replaces run->incast with IncastTargets(*run).
void FillIncast(v1::Run* run);

}  // namespace gdrbench::controller::analysis
