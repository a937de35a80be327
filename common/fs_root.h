// FsRoot: every read of /sys, /proc, /etc and /dev goes through one of these,
// so checks and inventory run unchanged against a captured tree in tests and
// support tickets (`--fs-root DIR`). Paths are always absolute ("/sys/...");
// the root is prepended. Thread-safe: it holds only the root path.
//
// A captured tree is untrusted (support tickets): every path is resolved
// component by component inside the root, so a link that leaves the root or
// whose target is missing in it is NOT_FOUND naming the link, never followed
// on this host; a symlink loop is FAILED_PRECONDITION. Only regular files
// are read (a FIFO, a device or a directory is FAILED_PRECONDITION, opened
// without blocking), and only up to a cap (common/limits.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gdrbench {

class FsRoot {
 public:
  explicit FsRoot(std::string root = "/");

  const std::string& root() const { return root_; }
  bool is_live() const { return root_ == "/"; }

  // The host path of `path` under the root, with symlinks inside a captured
  // tree resolved against the root; for messages (reads use HostPathInside).
  std::string Resolve(const std::string& path) const;

  // Whole file, at most `max_bytes` (limits::kMaxFileBytes when not given).
  // NOT_FOUND when absent (or, offline, resolving outside the tree),
  // PERMISSION_DENIED, FAILED_PRECONDITION when not a regular file or larger
  // than `max_bytes`, INTERNAL.
  absl::StatusOr<std::string> ReadFile(const std::string& path) const;
  absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const;
  // First line, whitespace trimmed.
  absl::StatusOr<std::string> ReadLine(const std::string& path) const;
  bool Exists(const std::string& path) const;
  bool IsDirectory(const std::string& path) const;
  // Entry names (no "." or ".."), sorted. NOT_FOUND when the directory is
  // absent; FAILED_PRECONDITION past limits::kMaxDirEntries.
  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) const;
  // The target of a symlink, as stored (relative targets stay relative).
  absl::StatusOr<std::string> ReadLink(const std::string& path) const;
  // The canonical path of `path` inside the root (symlinks resolved against
  // the root, not the host), e.g. /sys/class/infiniband/mlx5_0/device ->
  // /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0.
  absl::StatusOr<std::string> RealPath(const std::string& path) const;

 private:
  // Root + path, no symlink resolution (lstat/readlink of the link itself).
  std::string HostPath(const std::string& path) const;
  // The host path to open for `path`: itself live; offline root + RealPath,
  // every component inside the tree and none of them a symlink.
  absl::StatusOr<std::string> HostPathInside(const std::string& path) const;
  std::string root_;
};

}  // namespace gdrbench
