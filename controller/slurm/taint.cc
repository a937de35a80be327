#include "controller/slurm/taint.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gdrbench::controller::slurm {

std::vector<std::vector<std::string>> KubectlDrainArgvs(const std::string& kubectl, const Finding& f,
                                                        const v1::Run& run) {
  return {{kubectl, "taint", "nodes", f.node, absl::StrCat(kTaintKey, "=drain:NoSchedule"), "--overwrite"},
          {kubectl, "annotate", "nodes", f.node, absl::StrCat(kReasonAnnotation, "=", DrainReason(f, run)),
           "--overwrite"}};
}

std::vector<std::vector<std::string>> KubectlResumeArgvs(const std::string& kubectl, const std::string& node) {
  return {{kubectl, "taint", "nodes", node, absl::StrCat(kTaintKey, ":NoSchedule-")},
          {kubectl, "annotate", "nodes", node, absl::StrCat(kReasonAnnotation, "-")}};
}

std::vector<std::string> KubectlListArgv(const std::string& kubectl) {
  return {kubectl, "get", "nodes", "-o",
          absl::StrCat("jsonpath={range .items[*]}{.metadata.name}{\"|\"}{.spec.taints[?(@.key==\"", kTaintKey,
                       "\")].effect}{\"\\n\"}{end}")};
}

absl::StatusOr<std::vector<NodeState>> ParseKubectlNodes(const std::string& text) {
  std::vector<NodeState> out;
  std::set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits('|', 1));
    if (f.size() != 2 || f[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("kubectl printed '", line, "', expected NODE|EFFECT"));
    }
    if (!seen.insert(f[0]).second) continue;
    if (f[1].empty()) {
      out.push_back({f[0], "schedulable", ""});
    } else {
      out.push_back({f[0], "drained", absl::StrCat("gdrbench: tainted ", kTaintKey, ":", f[1])});
    }
  }
  return out;
}

std::vector<std::string> KubectlCanIArgv(const std::string& kubectl) {
  return {kubectl, "auth", "can-i", "patch", "nodes"};
}

}  // namespace gdrbench::controller::slurm
