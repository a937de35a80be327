#include "controller/server_client/live_upload.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller {
namespace {

class GrpcLiveApi final : public LiveApi {
 public:
  explicit GrpcLiveApi(ServerClient& c) : c_(c) {}
  absl::StatusOr<v1::LiveRun> OpenLiveRun(const v1::OpenLiveRunRequest& req) override {
    return c_.OpenLiveRun(req);
  }
  absl::StatusOr<v1::LiveAck> AppendLiveRun(const v1::LiveChunk& chunk) override {
    return c_.AppendLiveRun(chunk);
  }

 private:
  ServerClient& c_;
};

void ToLiveTest(const v1::JournalTest& t, v1::LiveTest* out) {
  out->set_src(t.src());
  out->set_dst(t.dst());
  out->set_rail(t.rail());
  if (t.has_dst_rail()) out->set_dst_rail(t.dst_rail());
  out->set_round(t.round());
  out->set_status(t.status());
  for (const v1::SizeResult& s : t.sizes()) {
    v1::LiveCell* c = out->add_cells();
    c->set_size_bytes(s.size_bytes());
    c->set_status(s.status());
    c->set_bw_avg_gbps(s.bw_avg_gbps());
  }
}

}  // namespace

std::unique_ptr<LiveApi> LiveApiOf(ServerClient& client) { return std::make_unique<GrpcLiveApi>(client); }

std::string LiveUploadReport::Describe() const {
  std::string out = absl::StrCat("live upload of run ", run_id.empty() ? "(not begun)" : run_id, ": ");
  if (stored) return absl::StrCat(out, "the server has the run stored already");
  absl::StrAppend(&out, tests_acked, " of ", tests_in_journal,
                  " tests read from the journal are on the server");
  if (!error.ok()) absl::StrAppend(&out, "; last failure: ", error.message());
  return out;
}

LiveUploader::LiveUploader(LiveApi& api, std::string journal_path, LiveUploadOptions options)
    : api_(api), tail_(std::move(journal_path)), options_(std::move(options)) {
  options_.max_tests_per_chunk = std::max<size_t>(1, options_.max_tests_per_chunk);
  if (options_.start_thread) thread_ = std::thread([this] { Loop(); });
}

LiveUploader::~LiveUploader() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!stop_) finish_by_ = std::chrono::steady_clock::now();
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LiveUploader::Notify() {
  if (notified_.fetch_add(1, std::memory_order_relaxed) + 1 >= options_.max_tests_per_chunk) cv_.notify_one();
}

bool LiveUploader::Permanent(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kOutOfRange: return true;
    default: return false;
  }
}

absl::Status LiveUploader::Resync() {
  v1::OpenLiveRunRequest req;
  req.set_run_id(tail_.header().run_id());
  v1::LivePlan* plan = req.mutable_plan();
  plan->set_cluster(options_.cluster);
  plan->set_mode(tail_.header().mode());
  uint32_t rails = 1;
  for (const auto& n : tail_.plan().nodes()) {
    plan->add_nodes(n.name());
    rails = std::max(rails, static_cast<uint32_t>(n.rails_size()));
  }
  plan->set_rails(rails);
  *plan->mutable_sizes_bytes() = tail_.header().params().sizes_bytes();
  *plan->mutable_started_at() = tail_.header().started_at();
  plan->set_tests_planned(tail_.header().tests());
  GDR_ASSIGN_OR_RETURN(v1::LiveRun live, api_.OpenLiveRun(req));
  if (live.state() == v1::LIVE_RUN_STATE_STORED) {
    stored_ = done_ = true;
    return absl::OkStatus();
  }
  // A chunk stays near 1 MB whatever the sizes per test (each cell about 16 bytes).
  per_chunk_ =
      std::clamp<size_t>((1 << 20) / (32 + 16 * static_cast<size_t>(std::max(1, plan->sizes_bytes_size()))),
                         1, options_.max_tests_per_chunk);
  acked_ = live.next_test();
  if (absl::Status st = tail_.Seek(acked_); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("the server holds ", acked_, " tests of run ", req.run_id(),
                                                ", more than the journal: ", st.message()));
  }
  synced_ = true;
  return absl::OkStatus();
}

