#include "agent/service/preflight_offline.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/preflight/capture.h"
#include "agent/preflight/preflight.h"
#include "agent/preflight/runner.h"
#include "agent/service/preflight_proto.h"
#include "common/status.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::agent::service {

absl::StatusOr<OfflinePreflightOutput> RunPreflightOnce(const OfflinePreflightConfig& config) {
  struct stat st;
  if (stat(config.fs_root.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fs-root ", config.fs_root, " does not exist"));
  }
  std::string root = config.fs_root;
  std::string extracted;
  if (S_ISREG(st.st_mode)) {
    if (!absl::EndsWith(root, ".tar.gz") && !absl::EndsWith(root, ".tgz")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--fs-root ", root, " is a file but not a capture (.tar.gz from gdrbench-agent capture)"));
    }
    ASSIGN_OR_RETURN(extracted, preflight::ExtractTree(root));
    root = extracted;
  }
  auto report = preflight::RunPreflightOn(FsRoot(root), config.checks, config.expect);
  if (!extracted.empty()) preflight::RemoveTree(extracted);
  if (!report.ok()) return report.status();
  if (!extracted.empty()) report->fs_root = config.fs_root;  // name the tarball, not the temp dir
  OfflinePreflightOutput out;
  out.any_failed = report->overall == preflight::Status::kFail;
  if (config.json) {
    google::protobuf::util::JsonPrintOptions jo;
    jo.add_whitespace = true;
    jo.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(ToProto(*report), &out.text, jo);
  } else {
    out.text = preflight::FormatReport(*report);
  }
  return out;
}

absl::Status CaptureNode(const std::string& out) {
  return preflight::CaptureTree(FsRoot("/"), out);
}

}  // namespace gdrbench::agent::service
