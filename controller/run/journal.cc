#include "controller/run/journal.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/run/journal_records.h"

namespace gdrbench::controller::run {
namespace {

using journal_records::kHeader;
using journal_records::kMagic;
using journal_records::kPlan;
using journal_records::kTest;
constexpr size_t kMagicLen = kMagic.size();

uint32_t Checksum(const char* p, size_t n) { return journal_records::FrameChecksum(p, n); }

// `buf` holds, from `at` on, 8 placeholder bytes and then a frame's body:
// fills in its length and checksum.
void SealFrame(std::string* buf, size_t at) {
  const size_t n = buf->size() - at - 8;
  const uint32_t len = static_cast<uint32_t>(n);
  const uint32_t sum = Checksum(buf->data() + at + 8, n);
  char* f = buf->data() + at;
  for (int i = 0; i < 4; ++i) {
    f[i] = static_cast<char>((len >> (8 * i)) & 0xff);
    f[4 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
  }
}

std::atomic<uint64_t> next_writer_id{1};

// Writes every buffer of `iov`, in order (writev(2), resumed after a short
// write); consumes `iov`.
absl::Status WriteAll(int fd, std::vector<iovec>& iov, const std::string& path) {
  size_t first = 0;
  while (first < iov.size()) {
    const int n = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    ssize_t w = ::writev(fd, iov.data() + first, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path, ": write"));
    auto done = static_cast<size_t>(w);
    while (first < iov.size() && done >= iov[first].iov_len) done -= iov[first++].iov_len;
    if (done > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
  return absl::OkStatus();
}

bool HasMagic(const std::string& data) { return data.compare(0, kMagicLen, kMagic) == 0; }

}  // namespace

v1::JournalPlan DescribePlan(const Plan& plan) {
  size_t rails = 0;
  for (const auto& n : plan.nodes) rails = std::max({rails, n.rails.size(), n.rail_gbps.size()});
  v1::JournalPlan out;
  for (const auto& n : plan.nodes) {
    v1::JournalPlanNode* d = out.add_nodes();
    d->set_name(n.name);
    d->set_agent_address(n.address);
    for (uint32_t r = 0; r < rails; ++r) {
      v1::JournalPlanRail* x = d->add_rails();
      if (r < n.rails.size()) x->set_nic_device(n.rails[r].nic);
      x->set_memory(EndpointMemory(n, r, plan.memory));
      if (r < n.rail_gbps.size()) x->set_link_gbps(n.rail_gbps[r]);
    }
  }
  return out;
}

JournalWriter::JournalWriter(std::string path, int fd, const v1::JournalPlan& plan, Options o)
    : path_(std::move(path)), fd_(fd), options_(o), id_(next_writer_id.fetch_add(1)), plan_(plan) {
  for (int i = 0; i < plan_.nodes_size(); ++i) node_index_.emplace(plan_.nodes(i).name(), static_cast<uint32_t>(i));
  if (options_.group_window.count() > 0) flusher_ = std::thread([this] { FlusherLoop(); });
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Create(const std::string& path,
                                                                     const v1::JournalHeader& header,
                                                                     const v1::JournalPlan& plan, Options options) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  std::unique_ptr<JournalWriter> w(new JournalWriter(path, fd, plan, options));
  {
    JournalWriter::Shard* sh = w->ThisThreadShard();
    std::lock_guard<std::mutex> lock(sh->mu);
    sh->pending.assign(kMagic);
  }
  GDR_RETURN_IF_ERROR(w->WriteFrame(kHeader, header));
  GDR_RETURN_IF_ERROR(w->WriteFrame(kPlan, plan));
  return w;
}

absl::StatusOr<std::unique_ptr<JournalWriter>> JournalWriter::Reopen(const std::string& path, uint64_t valid_bytes,
                                                                     const v1::JournalPlan& plan, Options options) {
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
    std::string head(kMagicLen, '\0');
    in.read(head.data(), static_cast<std::streamsize>(kMagicLen));
    head.resize(static_cast<size_t>(in.gcount()));
    if (!HasMagic(head)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "journal ", path, " is format 1 (an older gdrbench): it cannot be continued; store its finished ",
          "tests with `gdrbench runs upload ", path, "`, or run the sweep again"));
    }
  }
  if (::truncate(path.c_str(), static_cast<off_t>(valid_bytes)) != 0) {
    return ErrnoToStatus(errno, absl::StrCat("journal ", path, ": truncate"));
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("journal ", path));
  return std::unique_ptr<JournalWriter>(new JournalWriter(path, fd, plan, options));
}

JournalWriter::~JournalWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  (void)WritePending();
  if (fd_ >= 0) ::close(fd_);
}

