#include "common/status.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gdrbench {

absl::Status ErrnoToStatus(int err, absl::string_view what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err), " (errno ", err, ")");
  switch (err) {
    case 0:
      return absl::UnknownError(absl::StrCat(what, ": failed without errno"));
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case EINVAL:
      return absl::InvalidArgumentError(msg);
    case ENOMEM:
    case ENOSPC:
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(msg);
    case EOPNOTSUPP:
    case ENOSYS:
      return absl::UnimplementedError(msg);
    case ETIMEDOUT:
      return absl::DeadlineExceededError(msg);
    case EAGAIN:
    case EBUSY:
    case ECONNREFUSED:
    case ECONNRESET:
    case EHOSTUNREACH:
    case ENETUNREACH:
      return absl::UnavailableError(msg);
    case EEXIST:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace gdrbench