absl::Status LiveUploader::SendAvailable() {
  if (done_) return absl::OkStatus();
  if (absl::Status begun = tail_.Start(); absl::IsUnavailable(begun))
    return begun;  // no header yet: not a failure
  absl::Status st = [&]() -> absl::Status {
    GDR_RETURN_IF_ERROR(tail_.Start());
    if (!synced_) GDR_RETURN_IF_ERROR(Resync());
    while (!done_) {
      tail_.Mark();
      v1::LiveChunk chunk;
      chunk.set_run_id(tail_.header().run_id());
      chunk.set_first_test(tail_.next_test());
      GDR_ASSIGN_OR_RETURN(size_t n, tail_.Read(per_chunk_, [&](uint64_t, const v1::JournalTest& t) {
        ToLiveTest(t, chunk.add_tests());
        return absl::OkStatus();
      }));
      if (n == 0) return absl::OkStatus();
      absl::StatusOr<v1::LiveAck> ack = api_.AppendLiveRun(chunk);
      if (!ack.ok()) {
        synced_ = false;  // where the server is is asked again before the next chunk
        return ack.status();
      }
      if (ack->state() == v1::LIVE_RUN_STATE_STORED) {
        stored_ = done_ = true;
        return absl::OkStatus();
      }
      acked_ = ack->next_test();
      if (acked_ != tail_.next_test()) {
        // The server expects another test (it lost some, or a chunk raced):
        // the journal is read again from there.
        if (absl::Status seek = tail_.Seek(acked_); !seek.ok()) return seek;
      }
    }
    return absl::OkStatus();
  }();
  if (st.ok()) {
    error_ = absl::OkStatus();
  } else {
    error_ = st;
    if (Permanent(st)) done_ = true;
  }
  return st;
}

LiveUploadReport LiveUploader::Report() const {
  LiveUploadReport r;
  r.run_id = tail_.header().run_id();
  r.tests_in_journal = tail_.next_test();
  r.tests_acked = acked_;
  r.stored = stored_;
  r.error = error_;
  return r;
}

void LiveUploader::Loop() {
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds pause = options_.retry;
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    const bool finishing = stop_;
    absl::Status st = SendAvailable();
    if (done_ || (finishing && st.ok())) break;
    if (finishing && !tail_.begun()) break;  // the sweep ended before its journal began: nothing to send
    if (finishing && Clock::now() >= finish_by_) break;
    if (st.ok() || !tail_.begun()) {  // a journal not begun yet is waited for, not a failure
      pause = options_.retry;
      cv_.wait_for(l, options_.interval, [&] {
        return stop_ || notified_.load(std::memory_order_relaxed) >= options_.max_tests_per_chunk;
      });
    } else {
      Clock::time_point until = Clock::now() + pause;
      if (stop_) until = std::min(until, finish_by_);
      cv_.wait_until(l, until, [&] { return stop_ && !finishing; });  // Finish wakes a pause at once
      pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::seconds(30));
    }
    notified_.store(0, std::memory_order_relaxed);
  }
}

LiveUploadReport LiveUploader::Finish(std::chrono::milliseconds deadline) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!stop_) {
      stop_ = true;
      finish_by_ = std::chrono::steady_clock::now() + deadline;
    }
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  } else if (!options_.start_thread) {
    (void)SendAvailable();  // its failure is in the report
  }
  std::lock_guard<std::mutex> l(mu_);
  // What was not sent is counted to the journal's end, so the report says
  // how much the server lacks.
  if (tail_.begun() && !stored_) {
    const auto count = [](uint64_t, const v1::JournalTest&) { return absl::OkStatus(); };
    for (;;) {
      absl::StatusOr<size_t> n = tail_.Read(options_.max_tests_per_chunk, count);
      if (!n.ok() || *n == 0) break;
    }
  }
  return Report();
}

}  // namespace gdrbench::controller
