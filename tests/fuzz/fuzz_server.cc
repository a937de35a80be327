// libFuzzer: what gdrbench-server takes from its clients, through the same
// Handler the gRPC and HTTP front ends call, over a real SQLite store (a
// file in $TMPDIR): uploads (UploadRun's stream of RunChunks, and the HTTP
// upload's JSON run) and queries (each request message's wire bytes, and
// HTTP query strings through FieldsToMessage). Invariants: no crash, no
// hang; an error reaches the client as at most limits::kMaxErrorMessageBytes
// (plus the marker of a cut); a page never holds more than asked for.
//   input '{...': a v1.Run as JSON, streamed as the HTTP upload streams it
//                 (server/api/run_json_stream.h; seeds: real run.json files)
//   otherwise   : byte 0 picks the call, the rest is its input
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_split.h"
#include "common/limits.h"
#include "common/rpc/status.h"
#include "server/api/handler.h"
#include "server/api/http_json.h"
#include "server/api/run_json_stream.h"
#include "server/history/ingest.h"

namespace {

namespace v1 = gdrbench::v1;
namespace api = gdrbench::server::api;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void Sent(const absl::Status& st) {
  if (st.ok()) return;
  grpc::Status g = gdrbench::rpc::ToGrpc(st);
  Check(g.error_message().size() <= gdrbench::limits::kMaxErrorMessageBytes + 64);
}

template <typename T>
void Sent(const absl::StatusOr<T>& r) {
  Sent(r.status());
}

struct Server {
  Server() {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir != nullptr ? dir : "/tmp") + "/fuzz_server." + std::to_string(getpid()) + ".db";
    unlink(path.c_str());
    store = gdrbench::server::store::Store::Open(path).value();
    sweeps = std::make_unique<gdrbench::server::sweeps::SweepManager>(
        nullptr, [](const v1::Run&) -> absl::StatusOr<v1::UploadRunResponse> {
          return absl::UnavailableError("no sweeps here");
        });
    handler = std::make_unique<api::Handler>(*store, *sweeps, api::HandlerOptions());
  }
  std::string path;
  std::unique_ptr<gdrbench::server::store::Store> store;
  std::unique_ptr<gdrbench::server::sweeps::SweepManager> sweeps;
  std::unique_ptr<api::Handler> handler;
};

// [u16 length][RunChunk]... as UploadRun reads them.
void Upload(api::Handler& h, const uint8_t* p, size_t n) {
  auto ingest = h.NewUpload();
  bool first = true;
  absl::Status st;
  size_t i = 0;
  while (st.ok() && i + 2 <= n) {
    size_t len = std::min<size_t>(p[i] | (size_t{p[i + 1]} << 8), n - i - 2);
    v1::RunChunk chunk;
    if (!chunk.ParseFromArray(p + i + 2, static_cast<int>(len))) return;
    i += 2 + len;
    if (first) {
      st = chunk.has_header() ? ingest->Begin(chunk.header()) : absl::InvalidArgumentError("no header");
      first = false;
    } else {
      st = ingest->Add(chunk);
    }
  }
  Sent(st);
  if (st.ok() && !first) Sent(ingest->Finish());
}

// "a=1&b=2" as the HTTP front end hands query parameters over.
std::multimap<std::string, std::string> Query(const std::string& text) {
  std::multimap<std::string, std::string> f;
  for (absl::string_view kv : absl::StrSplit(text, '&', absl::SkipEmpty())) {
    std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    f.emplace(std::move(p.first), std::move(p.second));
  }
  return f;
}

template <typename Req>
bool Parse(Req* r, const uint8_t* p, size_t n) {
  return r->ParseFromArray(p, static_cast<int>(n));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* s = new Server();
  static int uploads = 0;
  api::Handler& h = *s->handler;
  if (size == 0) return 0;
  if (++uploads % 500 == 0) (void)s->store->DeleteRunsBefore(INT64_MAX);  // keep the store small
  if (data[0] == '{') {
    // As POST /api/v1/runs takes it: streamed in pieces (their size from the
    // input's length), each pair and matrix parsed as it completes, then the
    // chunks replayed into an upload.
    api::RunJsonStream body;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const size_t piece = 1 + size % 61;
    absl::Status st;
    for (size_t i = 0; i < size && st.ok(); i += piece) st = body.Feed(text.substr(i, piece));
    if (st.ok()) st = body.Finish();
    Sent(st);
    if (!st.ok()) return 0;
    std::unique_ptr<gdrbench::server::history::Ingester> ingest = h.NewUpload();
    st = body.Replay([&](const v1::RunChunk& c) { return c.has_header() ? ingest->Begin(c.header()) : ingest->Add(c); });
    Sent(st);
    if (st.ok()) Sent(ingest->Finish());
    return 0;
  }
  const uint8_t* p = data + 1;
  const size_t n = size - 1;
  switch (data[0] % 12) {
    case 0: Upload(h, p, n); break;
    case 1: { v1::GetRunRequest r; if (Parse(&r, p, n)) Sent(h.GetRun(r)); break; }
    case 2: {
      v1::ListRunsRequest r;
      if (!Parse(&r, p, n)) break;
      auto out = h.ListRuns(r);
      Sent(out);
      break;
    }
    case 3: {
      v1::ListCellsRequest r;
      if (!Parse(&r, p, n)) break;
      auto out = h.ListCells(r);
      Sent(out);
      if (out.ok() && r.page_size() > 0) Check(out->cells_size() <= static_cast<int>(r.page_size()));
      break;
    }
    case 4: { v1::CompareRunsRequest r; if (Parse(&r, p, n)) Sent(h.CompareRuns(r)); break; }
    case 5: { v1::LinkTrendRequest r; if (Parse(&r, p, n)) Sent(h.GetLinkTrend(r)); break; }
    case 6: { v1::NodeTrendRequest r; if (Parse(&r, p, n)) Sent(h.GetNodeTrend(r)); break; }
    case 7: {
      v1::SetBaselineRequest r;
      if (Parse(&r, p, n)) Sent(h.SetBaseline(r, api::Principal{"fuzz", api::Role::kWrite}));
      break;
    }
    case 8: { v1::GetCapacityReportRequest r; if (Parse(&r, p, n)) Sent(h.GetCapacityReport(r)); break; }
    case 9: {
      v1::ExportRunRequest r;
      if (Parse(&r, p, n)) Sent(h.ExportRun(r, [](const v1::RunChunk&) { return absl::OkStatus(); }));
      break;
    }
    case 10:
    case 11: {
      // HTTP: GET /api/v1/runs/{id}/cells?... and /api/v1/compare?...
      const auto fields = Query(std::string(reinterpret_cast<const char*>(p), n));
      if (data[0] % 12 == 10) {
        v1::ListCellsRequest r;
        absl::Status st = api::FieldsToMessage(fields, &r);
        Sent(st);
        if (st.ok()) Sent(h.ListCells(r));
      } else {
        v1::CompareRunsRequest r;
        absl::Status st = api::FieldsToMessage(fields, &r);
        Sent(st);
        if (st.ok()) Sent(h.CompareRuns(r));
      }
      break;
    }
  }
  return 0;
}
