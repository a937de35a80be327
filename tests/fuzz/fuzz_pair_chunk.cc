// libFuzzer: the bytes of an UploadRun pair chunk into the ingest's check
// (server/history/pair_check.h), as gRPC's UploadRun and POST /api/v1/runs
// hand them over (Ingester::AddSerializedPairs), and the same bytes as a
// whole RunChunk into SinglePairChunk (gRPC's view of the pairs inside one).
// One PairChunkCheck serves every input, as one serves every chunk of an
// upload (its arena reset between them).
//   input '{...': a v1.Run as JSON (seeds: the real run.json files of
//                 tests/testdata/runs); its pairs, serialized as one chunk,
//                 are the bytes checked (and, wrapped, the RunChunk's)
//   otherwise   : the bytes themselves
// Invariants: no crash; the check accepts exactly what protobuf's parser
// accepts and the checks of the parsed message pass (and counts as many
// pairs); an accepted pair has valid node names and a known status; the
// view SinglePairChunk gives, when it gives one, parses exactly when the
// RunChunk does, to the RunChunk's pairs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "gdrbench/v1/controller.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/history/names.h"
#include "server/history/pair_check.h"

namespace {

namespace v1 = gdrbench::v1;
namespace history = gdrbench::server::history;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckChunk(history::PairChunkCheck& check, const std::string& bytes) {
  const absl::StatusOr<uint32_t> n = check.Check(bytes, 0);
  v1::PairChunk parsed;
  const bool parses = parsed.ParseFromString(bytes);
  if (!parses) {
    Check(!n.ok() && absl::IsInvalidArgument(n.status()));
    return;
  }
  const absl::StatusOr<uint32_t> again = history::CheckPairChunk(parsed, 0);
  Check(n.ok() == again.ok());
  if (!n.ok()) return;
  Check(*n == static_cast<uint32_t>(parsed.pairs_size()) && *again == *n);
  for (const v1::PairResult& p : parsed.pairs()) {
    Check(history::ValidNodeName(p.src().node()) && history::ValidNodeName(p.dst().node()));
    Check(v1::ResultStatus_IsValid(p.status()));
  }
}

void CheckRunChunk(const std::string& bytes) {
  const std::optional<absl::string_view> view = history::SinglePairChunk(bytes);
  if (!view) return;
  v1::RunChunk chunk;
  v1::PairChunk pairs;
  const bool whole = chunk.ParseFromString(bytes);
  Check(whole == pairs.ParseFromArray(view->data(), static_cast<int>(view->size())));
  if (whole)
    Check(chunk.has_pairs() && google::protobuf::util::MessageDifferencer::Equals(chunk.pairs(), pairs));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static history::PairChunkCheck* check = [] {
    google::protobuf::SetLogHandler(nullptr);  // the parser logs each string that is not UTF-8
    return new history::PairChunkCheck();
  }();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && data[0] == '{') {
    v1::Run run;
    if (!google::protobuf::util::JsonStringToMessage(bytes, &run).ok()) return 0;
    v1::PairChunk chunk;
    *chunk.mutable_pairs() = run.pairs();
    bytes = chunk.SerializeAsString();
    CheckChunk(*check, bytes);
    v1::RunChunk wrapped;
    *wrapped.mutable_pairs() = chunk;
    CheckRunChunk(wrapped.SerializeAsString());
    return 0;
  }
  CheckChunk(*check, bytes);
  CheckRunChunk(bytes);
  return 0;
}
