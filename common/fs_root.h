// FsRoot: every read of /sys, /proc, /etc and /dev goes through one of these,
// so checks and inventory run unchanged against a captured tree in tests and
// support tickets (`--fs-root DIR`). Paths are always absolute ("/sys/...");
// the root is prepended. Thread-safe: it holds only the root path.
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
  // tree resolved against the root.
  std::string Resolve(const std::string& path) const;

  // Whole file. NOT_FOUND when absent, PERMISSION_DENIED, or INTERNAL.
  absl::StatusOr<std::string> ReadFile(const std::string& path) const;
  // First line, whitespace trimmed.
  absl::StatusOr<std::string> ReadLine(const std::string& path) const;
  bool Exists(const std::string& path) const;
  bool IsDirectory(const std::string& path) const;
  // Entry names (no "." or ".."), sorted. NOT_FOUND when the directory is absent.
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
  std::string root_;
};

}  // namespace gdrbench
