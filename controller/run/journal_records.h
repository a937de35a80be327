// The journal's record codec (journal.h has the file format): a finished
// test as a v1::JournalTest written straight from the PairResult (no copy of
// its sizes or summary), and back into the whole PairResult with the plan's
// identities. Internal to controller/run; stateless, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "controller/run/journal.h"
#include "gdrbench/v1/journal.pb.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run::journal_records {

// The file format's constants (journal.h): the first line of format 2, the
// largest frame body either side accepts, and the kinds of frame.
inline constexpr std::string_view kMagic = "gdrbench-journal 2\n";
inline constexpr uint32_t kMaxRecord = 64 << 20;
inline constexpr char kHeader = 'H', kPlan = 'P', kTest = 'T';

// A frame's little-endian u32 (its length or checksum).
inline uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// Appends the JournalTest wire bytes of `pair` (src/dst: its nodes' plan
// indices). `plan_expected_gbps`: what FillIdentity computed; the pair's own
// value is recorded only when it differs. Returns INTERNAL when the pair's
// endpoints are not the plan's (NIC, memory spec or agent address): a
// journal must not rewrite a result on resume.
absl::Status AppendTest(const v1::PairResult& pair, uint32_t src, uint32_t dst, double plan_expected_gbps,
                        const v1::JournalPlan& plan, std::string* out);

// The PairResult `test` was written from. `out`: a fresh message or the one
// the previous call filled (every field a record carries is assigned, so
// nothing of the record before survives, and its allocations are reused).
// DATA_LOSS when it names a node or rail the plan does not have.
absl::Status ToPairResult(const v1::JournalTest& test, const v1::JournalPlan& plan, v1::PairResult* out);

// DATA_LOSS when a record's indices name a node or rail `plan` lacks
// (`dst_rail`: the targets' rail, present in cross-rail records only).
absl::Status CheckIndices(const v1::JournalPlan& plan, uint32_t src, uint32_t dst, uint32_t rail,
                          bool has_dst_rail, uint32_t dst_rail);

// The plan's rails per node and link rates in flat arrays, made once per
// read: looking each record's nodes up in the JournalPlan's nested messages
// cost a cache miss or two a record (a thirteenth of a resume's read at
// 1024 x 8). Immutable after construction.
class FlatPlan {
 public:
  explicit FlatPlan(const v1::JournalPlan& plan);
  // CheckIndices's answer, in its words.
  absl::Status Check(uint32_t src, uint32_t dst, uint32_t rail, bool has_dst_rail, uint32_t dst_rail) const;
  // PlanExpectedGbps's; the indices checked before.
  double ExpectedGbps(uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail) const;

 private:
  uint32_t nodes_ = 0, max_rails_ = 0;
  std::vector<uint32_t> rails_;    // per node
  std::vector<double> link_gbps_;  // [node * max_rails_ + rail]
};

// What a resume needs of the JournalTest whose wire bytes are `p[0, n)`
// (FinishedTest: its indices, round and the fields the matrices take),
// decoded from the bytes without building the message. DATA_LOSS as
// ToPairResult, and "bad test record" for bytes that are not a well-formed
// message (a field cut short, a group, a zero tag).
absl::Status DecodeFinished(const char* p, size_t n, const FlatPlan& plan, FinishedTest* out);

// The plan's rate for a test (FillIdentity's rule over the plan's link rates):
// src's port of `rail`, dst's of `dst_rail` (`rail` but in cross-rail runs).
double PlanExpectedGbps(const v1::JournalPlan& plan, uint32_t src, uint32_t dst, uint32_t rail, uint32_t dst_rail);

// The checksum of a frame's body (journal.cc; not cryptographic: torn and
// garbled records). Here so that the fuzzer gets past it to the records
// (tests/fuzz/fuzz_journal.cc).
uint32_t FrameChecksum(const char* body, size_t n);

}  // namespace gdrbench::controller::run::journal_records
