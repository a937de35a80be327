// DescribePortCounters (report.h): one port's counters around a test, as
// `gdrbench pair`, summary.md and report.html print them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/report/report.h"

namespace gdrbench::controller::report {

std::string DescribePortCounters(const v1::PortCounters& pc) {
  if (!pc.absent().empty()) return pc.absent();
  if (pc.device().empty() && pc.changes().empty()) return "not sampled (the agent sent no counters)";
  std::vector<std::string> grew, notes;
  for (const auto& c : pc.changes()) {
    std::string name = c.name().substr(c.name().rfind('/') + 1);
    if (c.note().empty()) {
      grew.push_back(absl::StrCat(name, " +", c.delta()));
    } else {
      notes.push_back(absl::StrCat(name, ": ", c.note()));
    }
  }
  std::string out = absl::StrCat(pc.device(), " port ", pc.port(), ": ");
  if (grew.empty() && notes.empty()) {
    absl::StrAppend(&out, "none of ", pc.compared(), " counters changed");
  }
  absl::StrAppend(&out, absl::StrJoin(grew, ", "));
  if (!notes.empty()) absl::StrAppend(&out, grew.empty() ? "" : "; ", absl::StrJoin(notes, "; "));
  return out;
}

}  // namespace gdrbench::controller::report
