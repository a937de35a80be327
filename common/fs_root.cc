#include "common/fs_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "common/bounded_read.h"
#include "common/limits.h"
#include "common/status.h"

namespace gdrbench {

FsRoot::FsRoot(std::string root) : root_(std::move(root)) {
  if (root_.empty()) root_ = "/";
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string FsRoot::Resolve(const std::string& path) const {
  if (root_ == "/") return path;
  // In a captured tree, symlinks with absolute targets (/sys/class/... ->
  // /sys/devices/...) must land inside the root, not on this host.
  if (auto real = RealPath(path); real.ok()) return absl::StrCat(root_, *real);
  return absl::StrCat(root_, path);
}

std::string FsRoot::HostPath(const std::string& path) const {
  return root_ == "/" ? path : absl::StrCat(root_, path);
}

absl::StatusOr<std::string> FsRoot::HostPathInside(const std::string& path) const {
  if (root_ == "/") return path;
  GDR_ASSIGN_OR_RETURN(std::string real, RealPath(path));
  return absl::StrCat(root_, real);
}

absl::StatusOr<std::string> FsRoot::ReadFile(const std::string& path) const {
  return ReadFile(path, limits::kMaxFileBytes);
}

absl::StatusOr<std::string> FsRoot::ReadFile(const std::string& path, size_t max_bytes) const {
  GDR_ASSIGN_OR_RETURN(std::string host, HostPathInside(path));
  // O_NONBLOCK: a FIFO must not wait for a writer; O_NOFOLLOW offline: the
  // last component was resolved inside the tree, it is no link.
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (is_live() ? 0 : O_NOFOLLOW);
  int fd = open(host.c_str(), flags);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("open ", host));
  absl::StatusOr<std::string> content = ReadRegularFd(fd, host, max_bytes);
  close(fd);
  return content;
}

absl::StatusOr<std::string> FsRoot::ReadLine(const std::string& path) const {
  GDR_ASSIGN_OR_RETURN(std::string content, ReadFile(path));
  absl::string_view first = content;
  if (auto nl = first.find('\n'); nl != absl::string_view::npos) first = first.substr(0, nl);
  return std::string(absl::StripAsciiWhitespace(first));
}

bool FsRoot::Exists(const std::string& path) const {
  auto host = HostPathInside(path);
  struct stat st;
  return host.ok() && lstat(host->c_str(), &st) == 0;
}

bool FsRoot::IsDirectory(const std::string& path) const {
  auto host = HostPathInside(path);
  struct stat st;
  return host.ok() && stat(host->c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<std::vector<std::string>> FsRoot::ListDir(const std::string& path) const {
  GDR_ASSIGN_OR_RETURN(std::string host, HostPathInside(path));
  int fd = open(host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (is_live() ? 0 : O_NOFOLLOW));
  DIR* dir = fd < 0 ? nullptr : fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    if (fd >= 0) close(fd);
    return ErrnoToStatus(err, absl::StrCat("opendir ", host));
  }
  std::vector<std::string> names;
  while (struct dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == limits::kMaxDirEntries) {
      closedir(dir);
      return absl::FailedPreconditionError(absl::StrCat(
          host, " has more than ", limits::kMaxDirEntries, " entries (the most read from one directory)"));
    }
    names.push_back(std::move(name));
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::string> FsRoot::ReadLink(const std::string& path) const {
  std::string host = HostPath(path);
  char buf[4096];
  ssize_t n = readlink(host.c_str(), buf, sizeof(buf) - 1);
  if (n < 0) return ErrnoToStatus(errno, absl::StrCat("readlink ", host));
  return std::string(buf, static_cast<size_t>(n));
}

absl::StatusOr<std::string> FsRoot::RealPath(const std::string& path) const {
  // Resolve component by component so that absolute and relative link
  // targets stay inside the root.
  std::vector<std::string> done;
  std::vector<std::string> todo;
  for (auto part : absl::StrSplit(path, '/', absl::SkipEmpty())) todo.emplace_back(part);
  std::reverse(todo.begin(), todo.end());
  int hops = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();  // ".." at the root stays at the root
      continue;
    }
    done.push_back(part);
    std::string cur = "/" + absl::StrJoin(done, "/");
    struct stat st;
    if (lstat(HostPath(cur).c_str(), &st) != 0) {
      if (hops > 0 && errno == ENOENT && !is_live()) {
        return absl::NotFoundError(absl::StrCat(
            HostPath(path), " is a symlink to ", cur,
            ", which is not in the captured tree (never read from this host)"));
      }
      return ErrnoToStatus(errno, absl::StrCat(HostPath(path), ": lstat ", HostPath(cur)));
    }
    if (S_ISLNK(st.st_mode)) {
      if (++hops > limits::kMaxSymlinkHops) {
        return absl::FailedPreconditionError(absl::StrCat("symlink loop at ", HostPath(cur)));
      }
      GDR_ASSIGN_OR_RETURN(std::string target, ReadLink(cur));
      done.pop_back();
      if (!target.empty() && target[0] == '/') done.clear();
      std::vector<std::string> parts;
      for (auto p : absl::StrSplit(target, '/', absl::SkipEmpty())) parts.emplace_back(p);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    } else if (!todo.empty() && !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat(HostPath(cur), " is not a directory"));
    }
  }
  return "/" + absl::StrJoin(done, "/");
}

}  // namespace gdrbench
