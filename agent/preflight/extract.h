// Unpacking an untrusted capture tarball as data only (issue 12, item 2).
// A support ticket's .tar.gz is read with libarchive, never by tar as root:
// regular files, directories and symlinks only (a device, FIFO, socket or
// hard link refuses the capture, naming the entry); no owners (everything
// belongs to the caller); modes 0644 or 0755 (setuid, setgid, sticky and
// group/other write dropped); no absolute names, no "..", no entry written
// through a symlink; entry count, path length, depth, per-file and total
// unpacked bytes capped (common/limits.h). Symlinks are kept as stored: a
// capture's sysfs is made of them, and FsRoot resolves them inside the root.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/limits.h"

namespace gdrbench::agent::preflight {

struct ExtractLimits {
  size_t entries = limits::kMaxCaptureEntries;
  uint64_t total_bytes = limits::kMaxCaptureBytes;
  uint64_t file_bytes = limits::kMaxCaptureFileBytes;
  size_t path_bytes = limits::kMaxCapturePathBytes;
  size_t depth = limits::kMaxCaptureDepth;
};

// Unpacks the gzip'd tar `tarball` into the existing, empty directory
// `dest`. INVALID_ARGUMENT with one sentence naming the tarball (and the
// entry) when it is not a regular file, not a gzip'd tar, holds an entry
// that is not data, or passes a cap; what was unpacked is then left for the
// caller to remove.
absl::Status ExtractCapture(const std::string& tarball, const std::string& dest,
                            const ExtractLimits& caps = {});

// Packs the staged tree `dir` into `out_tar_gz` (pax, gzip'd, owners 0):
// what gdrbench-agent capture writes. INTERNAL with one sentence naming
// the file when it cannot be written.
absl::Status PackCapture(const std::string& dir, const std::string& out_tar_gz);

// The same over bytes in memory (the fuzzer's entry point).
absl::Status ExtractCaptureBytes(const void* data, size_t size, const std::string& dest,
                                 const ExtractLimits& caps = {});

}  // namespace gdrbench::agent::preflight
