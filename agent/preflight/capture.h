// Capture: pack the files the preflight checks read on a live node into a
// tarball that `gdrbench-agent preflight --fs-root` accepts (support tickets,
// new test data). Device nodes become empty files, libcuda.so.<version>
// becomes an empty file of that name, /var/lib/dpkg/status keeps only the
// RDMA and NVIDIA packages, /boot/config-* only the DMA and IOMMU lines,
// modules.dep only the NVIDIA and RDMA lines, the nvidia-peermem module file
// only its last 4 KiB (where a signature ends), and the kernel log (read
// from /dev/kmsg when readable) lands in kernel_log.h's kCapturedDmesg.
// Symlinks are kept as symlinks, so the PCI tree classifies as on the node.
//
// Thread safety: free functions; each uses its own temporary directory.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/preflight/temp_tree.h"
#include "common/fs_root.h"

namespace gdrbench::agent::preflight {

// Copies the preflight-relevant files under `src` (normally "/") into
// `out_tar_gz` (written by tar -czf). INTERNAL when staging or tar fails,
// INVALID_ARGUMENT when `out_tar_gz` is empty.
absl::Status CaptureTree(const FsRoot& src, const std::string& out_tar_gz);

// Every capture carries this file at its root: what was captured, when, on
// which node, by which agent ("key: value" lines after "gdrbench capture").
inline constexpr char kCaptureInfoFile[] = "/gdrbench-capture.txt";

// The text of that file for a capture of `src` now.
std::string CaptureInfoText(const FsRoot& src);

// One line for a report: "captured 2026-12-01T15:04:05Z on gpu07 by
// gdrbench-agent 0.1.0, kernel 6.8.0-49-generic"; an older capture (no such
// keys, or no file at all) says what it lacks. Errors only when the file
// exists and cannot be read.
absl::StatusOr<std::string> CaptureInfo(const FsRoot& tree);

// Copies into an existing empty directory `dest` (what CaptureTree tars).
absl::Status StageTree(const FsRoot& src, const std::string& dest);

// Unpacks a capture as data only (extract.h) into a new private (0700)
// temporary directory and returns its path; the caller removes it with
// RemoveTree (temp_tree.h). NOT_FOUND when `tarball` is absent,
// INVALID_ARGUMENT naming the tarball and entry when it is refused.
absl::StatusOr<std::string> ExtractTree(const std::string& tarball);

}  // namespace gdrbench::agent::preflight
