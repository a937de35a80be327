#include "controller/run/answer_bounds.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"

namespace gdrbench::controller::run {
namespace {
constexpr int kMaxCounterChanges = 256;
}  // namespace

AnswerBounds::AnswerBounds(const v1::SweepParams& asked, double link_gbps)
    : pending_(asked.sizes_bytes().begin(), asked.sizes_bytes().end()),
      ceiling_gbps_(link_gbps > 0 ? link_gbps * limits::kAnswerRateMargin * (asked.bidirectional() ? 2 : 1)
                                  : limits::kMaxPlausibleGbps) {
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
}

absl::Status AnswerBounds::CheckRate(const char* what, double v) const {
  if (!std::isfinite(v) || v < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s %g is not a rate", what, v));
  }
  if (v > ceiling_gbps_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s %.1f Gb/s is above what the link can carry (%.1f Gb/s)", what, v, ceiling_gbps_));
  }
  return absl::OkStatus();
}

absl::Status AnswerBounds::Check(const v1::RunWriteSweepResponse& m) {
  if (!error_.ok()) return error_;
  absl::Status st;
  if (summary_seen_) {
    st = absl::InvalidArgumentError("a message after the summary");
  } else if (m.has_size()) {
    const v1::SizeResult& s = m.size();
    auto it = std::lower_bound(pending_.begin(), pending_.end(), s.size_bytes());
    if (it != pending_.end() && *it == s.size_bytes()) {
      pending_.erase(it);
    } else {
      st = absl::InvalidArgumentError(absl::StrCat("a result for ", s.size_bytes(),
                                                   " B, a size not asked for or already answered"));
    }
    if (st.ok()) st = CheckRate("bw_avg_gbps", s.bw_avg_gbps());
    if (st.ok()) st = CheckRate("bw_peak_gbps", s.bw_peak_gbps());
    if (st.ok() && (!std::isfinite(s.msg_rate_mpps()) || s.msg_rate_mpps() < 0)) {
      st = absl::InvalidArgumentError(absl::StrFormat("msg_rate_mpps %g is not a rate", s.msg_rate_mpps()));
    }
  } else if (m.has_summary()) {
    summary_seen_ = true;
    st = CheckRate("bw_avg_gbps_best", m.summary().bw_avg_gbps_best());
    // An agent samples a few dozen counters (agent/counters): more is not a port's.
    if (st.ok() && m.summary().counters().changes_size() > kMaxCounterChanges) {
      st = absl::InvalidArgumentError(absl::StrCat(m.summary().counters().changes_size(),
                                                   " counter changes for one port (at most ",
                                                   kMaxCounterChanges, ")"));
    }
  }
  if (!st.ok()) {
    error_ = absl::InvalidArgumentError(absl::StrCat("the agent answered the impossible: ", st.message()));
  }
  return error_;
}

}  // namespace gdrbench::controller::run
