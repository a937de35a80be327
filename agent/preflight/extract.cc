#include "agent/preflight/extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/preflight/temp_tree.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace gdrbench::agent::preflight {
namespace {

const char* TypeName(mode_t type) {
  switch (type) {
    case AE_IFCHR: return "a character device";
    case AE_IFBLK: return "a block device";
    case AE_IFIFO: return "a FIFO";
    case AE_IFSOCK: return "a socket";
    default: return "not a file, directory or symlink";
  }
}

// Unpacks one archive's entries under the directory `root`.
class Unpacker {
 public:
  Unpacker(int root, std::string name, const ExtractLimits& caps)
      : root_(root), name_(std::move(name)), caps_(caps) {}

  absl::Status Run(archive* a) {
    for (;;) {
      archive_entry* e = nullptr;
      int rc = archive_read_next_header(a, &e);
      if (rc == ARCHIVE_EOF) return absl::OkStatus();
      if (rc < ARCHIVE_WARN) {
        return Bad(entries_ == 0 ? absl::StrCat("is not a gzip'd tar (", ArchiveError(a), ")")
                                 : absl::StrCat("is damaged after ", entries_, " entries (", ArchiveError(a), ")"));
      }
      if (++entries_ > caps_.entries) return Bad(absl::StrCat("has more than ", caps_.entries, " entries"));
      GDR_RETURN_IF_ERROR(Entry(a, e));
    }
  }

 private:
  static std::string ArchiveError(archive* a) {
    const char* s = archive_error_string(a);
    return s ? s : "unknown error";
  }
  absl::Status Bad(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("capture ", name_, " ", what));
  }
  absl::Status BadEntry(const std::string& path, const std::string& what) const {
    return Bad(absl::StrCat("entry '", path.substr(0, 200), "' ", what));
  }

