#include "server/history/node_stats.h"

#include <algorithm>

namespace gdrbench::server::history {

double Median(std::vector<float> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

bool ParseVerdict(const std::string& name, CellVerdict* out) {
  if (name.empty()) {
    *out = CellVerdict::kNone;
  } else if (name == "pass") {
    *out = CellVerdict::kPass;
  } else if (name == "low") {
    *out = CellVerdict::kLow;
  } else if (name == "fail") {
    *out = CellVerdict::kFail;
  } else {
    return false;
  }
  return true;
}

const char* VerdictName(CellVerdict v) {
  switch (v) {
    case CellVerdict::kPass: return "pass";
    case CellVerdict::kLow: return "low";
    case CellVerdict::kFail: return "fail";
    default: return "";
  }
}

NodeStatsBuilder::NodeStatsBuilder(uint32_t nodes) : acc_(nodes) {}

void NodeStatsBuilder::Add(uint32_t src, uint32_t dst, v1::ResultStatus status, double gbps,
                           CellVerdict verdict) {
  for (uint32_t x : {src, dst}) {
    Acc& a = acc_[x];
    a.seen = true;
    if (status != v1::RESULT_STATUS_OK || verdict == CellVerdict::kFail) {
      ++a.failed;
    } else if (verdict == CellVerdict::kLow) {
      ++a.low;
    }
  }
  if (status == v1::RESULT_STATUS_OK) {
    acc_[src].tx.push_back(static_cast<float>(gbps));
    acc_[dst].rx.push_back(static_cast<float>(gbps));
  }
}

std::vector<NodeStat> NodeStatsBuilder::Finish() {
  std::vector<NodeStat> out;
  for (uint32_t i = 0; i < acc_.size(); ++i) {
    Acc& a = acc_[i];
    if (!a.seen) continue;
    NodeStat s;
    s.node = i;
    s.ok_cells = static_cast<uint32_t>(a.tx.size() + a.rx.size());
    s.low_cells = a.low;
    s.failed_cells = a.failed;
    std::vector<float> all = a.tx;
    all.insert(all.end(), a.rx.begin(), a.rx.end());
    s.median_gbps = Median(std::move(all));
    s.tx_median_gbps = Median(std::move(a.tx));
    s.rx_median_gbps = Median(std::move(a.rx));
    a = Acc{};
    out.push_back(s);
  }
  return out;
}

}  // namespace gdrbench::server::history
