#include "agent/preflight/temp_tree.h"

#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::preflight {
namespace {

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& Live() {
  static auto* live = new std::set<std::string>();  // never destroyed: used at exit
  return *live;
}

bool RemoveQuietly(const std::string& dir) {
  if (dir.empty() || dir == "/") return true;
  return nftw(
             dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); },
             32, FTW_DEPTH | FTW_PHYS) == 0;
}

// On a stop signal the extractor may still be writing into the tree (it is
// another thread, not stopped): an entry it creates between nftw's pass and
// the root's rmdir fails that pass with ENOTEMPTY. Once the root directory
// is gone nothing can be created in it (the extractor writes through
// openat on its directory fds, and a removed directory takes no new
// entries), so passes are repeated until one wins, for at most a second.
bool RemoveWhileWritten(const std::string& dir) {
  for (int pass = 0; pass < 200; ++pass) {
    if (RemoveQuietly(dir)) return true;
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0 && errno == ENOENT) return true;
    usleep(5'000);
  }
  return false;
}

}  // namespace

std::string MakeTempTree(const char* prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/", prefix, "XXXXXX");
  std::lock_guard lock(Mu());  // registered before a signal can miss it
  if (mkdtemp(templ.data()) == nullptr) return "";
  chmod(templ.c_str(), 0700);  // mkdtemp's mode, whatever the umask
  Live().insert(templ);
  return templ;
}

void RemoveTree(const std::string& dir) {
  if (!RemoveQuietly(dir)) spdlog::warn("could not remove {} completely", dir);
  std::lock_guard lock(Mu());
  Live().erase(dir);
}

void RemoveTempTreesOnSignals(const char* program) {
  static sigset_t stop;
  sigemptyset(&stop);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, s);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  std::thread([program] {
    int sig = 0;
    sigwait(&stop, &sig);
    size_t n = 0;
    {
      std::lock_guard lock(Mu());  // held to the end: no new tree after this
      for (const auto& dir : Live()) n += RemoveWhileWritten(dir) ? 1 : 0;
      std::fprintf(stderr, "%s: interrupted by %s; removed %zu temporary tree%s\n", program,
                   sigabbrev_np(sig) ? absl::StrCat("SIG", sigabbrev_np(sig)).c_str() : "a signal", n,
                   n == 1 ? "" : "s");
      std::fflush(stderr);
      _exit(128 + sig);
    }
  }).detach();
}

}  // namespace gdrbench::agent::preflight
