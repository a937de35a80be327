#include "server/history/live_runs.h"

#include <algorithm>
#include <cmath>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status.h"
#include "server/history/names.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::history {
namespace {

absl::Status Bad(std::string s) { return absl::InvalidArgumentError(std::move(s)); }

std::string Serialized(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

}  // namespace

absl::Status LiveRuns::CheckPlan(const v1::LivePlan& plan) const {
  GDR_RETURN_IF_ERROR(CheckClusterName(plan.cluster(), "plan.cluster", false));
  if (plan.nodes_size() < 1 || static_cast<uint32_t>(plan.nodes_size()) > options_.max_nodes) {
    return Bad(absl::StrCat("plan.nodes: ", plan.nodes_size(), " nodes, expected 1 to ", options_.max_nodes));
  }
  for (int i = 0; i < plan.nodes_size(); ++i) {
    GDR_RETURN_IF_ERROR(CheckNodeName(plan.nodes(i), absl::StrCat("plan.nodes[", i, "]")));
  }
  if (plan.rails() < 1 || plan.rails() > options_.max_rails) {
    return Bad(absl::StrCat("plan.rails ", plan.rails(), " is not 1 to ", options_.max_rails));
  }
  if (static_cast<uint32_t>(plan.sizes_bytes_size()) > options_.max_sizes) {
    return Bad(
        absl::StrCat("plan.sizes_bytes: ", plan.sizes_bytes_size(), " sizes, at most ", options_.max_sizes));
  }
  if (!plan.mode().empty() && !IdChars(plan.mode(), kMaxIdChars)) {
    return Bad("plan.mode must be 1 to 64 of A-Z a-z 0-9 - _ . :");
  }
  return absl::OkStatus();
}

absl::Status LiveRuns::CheckTest(const v1::LiveTest& t, const v1::LivePlan& plan, size_t index) const {
  const auto where = [&] { return absl::StrCat("tests[", index, "]"); };
  const uint32_t nodes = static_cast<uint32_t>(plan.nodes_size());
  if (t.src() >= nodes || t.dst() >= nodes) {
    return Bad(absl::StrCat(where(), ": src ", t.src(), " or dst ", t.dst(), " is not a node of the plan (",
                            nodes, " nodes)"));
  }
  if (t.rail() >= plan.rails() || (t.has_dst_rail() && t.dst_rail() >= plan.rails())) {
    return Bad(absl::StrCat(where(), ": rail out of the plan's ", plan.rails(), " rails"));
  }
  if (!v1::ResultStatus_IsValid(t.status()))
    return Bad(absl::StrCat(where(), ".status is not a ResultStatus"));
  if (static_cast<uint32_t>(t.cells_size()) > options_.max_sizes) {
    return Bad(absl::StrCat(where(), ": ", t.cells_size(), " cells, at most ", options_.max_sizes));
  }
  for (const v1::LiveCell& c : t.cells()) {
    if (!v1::ResultStatus_IsValid(c.status()))
      return Bad(absl::StrCat(where(), ": a cell's status is not a ResultStatus"));
    if (!std::isfinite(c.bw_avg_gbps()) || c.bw_avg_gbps() < 0) {
      return Bad(absl::StrCat(where(), ": a cell's bw_avg_gbps is not a finite value >= 0"));
    }
  }
  return absl::OkStatus();
}

v1::LiveRun LiveRuns::ToLiveRun(const store::LiveRunRow& row) const {
  v1::LiveRun out;
  out.set_run_id(row.run_id);
  out.set_state(v1::LIVE_RUN_STATE_OPEN);
  out.set_next_test(row.next_test);
  out.set_cells(row.cells);
  out.mutable_plan()->ParseFromString(row.plan);
  *out.mutable_opened_at() = store::FromMicros(row.opened_us);
  *out.mutable_updated_at() = store::FromMicros(row.updated_us);
  out.set_opened_by(row.opened_by);
  return out;
}

absl::StatusOr<v1::LiveRun> LiveRuns::StoredOrMissing(const std::string& run_id) {
  GDR_ASSIGN_OR_RETURN(std::optional<store::RunRow> stored, store_.FindRun(run_id));
  if (!stored)
    return absl::NotFoundError(
        absl::StrCat("no live run ", run_id, " is open, and no run ", run_id, " is stored"));
  v1::LiveRun out;
  out.set_run_id(run_id);
  out.set_state(v1::LIVE_RUN_STATE_STORED);
  return out;
}

absl::StatusOr<v1::LiveRun> LiveRuns::Open(const v1::OpenLiveRunRequest& req, const std::string& who) {
  GDR_RETURN_IF_ERROR(CheckRunId(req.run_id(), "run_id"));
  GDR_RETURN_IF_ERROR(CheckPlan(req.plan()));
  GDR_ASSIGN_OR_RETURN(std::optional<store::RunRow> stored, store_.FindRun(req.run_id()));
  if (stored) {
    // A live run left behind by a server that stopped between storing the
    // run and closing it goes now.
    GDR_RETURN_IF_ERROR(store_.DeleteLiveRun(req.run_id()).status());
    return StoredOrMissing(req.run_id());
  }
  store::LiveRunRow row;
  row.run_id = req.run_id();
  row.cluster = req.plan().cluster().empty() ? "default" : req.plan().cluster();
  row.opened_by = who;
  row.plan = Serialized(req.plan());
  std::vector<std::string> dropped;
  const int64_t stale_before_us =
      absl::ToUnixMicros(absl::Now()) - absl::ToInt64Microseconds(options_.stale_after);
  GDR_ASSIGN_OR_RETURN(store::LiveRunRow live,
                       store_.OpenLiveRun(row, options_.max_open, stale_before_us, &dropped));
  for (const std::string& id : dropped) {
    spdlog::warn("live run {} dropped to make room for {}: nothing was sent to it for over {}", id,
                 req.run_id(), absl::FormatDuration(options_.stale_after));
  }
  if (live.plan != row.plan) {
    v1::LivePlan theirs;
    theirs.ParseFromString(live.plan);
    if (theirs.nodes_size() != req.plan().nodes_size() ||
        !std::equal(theirs.nodes().begin(), theirs.nodes().end(), req.plan().nodes().begin()) ||
        theirs.rails() != req.plan().rails()) {
      return absl::FailedPreconditionError(
          absl::StrCat("live run ", req.run_id(), " is open with another plan (", theirs.nodes_size(),
                       " nodes, ", theirs.rails(), " rails): a run id is one sweep's"));
    }
  }
  return ToLiveRun(live);
}

absl::StatusOr<v1::LiveAck> LiveRuns::Append(const v1::LiveChunk& chunk) {
  GDR_RETURN_IF_ERROR(CheckRunId(chunk.run_id(), "run_id"));
  if (static_cast<uint32_t>(chunk.tests_size()) > options_.max_tests_per_chunk) {
    return absl::ResourceExhaustedError(absl::StrCat("a chunk of ", chunk.tests_size(), " tests: at most ",
                                                     options_.max_tests_per_chunk, " a chunk"));
  }
  v1::LiveAck ack;
  ack.set_run_id(chunk.run_id());
  GDR_ASSIGN_OR_RETURN(std::optional<store::LiveRunRow> live, store_.FindLiveRun(chunk.run_id()));
  if (!live) {
    GDR_ASSIGN_OR_RETURN(v1::LiveRun stored, StoredOrMissing(chunk.run_id()));
    ack.set_state(stored.state());
    return ack;
  }
  ack.set_state(v1::LIVE_RUN_STATE_OPEN);
  ack.set_next_test(live->next_test);
  const uint64_t first = chunk.first_test();
  const uint64_t end = first + static_cast<uint64_t>(chunk.tests_size());
  // A gap (first beyond next_test), or nothing new: nothing to store.
  if (first > live->next_test || end <= live->next_test) return ack;
  v1::LivePlan plan;
  if (!plan.ParseFromString(live->plan))
    return absl::DataLossError(absl::StrCat("live run ", chunk.run_id(), ": its stored plan does not parse"));
  v1::LiveChunk fresh;  // the tests from next_test on, without run id and first_test
  uint64_t cells = 0;
  for (uint64_t i = live->next_test - first; i < static_cast<uint64_t>(chunk.tests_size()); ++i) {
    const v1::LiveTest& t = chunk.tests(static_cast<int>(i));
    GDR_RETURN_IF_ERROR(CheckTest(t, plan, i));
    cells += static_cast<uint64_t>(t.cells_size());
    *fresh.add_tests() = t;
  }
  if (live->cells + cells > options_.max_cells) {
    return absl::ResourceExhaustedError(absl::StrCat("live run ", chunk.run_id(), " would hold ",
                                                     live->cells + cells, " cells, over the limit of ",
                                                     options_.max_cells));
  }
  std::string data = fresh.SerializeAsString();
  if (live->bytes + data.size() > options_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("live run ", chunk.run_id(), " would hold ",
                                                     live->bytes + data.size(), " bytes, over the limit of ",
                                                     options_.max_bytes));
  }
  GDR_ASSIGN_OR_RETURN(uint64_t next,
                       store_.AppendLiveChunk(chunk.run_id(), live->next_test,
                                              static_cast<uint32_t>(fresh.tests_size()), cells, data));
  ack.set_next_test(next);
  return ack;
}

