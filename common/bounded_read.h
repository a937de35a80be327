// Reading a file someone else named (a flag, an inventory, a capture's
// sysfs attribute) without trusting it: regular files only (a FIFO is opened
// without waiting for a writer and refused, as are devices and directories),
// and never more than a cap, checked against the size before reading and
// again while reading (procfs and sysfs report sizes of 0 or 4096).
//
// Thread safety: free functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gdrbench {

// `path` whole. NOT_FOUND, PERMISSION_DENIED as the open says;
// FAILED_PRECONDITION naming the path when it is not a regular file ("is a
// FIFO, not a regular file") or holds more than `max_bytes`.
// Without `max_bytes`: limits::kMaxFileBytes.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path);
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes);

// The same on an fd opened by the caller (O_NONBLOCK is cleared for the
// read); `name` is the path for messages. Does not close `fd`.
absl::StatusOr<std::string> ReadRegularFd(int fd, const std::string& name, size_t max_bytes);

}  // namespace gdrbench