// This thread's shard: the last one it used when that was this writer's,
// else the one it was given before, else a new one (so a writer has at most
// one shard per thread that ever appended to it).
JournalWriter::Shard* JournalWriter::ThisThreadShard() {
  struct Cached {
    uint64_t writer = 0;
    Shard* shard = nullptr;
  };
  thread_local Cached cached;
  if (cached.writer == id_) return cached.shard;
  std::lock_guard<std::mutex> lock(shards_mu_);
  const std::thread::id me = std::this_thread::get_id();
  Shard* found = nullptr;
  for (const auto& sh : shards_) {
    if (sh->owner == me) found = sh.get();
  }
  if (found == nullptr) {
    shards_.push_back(std::make_unique<Shard>());
    found = shards_.back().get();
    found->owner = me;
  }
  cached = Cached{id_, found};
  return found;
}

absl::Status JournalWriter::Error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

absl::Status JournalWriter::Append(const v1::PairResult& pair) {
  auto s = node_index_.find(pair.src().node());
  auto d = node_index_.find(pair.dst().node());
  if (s == node_index_.end() || d == node_index_.end()) {
    return absl::InternalError(absl::StrCat("journal: a result of ", pair.src().node(), "->", pair.dst().node(),
                                            ", a node outside the plan"));
  }
  return Append(pair, s->second, d->second);
}

absl::Status JournalWriter::Append(const v1::PairResult& pair, uint32_t src, uint32_t dst) {
  if (failed_.load()) return Error();
  const auto nodes = static_cast<uint32_t>(plan_.nodes_size());
  if (src >= nodes || dst >= nodes) {
    return absl::InternalError(absl::StrCat("journal: a result of ", pair.src().node(), "->", pair.dst().node(),
                                            " names node ", std::max(src, dst), ", outside the plan of ", nodes));
  }
  // AppendTest checks that the result carries these nodes' names.
  const uint32_t dst_rail = pair.has_dst_rail() ? pair.dst_rail() : pair.rail();
  const double expected =
      pair.rail() < static_cast<uint32_t>(plan_.nodes(static_cast<int>(src)).rails_size()) &&
              dst_rail < static_cast<uint32_t>(plan_.nodes(static_cast<int>(dst)).rails_size())
          ? journal_records::PlanExpectedGbps(plan_, src, dst, pair.rail(), dst_rail)
          : 0;
  // Encoded straight into this thread's buffer: its lock is contended only
  // by the moment WritePending takes the buffer.
  Shard* sh = ThisThreadShard();
  {
    std::lock_guard<std::mutex> lock(sh->mu);
    std::string& buf = sh->pending;
    const size_t at = buf.size();
    buf.append(8, '\0');
    buf.push_back(kTest);
    absl::Status st = journal_records::AppendTest(pair, src, dst, expected, plan_, &buf);
    if (!st.ok()) {
      buf.resize(at);
      return st;
    }
    SealFrame(&buf, at);
  }
  if (options_.group_window.count() > 0) {
    // The flusher is woken once per window, not per record.
    if (!dirty_.load() && !dirty_.exchange(true)) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_one();
    }
    return absl::OkStatus();
  }
  return WritePending();
}

absl::Status JournalWriter::WriteFrame(char kind, const google::protobuf::MessageLite& body) {
  Shard* sh = ThisThreadShard();
  {
    std::lock_guard<std::mutex> lock(sh->mu);
    const size_t at = sh->pending.size();
    sh->pending.append(8, '\0');
    sh->pending.push_back(kind);
    body.AppendToString(&sh->pending);
    SealFrame(&sh->pending, at);
  }
  return WritePending();
}

absl::Status JournalWriter::Flush() { return WritePending(); }

// Takes every shard's pending frames and writes them with one writev(2), no
// shard lock held: Append only waits for a swap, never for the kernel.
// write_mu_ keeps each shard's frames in order.
absl::Status JournalWriter::WritePending() {
  std::lock_guard<std::mutex> w(write_mu_);
  if (failed_.load()) return Error();
  std::vector<Shard*> shards;
  {
    std::lock_guard<std::mutex> lock(shards_mu_);
    shards.reserve(shards_.size());
    for (const auto& sh : shards_) shards.push_back(sh.get());
  }
  std::vector<iovec> iov;
  iov.reserve(shards.size());
  for (Shard* sh : shards) {
    {
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->writing.swap(sh->pending);
    }
    if (!sh->writing.empty()) iov.push_back(iovec{sh->writing.data(), sh->writing.size()});
  }
  absl::Status st = iov.empty() ? absl::OkStatus() : WriteAll(fd_, iov, path_);
  for (Shard* sh : shards) sh->writing.clear();
  if (st.ok() && options_.sync && ::fdatasync(fd_) != 0) {
    st = ErrnoToStatus(errno, absl::StrCat("journal ", path_, ": fdatasync"));
  }
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = st;
    failed_.store(true);
  }
  return st;
}

void JournalWriter::FlusherLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || dirty_.load(); });
    if (stop_) return;
    // Let the window fill, then write whatever arrived in it at once.
    cv_.wait_for(lock, options_.group_window, [&] { return stop_; });
    // Cleared before the frames are taken: a record appended after this
    // wakes the flusher again.
    dirty_.store(false);
    lock.unlock();
    (void)WritePending();
    lock.lock();
  }
}


}  // namespace gdrbench::controller::run
