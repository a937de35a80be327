#include "common/rpc/status.h"

#include "common/limits.h"

#include "absl/strings/str_cat.h"

namespace gdrbench::rpc {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Cut: a message quoting an 8 KiB request string would pass the client's
  // 8 KiB metadata limit, and the client would see that instead.
  std::string msg(status.message().substr(0, limits::kMaxErrorMessageBytes));
  if (status.message().size() > msg.size()) msg += "... (cut)";
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), msg);
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& what, const char* peer) {
  if (status.ok()) return absl::OkStatus();
  std::string msg = status.error_message();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    msg = absl::StrCat(peer, " unreachable (", msg, ")");
  } else if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    msg = absl::StrCat("deadline exceeded (", msg, ")");
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", msg));
}

}  // namespace gdrbench::rpc
