#include "controller/run/pair_verdict.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/run/pair_tester.h"

namespace gdrbench::controller::run {
namespace {

// Every size that is not OK, both directions: "65536 B: <error>".
std::vector<std::string> BadSizes(const v1::PairResult& r) {
  std::vector<std::string> bad;
  for (const auto* list : {&r.sizes(), &r.reverse_sizes()}) {
    for (const auto& s : *list) {
      if (s.status() == v1::RESULT_STATUS_OK) continue;
      bad.push_back(absl::StrCat(s.size_bytes(), " B", list == &r.sizes() ? "" : " (reverse)", ": ",
                                 s.error().empty() ? "failed" : s.error()));
    }
  }
  return bad;
}

}  // namespace

std::string AgentError(absl::string_view rpc, absl::string_view name, absl::string_view message) {
  const std::string own = absl::StrCat(rpc, " on ");
  if (!absl::StartsWith(message, own)) return absl::StrCat(own, name, ": ", message);
  if (absl::StartsWith(message.substr(own.size()), absl::StrCat(name, ":"))) return std::string(message);
  return absl::StrCat(name, ": ", message);
}

void ApplyVerify(const v1::VerifyTargetResponse& v, bool verify, v1::PairResult* r) {
  for (const auto& vs : v.sizes()) {
    for (auto& s : *r->mutable_sizes()) {
      if (s.size_bytes() != vs.size_bytes()) continue;
      s.set_verified(vs.verified());
      s.set_verify_first_bad_offset(vs.verify_first_bad_offset());
      if (verify && !vs.verified()) {
        s.set_status(v1::RESULT_STATUS_FAILED);
        s.set_error(vs.error().empty() ? absl::StrCat("data mismatch: first bad byte at offset ",
                                                      vs.verify_first_bad_offset())
                                       : vs.error());
      }
    }
  }
  *r->mutable_reverse_sizes() = v.reverse_sizes();
  ApplyReverseChecks(r);
}

void SetVerdict(absl::string_view initiator, absl::string_view target, const PairSteps& steps,
                v1::PairResult* r) {
  if (!steps.bounds.ok()) {
    r->clear_sizes();
    Fail(r, v1::RESULT_STATUS_ERROR,
         absl::StrCat("RunWriteSweep on ", initiator, ": ", steps.bounds.message()));
  } else if (!steps.connect.ok()) {
    Fail(r, v1::RESULT_STATUS_ERROR, AgentError("ConnectTarget", target, steps.connect.message()));
  } else if (!steps.sweep.ok()) {
    Fail(r,
         steps.sweep.code() == absl::StatusCode::kDeadlineExceeded ? v1::RESULT_STATUS_FAILED
                                                                   : v1::RESULT_STATUS_ERROR,
         AgentError("RunWriteSweep", initiator, steps.sweep.message()));
  } else if (!steps.got_summary) {
    Fail(r, v1::RESULT_STATUS_ERROR,
         absl::StrCat("RunWriteSweep on ", initiator, ": the stream ended without a summary"));
  } else if (r->summary().status() != v1::RESULT_STATUS_OK) {
    Fail(r,
         r->summary().status() == v1::RESULT_STATUS_UNSPECIFIED ? v1::RESULT_STATUS_ERROR
                                                                : r->summary().status(),
         absl::StrCat(
             initiator, "->", target, ": ",
             r->summary().error().empty() ? "the sweep failed without a reason" : r->summary().error()));
  } else if (!steps.verify.ok()) {
    Fail(r, v1::RESULT_STATUS_ERROR, AgentError("VerifyTarget", target, steps.verify.message()));
  } else if (std::vector<std::string> bad = BadSizes(*r); !bad.empty()) {
    Fail(r, v1::RESULT_STATUS_FAILED, absl::StrCat(initiator, "->", target, ": ", absl::StrJoin(bad, "; ")));
  } else {
    r->set_status(v1::RESULT_STATUS_OK);
  }
}

}  // namespace gdrbench::controller::run
