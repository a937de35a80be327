#include "controller/slurm/verdict_files.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::slurm {
namespace {

bool PlainFileName(const std::string& n) {
  return !n.empty() && n[0] != '.' && n.find('/') == std::string::npos &&
         n.find('\0') == std::string::npos && n.find('\n') == std::string::npos;
}

absl::Status WriteOne(const std::filesystem::path& dir, const NodeVerdict& v, const std::string& run_id) {
  const std::filesystem::path tmp = dir / ("." + v.node + ".tmp");
  const std::filesystem::path final_path = dir / v.node;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << FormatVerdictFile(v, run_id);
    out.flush();
    if (!out) return ErrnoToStatus(errno, absl::StrCat("cannot write ", tmp.string()));
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("cannot rename ", tmp.string(), " to ", final_path.string()));
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormatVerdictFile(const NodeVerdict& v, const std::string& run_id) {
  std::string out = absl::StrCat("gdrbench-verdict ", kVerdictFormatVersion, "\nnode ", v.node,
                                 "\nrun ", run_id, "\nverdict ", VerdictName(v.verdict), "\n");
  if (!v.reason.empty()) absl::StrAppend(&out, "reason ", v.reason, "\n");
  return out;
}

absl::Status WriteVerdictFiles(const DrainPlan& plan, const std::string& dir) {
  for (const auto& v : plan.verdicts) {
    if (!PlainFileName(v.node)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", v.node, "' of run ", plan.run_id, " is not a plain file name: no verdict written"));
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  for (const auto& v : plan.verdicts) {
    if (v.verdict != Verdict::kPass && v.verdict != Verdict::kDrain) continue;
    GDR_RETURN_IF_ERROR(WriteOne(dir, v, plan.run_id));
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::slurm
