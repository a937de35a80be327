// Link flags: a test whose bandwidth is fine but whose ports' counters say
// the link flapped, erred or retransmitted (ClusterKit and NHC flag these: a
// link that passes today by retransmitting is the one that fails next). The
// counters are both ports' (PairResult.src_counters / dst_counters, sampled
// by each agent around the test, agent/counters/port_counters.h).
//   COUNTER_KIND_LINK        any growth on either port flags the test
//                            (link_downed: "flapped"; symbol errors, ...: "erred");
//   COUNTER_KIND_RETRANSMIT  the growth on a port flags it when above
//                            policy.min_retransmits and above
//                            policy.max_retransmit_fraction x the packets
//                            the port moved (any growth past
//                            min_retransmits when it has no packet counter);
//   congestion and packets   reported, never flagged (congestion is the
//                            fabric's load, not a broken link).
// Counters that could not be compared (went back, saturated, vanished) flag
// nothing: their notes stay in the result. Only tests that ran OK are
// flagged; a flag never changes a verdict or Run.passed.
// Thread safety: none (FlagLinks mutates the run).
#pragma once

#include <string>
#include <vector>

#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::analysis {

// The flag of one test: "the link retransmitted: rcvd_seq_err +812 on node02
// rxe0 (3.1 % of 26000 packets)", parts joined by "; "; "" when none, when
// the test did not run OK, or with policy.ignore_link_counters.
std::string LinkFlag(const v1::PairResult& pair, const v1::VerdictPolicy& policy);

// Sets link_flag on every pair of `run` (and on each of its memory_halves,
// named with their memory in the summary); a flagged test's cells in the
// matrices get it in their reason ("pass, but the link retransmitted: ...",
// or appended to a low cell's reason); the run's summary names the tests
// whose error counters grew ("; 1 test(s) flagged by link counters for link
// errors: a->b rail 0, ...", at most 8) and counts those that only
// retransmitted, with the worst ("; 9 test(s) flagged by link counters for
// retransmits, the worst c->d rail 0 (0.8 % of its packets)"): on a lossy
// fabric many tests retransmit a little, and a list reads as many alarms.
// Returns the number of flagged tests.
size_t FlagLinks(const v1::VerdictPolicy& policy, v1::Run* run);

class MatrixSet;
// The same for a run kept as compact matrices (its pairs streamed from the
// journal): `pairs` are the run's pairs in its order, or only those whose
// LinkFlag is not empty (the others change nothing); each gets its
// link_flag, the matrices' cell reasons and `summary` change as
// FlagLinks(policy, run) changes the run's. Pairs with memory_halves are not
// handled here (their halves stay unflagged): a --memory list run keeps its
// pairs and uses FlagLinks(policy, run).
size_t FlagLinks(const v1::VerdictPolicy& policy, std::vector<v1::PairResult>* pairs, MatrixSet* matrices,
                 std::string* summary);

}  // namespace gdrbench::controller::analysis
