#include "agent/service/preflight_offline.h"

#include "agent/preflight/capture.h"
#include "agent/service/preflight_proto.h"
#include "common/status.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::agent::service {

absl::StatusOr<OfflinePreflightOutput> RunPreflightOnce(const OfflinePreflightConfig& config) {
  GDR_ASSIGN_OR_RETURN(preflight::Report report, preflight::RunPreflightAt(config.fs_root, config.run));
  OfflinePreflightOutput out;
  out.any_failed = report.overall == preflight::Status::kFail;
  if (config.json) {
    google::protobuf::util::JsonPrintOptions jo;
    jo.add_whitespace = true;
    jo.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(ToProto(report), &out.text, jo);
  } else {
    out.text = preflight::FormatReport(report, config.verbose);
  }
  return out;
}

absl::Status CaptureNode(const std::string& out) {
  return preflight::CaptureTree(FsRoot("/"), out);
}

}  // namespace gdrbench::agent::service
