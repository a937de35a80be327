// libFuzzer: a capture tarball unpacked as data only, then read the way the
// preflight readers read a tree (FsRoot: every directory listed, every file
// read, every path resolved). Whatever the bytes, nothing may land outside
// the private directory, and no read may leave it.
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/preflight/extract.h"
#include "common/fs_root.h"

namespace {

void Walk(const gdrbench::FsRoot& fs, const std::string& dir, int depth, int* budget) {
  if (depth > 8 || --*budget < 0) return;
  auto names = fs.ListDir(dir);
  if (!names.ok()) return;
  for (const auto& n : *names) {
    std::string p = dir == "/" ? "/" + n : dir + "/" + n;
    (void)fs.RealPath(p);
    (void)fs.ReadLine(p);
    (void)fs.Exists(p);
    if (fs.IsDirectory(p)) Walk(fs, p, depth + 1, budget);
  }
}

std::string& Base() {
  static std::string base = [] {
    std::string t = std::string(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") + "/gdrbench-fuzz-XXXXXX";
    if (!mkdtemp(t.data())) abort();
    return t;
  }();
  return base;
}

void RemoveAll(const std::string& d) {
  nftw(d.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
       FTW_DEPTH | FTW_PHYS);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string dest = Base() + "/t";
  RemoveAll(dest);
  if (mkdir(dest.c_str(), 0700) != 0) abort();
  gdrbench::agent::preflight::ExtractLimits caps{.entries = 2000, .total_bytes = 4 << 20, .file_bytes = 1 << 20};
  (void)gdrbench::agent::preflight::ExtractCaptureBytes(data, size, dest, caps);
  gdrbench::FsRoot fs(dest);
  int budget = 2000;
  Walk(fs, "/", 0, &budget);
  // Nothing next to the tree: an entry written through a link would be here.
  if (access((Base() + "/escaped").c_str(), F_OK) == 0) __builtin_trap();
  return 0;
}