  absl::Status Entry(archive* a, archive_entry* e) {
    const TreeWriter writing;  // (after a stop signal: waits for the end)
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) return Bad("has an entry without a name");
    std::string path = raw;
    if (path.size() > caps_.path_bytes) return BadEntry(path, absl::StrCat("is longer than ", caps_.path_bytes, " bytes"));
    if (!path.empty() && path[0] == '/') return BadEntry(path, "is an absolute name");
    std::vector<std::string> parts;
    for (absl::string_view p : absl::StrSplit(path, '/', absl::SkipEmpty())) {
      if (p == ".") continue;
      if (p == "..") return BadEntry(path, "leaves the capture (..)");
      parts.emplace_back(p);
    }
    if (parts.empty()) return absl::OkStatus();  // "./", the root itself
    if (parts.size() > caps_.depth) return BadEntry(path, absl::StrCat("is deeper than ", caps_.depth, " levels"));
    if (archive_entry_hardlink(e) != nullptr) return BadEntry(path, "is a hard link; a capture holds files, directories and symlinks");
    mode_t type = archive_entry_filetype(e);
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK) {
      return BadEntry(path, absl::StrCat("is ", TypeName(type), "; a capture holds files, directories and symlinks"));
    }
    GDR_ASSIGN_OR_RETURN(UniqueFd parent, OpenParent(path, parts));
    const std::string& leaf = parts.back();
    if (type == AE_IFDIR) {
      if (mkdirat(parent.get(), leaf.c_str(), 0755) != 0 && !IsDir(parent.get(), leaf)) {
        return BadEntry(path, absl::StrCat("cannot be made a directory: ", std::strerror(errno)));
      }
      return absl::OkStatus();
    }
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(e);
      if (target == nullptr || std::strlen(target) > caps_.path_bytes) return BadEntry(path, "has no or an over-long link target");
      if (symlinkat(target, parent.get(), leaf.c_str()) != 0) {
        return BadEntry(path, absl::StrCat("cannot be made a symlink: ", std::strerror(errno)));
      }
      return absl::OkStatus();
    }
    return File(a, e, path, parent.get(), leaf);
  }

  static bool IsDir(int dir, const std::string& name) {
    struct stat st;
    return fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
  }

  // The directory holding the entry, every component opened without
  // following symlinks (an entry must not be written through one) and
  // made 0755 when the archive did not list it.
  absl::StatusOr<UniqueFd> OpenParent(const std::string& path, const std::vector<std::string>& parts) {
    UniqueFd cur(dup(root_));
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      const char* c = parts[i].c_str();
      int fd = openat(cur.get(), c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && mkdirat(cur.get(), c, 0755) == 0) {
        fd = openat(cur.get(), c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd < 0) {
        return BadEntry(path, absl::StrCat("goes through '", parts[i], "', which is not a directory",
                                           errno == ELOOP || errno == ENOTDIR ? " (a symlink or a file)" : ""));
      }
      cur = UniqueFd(fd);
    }
    return cur;
  }

  absl::Status File(archive* a, archive_entry* e, const std::string& path, int dir, const std::string& leaf) {
    if (archive_entry_size_is_set(e) && static_cast<uint64_t>(archive_entry_size(e)) > caps_.file_bytes) {
      return BadEntry(path, absl::StrCat("is larger than ", caps_.file_bytes >> 20, " MiB"));
    }
    mode_t mode = (archive_entry_perm(e) & 0111) ? 0755 : 0644;
    UniqueFd out(openat(dir, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (out.get() < 0 && errno == EEXIST) {
      struct stat st;
      // A later copy of the same file replaces it, as tar does; nothing else.
      if (fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
          unlinkat(dir, leaf.c_str(), 0) == 0) {
        out = UniqueFd(openat(dir, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
      }
    }
    if (out.get() < 0) return BadEntry(path, absl::StrCat("cannot be written: ", std::strerror(errno)));
    fchmod(out.get(), mode);  // exactly, whatever the umask
    std::vector<char> buf(64 << 10);
    uint64_t written = 0;
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) return BadEntry(path, absl::StrCat("cannot be read (", ArchiveError(a), ")"));
      written += static_cast<uint64_t>(n);
      if (written > caps_.file_bytes) return BadEntry(path, absl::StrCat("is larger than ", caps_.file_bytes >> 20, " MiB"));
      if (total_ + written > caps_.total_bytes) {
        return Bad(absl::StrCat("unpacks to more than ", caps_.total_bytes >> 20, " MiB (at '", path.substr(0, 200), "')"));
      }
      for (la_ssize_t off = 0; off < n;) {
        ssize_t w = write(out.get(), buf.data() + off, static_cast<size_t>(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return BadEntry(path, absl::StrCat("cannot be written: ", std::strerror(errno)));
        off += w;
      }
    }
    total_ += written;
    return absl::OkStatus();
  }

  const int root_;
  const std::string name_;
  const ExtractLimits caps_;
  size_t entries_ = 0;
  uint64_t total_ = 0;
};

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;

ArchivePtr NewReader() {
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  return a;
}

absl::Status Unpack(archive* a, const std::string& name, const std::string& dest, const ExtractLimits& caps) {
  UniqueFd root(open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() < 0) return ErrnoToStatus(errno, absl::StrCat("open ", dest));
  return Unpacker(root.get(), name, caps).Run(a);
}

}  // namespace

absl::Status ExtractCapture(const std::string& tarball, const std::string& dest, const ExtractLimits& caps) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  UniqueFd in(open(tarball.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (in.get() < 0) return ErrnoToStatus(errno, absl::StrCat("capture ", tarball));
  struct stat st;
  if (fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("capture ", tarball, " is not a regular file"));
  }
  fcntl(in.get(), F_SETFL, fcntl(in.get(), F_GETFL) & ~O_NONBLOCK);
  ArchivePtr a = NewReader();
  if (archive_read_open_fd(a.get(), in.get(), 64 << 10) != ARCHIVE_OK) {
    // libarchive reads the first block here: a wrong format fails now.
    return absl::InvalidArgumentError(absl::StrCat("capture ", tarball, " is not a gzip'd tar (",
                                                   archive_error_string(a.get()), ")"));
  }
  return Unpack(a.get(), tarball, dest, caps);
}

absl::Status PackCapture(const std::string& dir, const std::string& out_tar_gz) {
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_add_filter_gzip(a.get());
  archive_write_set_format_pax_restricted(a.get());
  auto fail = [&](const std::string& what) {
    return absl::InternalError(absl::StrCat("cannot write the capture ", out_tar_gz, ": ", what));
  };
  if (archive_write_open_filename(a.get(), out_tar_gz.c_str()) != ARCHIVE_OK) {
    return fail(archive_error_string(a.get()));
  }
  std::error_code ec;
  std::vector<char> buf(64 << 10);
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::string host = it->path().string();
    struct stat st;
    if (lstat(host.c_str(), &st) != 0) continue;
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), ("./" + host.substr(dir.size() + 1)).c_str());
    archive_entry_copy_stat(e.get(), &st);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    std::string target;
    if (S_ISLNK(st.st_mode)) {
      target.resize(4096);
      ssize_t n = readlink(host.c_str(), target.data(), target.size());
      if (n < 0) continue;
      target.resize(static_cast<size_t>(n));
      archive_entry_set_symlink(e.get(), target.c_str());
    } else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      continue;  // the staging tree holds none; a capture never does
    }
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) return fail(archive_error_string(a.get()));
    if (!S_ISREG(st.st_mode)) continue;
    UniqueFd in(open(host.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (in.get() < 0) return fail(absl::StrCat("open ", host, ": ", std::strerror(errno)));
    for (ssize_t n; (n = read(in.get(), buf.data(), buf.size())) > 0;) {
      if (archive_write_data(a.get(), buf.data(), static_cast<size_t>(n)) < 0) return fail(archive_error_string(a.get()));
    }
  }
  if (ec) return fail(absl::StrCat("walking ", dir, ": ", ec.message()));
  if (archive_write_close(a.get()) != ARCHIVE_OK) return fail(archive_error_string(a.get()));
  return absl::OkStatus();
}

absl::Status ExtractCaptureBytes(const void* data, size_t size, const std::string& dest, const ExtractLimits& caps) {
  ArchivePtr a = NewReader();
  if (archive_read_open_memory(a.get(), data, size) != ARCHIVE_OK) {
    return absl::InvalidArgumentError("capture (in memory) cannot be read");
  }
  return Unpack(a.get(), "(in memory)", dest, caps);
}

}  // namespace gdrbench::agent::preflight