absl::StatusOr<v1::LiveRun> LiveRuns::Get(const std::string& run_id) {
  GDR_RETURN_IF_ERROR(CheckRunId(run_id, "run_id"));
  GDR_ASSIGN_OR_RETURN(std::optional<store::LiveRunRow> live, store_.FindLiveRun(run_id));
  if (!live) return StoredOrMissing(run_id);
  return ToLiveRun(*live);
}

absl::StatusOr<v1::ListLiveRunsResponse> LiveRuns::List() {
  GDR_ASSIGN_OR_RETURN(std::vector<store::LiveRunRow> rows, store_.ListLiveRuns());
  v1::ListLiveRunsResponse out;
  for (const auto& r : rows) *out.add_runs() = ToLiveRun(r);
  return out;
}

absl::StatusOr<v1::ListLiveCellsResponse> LiveRuns::Cells(const v1::ListLiveCellsRequest& req) {
  GDR_RETURN_IF_ERROR(CheckRunId(req.run_id(), "run_id"));
  if (req.page_size() > options_.max_cells_page) {
    return Bad(absl::StrCat("page_size ", req.page_size(), " is over ", options_.max_cells_page));
  }
  const uint32_t want = req.page_size() ? req.page_size() : 1000;
  v1::ListLiveCellsResponse out;
  GDR_ASSIGN_OR_RETURN(std::optional<store::LiveRunRow> live, store_.FindLiveRun(req.run_id()));
  if (!live) {
    GDR_ASSIGN_OR_RETURN(v1::LiveRun stored, StoredOrMissing(req.run_id()));
    out.set_state(stored.state());
    return out;
  }
  out.set_state(v1::LIVE_RUN_STATE_OPEN);
  v1::LivePlan plan;
  plan.ParseFromString(live->plan);
  uint64_t at = std::min(req.from_test(), live->next_test);
  uint32_t taken = 0;
  v1::LiveChunk chunk;
  // Every chunk holds a test at least: want + 1 chunks cover a page; the
  // read stops at the first chunk past it.
  const absl::Status kPageFull = absl::CancelledError("page full");
  absl::Status read = store_.ReadLiveChunks(req.run_id(), at, want + 1, [&](const store::LiveChunkRow& c) {
    if (taken >= want || c.first_test > at) return kPageFull;
    if (!chunk.ParseFromString(c.data))
      return absl::DataLossError(absl::StrCat("live run ", req.run_id(), ": a chunk does not parse"));
    for (uint64_t i = at - c.first_test; i < static_cast<uint64_t>(chunk.tests_size()) && taken < want; ++i) {
      const v1::LiveTest& t = chunk.tests(static_cast<int>(i));
      for (const v1::LiveCell& cell : t.cells()) {
        v1::CellRow* r = out.add_cells();
        r->set_rail(t.rail());
        if (t.has_dst_rail()) r->set_dst_rail(t.dst_rail());
        r->set_size_bytes(cell.size_bytes());
        r->set_src(t.src() < static_cast<uint32_t>(plan.nodes_size()) ? plan.nodes(static_cast<int>(t.src()))
                                                                      : "");
        r->set_dst(t.dst() < static_cast<uint32_t>(plan.nodes_size()) ? plan.nodes(static_cast<int>(t.dst()))
                                                                      : "");
        r->set_status(cell.status());
        r->set_bw_avg_gbps(cell.bw_avg_gbps());
      }
      ++at;
      ++taken;
    }
    return absl::OkStatus();
  });
  if (!read.ok() && read != kPageFull) return read;
  out.set_next_test(at);
  return out;
}

absl::StatusOr<v1::LiveRun> LiveRuns::Abandon(const std::string& run_id) {
  GDR_RETURN_IF_ERROR(CheckRunId(run_id, "run_id"));
  GDR_ASSIGN_OR_RETURN(std::optional<store::LiveRunRow> live, store_.FindLiveRun(run_id));
  if (!live) return absl::NotFoundError(absl::StrCat("no live run ", run_id, " is open"));
  v1::LiveRun out = ToLiveRun(*live);
  GDR_ASSIGN_OR_RETURN(bool deleted, store_.DeleteLiveRun(run_id));
  if (!deleted) return absl::NotFoundError(absl::StrCat("no live run ", run_id, " is open"));
  out.set_state(v1::LIVE_RUN_STATE_UNSPECIFIED);
  return out;
}

absl::Status LiveRuns::Close(const std::string& run_id) { return store_.DeleteLiveRun(run_id).status(); }

}  // namespace gdrbench::server::history
