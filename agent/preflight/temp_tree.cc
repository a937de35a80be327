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
#include <shared_mutex>
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

// An entry already gone counts as removed: the tree may be half removed by
// a run that was stopped in the middle of it.
bool RemoveQuietly(const std::string& dir) {
  if (dir.empty() || dir == "/") return true;
  const int rc = nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path) == 0 || errno == ENOENT ? 0 : -1; },
      32, FTW_DEPTH | FTW_PHYS);
  if (rc == 0) return true;
  struct stat st;
  return lstat(dir.c_str(), &st) != 0 && errno == ENOENT;
}

// Writers hold it shared, one entry at a time; the stop signal takes it
// exclusively to close the gate.
std::shared_mutex& WriteMu() {
  static auto* mu = new std::shared_mutex();  // never destroyed: used at exit
  return *mu;
}
bool& Stopping() {  // guarded by WriteMu
  static bool stopping = false;
  return stopping;
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
  // The owner's removal is a write to the tree: a stop signal waits for it
  // (two removers racing each other both failed, and the signal's exit cut
  // the owner's removal short: CI saw "removed 0 temporary trees" and the
  // tree left behind).
  TreeWriter removing;
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
    {
      std::unique_lock gate(WriteMu());  // waits for the entry being written
      Stopping() = true;
    }
    size_t n = 0;
    {
      std::lock_guard lock(Mu());  // held to the end: no new tree after this
      for (const auto& dir : Live()) n += RemoveQuietly(dir) ? 1 : 0;
      std::fprintf(stderr, "%s: interrupted by %s; removed %zu temporary tree%s\n", program,
                   sigabbrev_np(sig) ? absl::StrCat("SIG", sigabbrev_np(sig)).c_str() : "a signal", n,
                   n == 1 ? "" : "s");
      std::fflush(stderr);
      _exit(128 + sig);
    }
  }).detach();
}

TreeWriter::TreeWriter() {
  WriteMu().lock_shared();
  if (!Stopping()) return;
  WriteMu().unlock_shared();
  for (;;) pause();  // the signal's thread ends the process
}

TreeWriter::~TreeWriter() { WriteMu().unlock_shared(); }

}  // namespace gdrbench::agent::preflight
