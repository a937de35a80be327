// UploadRun with its chunks read as bytes (grpc_service.h): the generated
// handler, which parses every chunk into a v1.RunChunk, is replaced by one
// of the same kind that hands this class each message's bytes.
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/rpc/status.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/support/method_handler.h"
#include "server/api/grpc_call.h"
#include "server/api/grpc_service.h"
#include "server/api/idle_watch.h"
#include "server/history/pair_check.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {
namespace {

// UploadRun's index among the service's methods: the generated service adds
// them in the .proto's order.
int UploadRunIndex() {
  const auto* service = v1::RunChunk::descriptor()->file()->FindServiceByName("Controller");
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    if (service->method(i)->name() == "UploadRun") return i;
  }
  return -1;
}

// One received message's bytes, whole.
absl::Status Flatten(const grpc::ByteBuffer& buffer, std::string* out) {
  std::vector<grpc::Slice> slices;
  if (grpc::Status st = buffer.Dump(&slices); !st.ok()) {
    return absl::InternalError(absl::StrCat("reading an upload chunk: ", st.error_message()));
  }
  out->clear();
  out->reserve(buffer.Length());
  for (const grpc::Slice& s : slices) out->append(reinterpret_cast<const char*>(s.begin()), s.size());
  return absl::OkStatus();
}

absl::Status NotAChunk() {
  return absl::InvalidArgumentError("a chunk that is not a serialized gdrbench.v1.RunChunk");
}

// A chunk after the header: a pair chunk as it came, anything else parsed.
absl::Status Feed(history::Ingester& ingest, absl::string_view bytes, v1::RunChunk* chunk) {
  if (std::optional<absl::string_view> pairs = history::SinglePairChunk(bytes)) {
    return ingest.AddSerializedPairs(*pairs);
  }
  chunk->Clear();
  if (!chunk->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return NotAChunk();
  return ingest.Add(*chunk);
}

}  // namespace

GrpcControllerService::GrpcControllerService(Handler& handler, const Authorizer& auth,
                                             std::chrono::milliseconds upload_idle)
    : h_(handler), auth_(auth), upload_idle_(upload_idle) {
  static const int index = UploadRunIndex();
  if (index < 0) {
    spdlog::critical("gdrbench.v1.Controller has no UploadRun: uploads are refused (UNIMPLEMENTED)");
    return;
  }
  MarkMethodStreamed(
      index,
      new grpc::internal::ClientStreamingHandler<GrpcControllerService, grpc::ByteBuffer,
                                                 v1::UploadRunResponse>(
          [](GrpcControllerService* s, grpc::ServerContext* ctx, grpc::ServerReader<grpc::ByteBuffer>* reader,
             v1::UploadRunResponse* resp) { return s->UploadRunBytes(ctx, reader, resp); },
          this));
}

grpc::Status GrpcControllerService::UploadRunBytes(grpc::ServerContext* ctx,
                                                   grpc::ServerReader<grpc::ByteBuffer>* reader,
                                                   v1::UploadRunResponse* resp) {
  GDR_CALLER(Role::kWrite);
  if (absl::Status st = h_.DrainRefusal(); !st.ok()) return rpc::ToGrpc(st);
  uploads_in_flight_.fetch_add(1);
  struct Done {
    std::atomic<int>& n;
    ~Done() { n.fetch_sub(1); }
  } done{uploads_in_flight_};
  auto ingest = h_.NewUpload();
  grpc::ByteBuffer buffer;
  std::string bytes;
  v1::RunChunk chunk;
  bool first = true;
  absl::Status st;
  // The log line is written by the watch before it cancels: the client sees
  // the call end only after the reason is in the log.
  auto idle = std::make_unique<IdleWatch>(ctx, upload_idle_, [&] {
    spdlog::warn("upload from {} by {} ended: no chunk for {} s, nothing stored", ctx->peer(), who->name,
                 upload_idle_.count() / 1000.0);
  });
  // Read every chunk even after an error, so the client sees the status.
  while (reader->Read(&buffer)) {
    idle->Touch();
    if (!st.ok()) continue;
    st = Flatten(buffer, &bytes);
    if (!st.ok()) continue;
    if (first) {
      first = false;
      if (!chunk.ParseFromString(bytes)) {
        st = NotAChunk();
      } else {
        st = chunk.has_header() ? ingest->Begin(chunk.header())
                                : absl::InvalidArgumentError(
                                      "the first chunk must be the header (v1.Run without pairs and cells)");
      }
    } else {
      st = Feed(*ingest, bytes, &chunk);
    }
  }
  const bool went_quiet = idle->fired();
  idle.reset();  // the commit below may take its time: the client is waiting, not quiet
  if (went_quiet) {
    return grpc::Status(
        grpc::StatusCode::DEADLINE_EXCEEDED,  // the client sees CANCELLED (the call was cancelled)
        absl::StrCat("no chunk for ", upload_idle_.count() / 1000.0, " s: upload ended, nothing stored"));
  }
  if (!st.ok()) return rpc::ToGrpc(st);
  if (ctx->IsCancelled())
    return grpc::Status(grpc::StatusCode::CANCELLED, "upload cancelled: nothing stored");
  auto r = h_.FinishUpload(*ingest);
  if (r.ok())
    spdlog::info("upload of {} by {}{}", r->run_id(), who->name,
                 r->already_stored() ? ": already stored" : "");
  return GrpcReply(std::move(r), resp);
}

}  // namespace gdrbench::server::api
