#include "controller/slurm/resume.h"

#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gdrbench::controller::slurm {

absl::StatusOr<std::vector<NodeState>> ParseSinfoNodes(const std::string& text) {
  std::vector<NodeState> out;
  std::set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits('|', 2));
    if (f.size() != 3 || f[0].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("sinfo printed '", line, "', expected NODE|STATE|REASON"));
    }
    if (!seen.insert(f[0]).second) continue;
    out.push_back({f[0], absl::AsciiStrToLower(f[1]), f[2]});
  }
  return out;
}

bool DrainedByGdrbench(const NodeState& s) {
  return absl::StrContains(s.state, "drain") && absl::StartsWith(s.reason, "gdrbench:");
}

std::vector<ResumeStep> PlanResume(const DrainPlan& plan, const std::vector<NodeState>& states) {
  std::map<std::string, const NodeVerdict*> verdicts;
  for (const auto& v : plan.verdicts) verdicts[v.node] = &v;
  std::vector<ResumeStep> out;
  for (const auto& s : states) {
    if (!DrainedByGdrbench(s)) continue;
    auto it = verdicts.find(s.node);
    if (it == verdicts.end()) continue;
    const NodeVerdict& v = *it->second;
    if (v.verdict == Verdict::kPass) {
      out.push_back({s.node, true, absl::StrCat("passed in run ", plan.run_id)});
    } else {
      out.push_back({s.node, false,
                     absl::StrCat("run ", plan.run_id, " says ", VerdictName(v.verdict),
                                  v.reason.empty() ? "" : ": ", v.reason)});
    }
  }
  return out;
}

std::vector<std::string> ScontrolResumeArgv(const std::string& scontrol, const std::string& node) {
  return {scontrol, "update", "NodeName=" + node, "State=RESUME"};
}

std::string ShowConfigValue(const std::string& show_config, const char* key) {
  for (absl::string_view line : absl::StrSplit(show_config, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, key)) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "=")) continue;  // a longer key: "SlurmUserX", "SlurmdUser"
    return std::string(absl::StripAsciiWhitespace(line));
  }
  return "";
}

std::string ParseSlurmUser(const std::string& show_config) {
  std::string user = ShowConfigValue(show_config, "SlurmUser");
  return user.substr(0, user.find('('));
}

absl::Status CheckAdminRights(const SlurmIdentity& id, const std::string& action) {
  if (id.uid == 0) return absl::OkStatus();
  if (!id.slurm_user.empty() && id.user == id.slurm_user) return absl::OkStatus();
  if (absl::EqualsIgnoreCase(id.admin_level, "Administrator")) return absl::OkStatus();
  const std::string need = absl::StrCat(
      "slurmctld lets only root, the SlurmUser",
      id.slurm_user.empty() ? "" : absl::StrCat(" (", id.slurm_user, ")"),
      " or a user with AdminLevel=Administrator change a node's state: run as one of them, or "
      "`sacctmgr modify user ", id.user, " set AdminLevel=Administrator`");
  if (id.accounting_storage == kNoAccounting && !id.slurm_user.empty()) {
    // AdminLevel lives in the accounting database (Slurm's "User
    // Permissions" page): without one, nobody has it.
    return absl::PermissionDeniedError(absl::StrCat(
        id.user, " may not ", action, ": accounting is off (AccountingStorageType = ", kNoAccounting,
        "), so no user has an AdminLevel and slurmctld lets only root and the SlurmUser (", id.slurm_user,
        ") change a node's state: run as one of them"));
  }
  if (id.slurm_user.empty() || id.admin_level.empty()) {
    const bool no_user = id.slurm_user.empty();
    const std::string& why = no_user ? id.slurm_user_unknown_why : id.admin_level_unknown_why;
    return absl::PermissionDeniedError(
        absl::StrCat("cannot tell whether ", id.user, " may ", action, " (",
                     no_user ? "scontrol show config gave no SlurmUser" : "sacctmgr gave no AdminLevel",
                     why.empty() ? "" : ": ", why, "); ", need));
  }
  return absl::PermissionDeniedError(absl::StrCat(id.user, " (AdminLevel ", id.admin_level, ") may not ",
                                                  action, ": ", need));
}

}  // namespace gdrbench::controller::slurm
