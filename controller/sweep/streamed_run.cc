#include "controller/sweep/streamed_run.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/analysis/link_flags.h"
#include "controller/run/journal.h"
#include "google/protobuf/util/json_util.h"

namespace gdrbench::controller::sweep {
namespace {

// report::RenderJson's options: run.json's layout.
google::protobuf::util::JsonPrintOptions JsonOptions() {
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.preserve_proto_field_names = true;
  return o;
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  std::string json;
  auto st = google::protobuf::util::MessageToJsonString(m, &json, JsonOptions());
  if (!st.ok()) {
    return absl::InternalError(absl::StrCat(m.GetTypeName(), " to JSON: ", st.message().as_string()));
  }
  return json;
}

// Placeholders: one element stands in the header's rendering for each
// streamed array (the pairs, each matrix's cells); the streamed elements
// replace it. A control character no report field holds keeps them unique.
constexpr char kMarker[] = "\x01gdrbench-streamed-";
std::string MarkerJson(const std::string& what) {
  return absl::StrCat("\\u0001gdrbench-streamed-", what, "\"");
}

// Where a placeholder element sits in the header's JSON.
struct Slot {
  size_t begin = 0, end = 0;  // the element's '{' and one past its '}'
  size_t indent = 0;          // spaces before its '{'
  int matrix = -1;            // -1: the pairs
};

absl::StatusOr<Slot> FindSlot(const std::string& json, const std::string& marker, int matrix) {
  const size_t at = json.find(marker);
  if (at == std::string::npos)
    return absl::InternalError("run JSON: a streamed array's placeholder is missing");
  Slot s;
  s.begin = json.rfind('{', at);
  s.end = json.find('}', at) + 1;
  const size_t line = json.rfind('\n', s.begin);
  s.indent = s.begin - (line == std::string::npos ? 0 : line + 1);
  s.matrix = matrix;
  return s;
}

// The elements of a holder message's one repeated field (PairChunk,
// MatrixCells with only cells set) as json_util renders them, re-indented to
// `indent` spaces: the text a Run's array holds for the same elements.
absl::Status AppendElements(const google::protobuf::Message& holder, size_t indent, std::ostream& out) {
  GDR_ASSIGN_OR_RETURN(std::string h, ToJson(holder));
  const size_t open = h.find('[');
  const size_t close = h.rfind(']');
  if (open == std::string::npos || close == std::string::npos) {
    return absl::InternalError(absl::StrCat(holder.GetTypeName(), " to JSON: no array"));
  }
  const size_t begin = h.find('{', open);
  const size_t end = h.rfind('}', close) + 1;
  const size_t line = h.rfind('\n', begin);
  const size_t from = begin - (line == std::string::npos ? 0 : line + 1);
  std::string body;
  body.reserve(end - begin + (end - begin) / 8);
  for (size_t i = begin; i < end; ++i) {
    body.push_back(h[i]);
    if (h[i] != '\n') continue;
    // Each line's indentation moved from the holder's depth to the run's.
    size_t spaces = 0;
    while (i + 1 + spaces < end && h[i + 1 + spaces] == ' ') ++spaces;
    body.append(spaces + indent >= from ? spaces + indent - from : 0, ' ');
    i += spaces;
  }
  out << body;
  return absl::OkStatus();
}

}  // namespace

StreamedRun StreamedRun::Whole(v1::Run run) {
  StreamedRun r;
  r.run_ = std::move(run);
  return r;
}

StreamedRun StreamedRun::FromJournal(v1::Run header, std::shared_ptr<analysis::MatrixSet> matrices,
                                     std::string journal_path, bool with_pairs, v1::VerdictPolicy policy) {
  StreamedRun r;
  r.streamed_ = true;
  r.run_ = std::move(header);
  r.matrices_ = std::move(matrices);
  r.journal_path_ = std::move(journal_path);
  r.with_pairs_ = with_pairs && !r.journal_path_.empty();
  r.policy_ = std::move(policy);
  return r;
}

size_t StreamedRun::cells() const {
  size_t n = 0;
  if (!streamed_) {
    for (const auto& m : run_.matrices()) n += static_cast<size_t>(m.cells_size());
    return n;
  }
  for (const analysis::Matrix* m : std::as_const(*matrices_).matrices()) n += analysis::PresentCells(*m);
  return n;
}

absl::Status StreamedRun::ForEachCellChunk(
    size_t max_cells,
    const std::function<absl::Status(size_t, const google::protobuf::RepeatedPtrField<v1::MatrixCell>&)>& fn)
    const {
  max_cells = std::max<size_t>(max_cells, 1);
  google::protobuf::RepeatedPtrField<v1::MatrixCell> chunk;
  if (!streamed_) {
    for (int i = 0; i < run_.matrices_size(); ++i) {
      const auto& cells = run_.matrices(i).cells();
      for (int k = 0; k < cells.size(); k += static_cast<int>(max_cells)) {
        chunk.Clear();
        const int end = std::min(cells.size(), k + static_cast<int>(max_cells));
        for (int c = k; c < end; ++c) *chunk.Add() = cells.Get(c);
        GDR_RETURN_IF_ERROR(fn(static_cast<size_t>(i), chunk));
      }
    }
    return absl::OkStatus();
  }
  const std::vector<const analysis::Matrix*> ms = std::as_const(*matrices_).matrices();
  for (size_t i = 0; i < ms.size(); ++i) {
    size_t cursor = 0;
    bool more = true;
    while (more) {
      chunk.Clear();
      more = analysis::AppendCells(*ms[i], &cursor, max_cells, &chunk);
      if (chunk.empty()) break;
      GDR_RETURN_IF_ERROR(fn(i, chunk));
    }
  }
  return absl::OkStatus();
}

absl::Status StreamedRun::ForEachPairChunk(
    size_t max_pairs,
    const std::function<absl::Status(const google::protobuf::RepeatedPtrField<v1::PairResult>&)>& fn) const {
  max_pairs = std::max<size_t>(max_pairs, 1);
  google::protobuf::RepeatedPtrField<v1::PairResult> chunk;
  if (!streamed_) {
    for (int k = 0; k < run_.pairs_size(); k += static_cast<int>(max_pairs)) {
      chunk.Clear();
      const int end = std::min(run_.pairs_size(), k + static_cast<int>(max_pairs));
      for (int c = k; c < end; ++c) *chunk.Add() = run_.pairs(c);
      GDR_RETURN_IF_ERROR(fn(chunk));
    }
    return absl::OkStatus();
  }
  if (!with_pairs_) return absl::OkStatus();
  run::JournalVisitor v;
  v.on_test = [&](const v1::PairResult& p, uint32_t, uint32_t) -> absl::Status {
    v1::PairResult* kept = chunk.Add();
    *kept = p;
    // As analysis::FlagLinks(policy, run) sets it on every pair of a run.
    kept->set_link_flag(analysis::LinkFlag(*kept, policy_));
    if (static_cast<size_t>(chunk.size()) < max_pairs) return absl::OkStatus();
    absl::Status st = fn(chunk);
    chunk.Clear();
    return st;
  };
  GDR_RETURN_IF_ERROR(run::StreamJournal(journal_path_, v).status());
  if (!chunk.empty()) return fn(chunk);
  return absl::OkStatus();
}

absl::Status StreamedRun::ForEachRunChunk(const gdrbench::report::ChunkSizes& sizes,
                                          const std::function<absl::Status(const v1::RunChunk&)>& fn) const {
  if (!streamed_) return gdrbench::report::ForEachRunChunk(run_, sizes, fn);
  v1::RunChunk chunk;
  *chunk.mutable_header() = run_;
  GDR_RETURN_IF_ERROR(fn(chunk));
  GDR_RETURN_IF_ERROR(ForEachCellChunk(
      sizes.cells, [&](size_t matrix, const google::protobuf::RepeatedPtrField<v1::MatrixCell>& cells) {
        chunk.Clear();
        v1::MatrixCells* c = chunk.mutable_cells();
        const v1::BandwidthMatrix& m = run_.matrices(static_cast<int>(matrix));
        // As report::ForEachRunChunk fills them.
        c->set_rail(m.rail());
        c->set_size_bytes(m.size_bytes());
        if (m.has_dst_rail()) c->set_dst_rail(m.dst_rail());
        *c->mutable_cells() = cells;
        return fn(chunk);
      }));
  return ForEachPairChunk(sizes.pairs, [&](const google::protobuf::RepeatedPtrField<v1::PairResult>& pairs) {
    chunk.Clear();
    *chunk.mutable_pairs()->mutable_pairs() = pairs;
    return fn(chunk);
  });
}

absl::StatusOr<v1::Run> StreamedRun::Materialize() const {
  v1::Run run = run_;
  if (!streamed_) return run;
  GDR_RETURN_IF_ERROR(ForEachCellChunk(
      chunks_.cells, [&](size_t matrix, const google::protobuf::RepeatedPtrField<v1::MatrixCell>& cells) {
        run.mutable_matrices(static_cast<int>(matrix))->mutable_cells()->MergeFrom(cells);
        return absl::OkStatus();
      }));
  GDR_RETURN_IF_ERROR(
      ForEachPairChunk(chunks_.pairs, [&](const google::protobuf::RepeatedPtrField<v1::PairResult>& pairs) {
        run.mutable_pairs()->MergeFrom(pairs);
        return absl::OkStatus();
      }));
  return run;
}

absl::Status StreamedRun::WriteJson(std::ostream& out) const {
  if (!streamed_) {
    GDR_ASSIGN_OR_RETURN(std::string json, ToJson(run_));
    out << json;
    return out ? absl::OkStatus() : absl::InternalError("run JSON: write failed");
  }
  // The header's rendering with one placeholder element per non-empty
  // streamed array, each replaced by the elements as they are rendered.
  v1::Run skeleton = run_;
  std::vector<std::pair<std::string, int>> markers;
  const std::vector<const analysis::Matrix*> ms = std::as_const(*matrices_).matrices();
  for (size_t i = 0; i < ms.size(); ++i) {
    if (analysis::PresentCells(*ms[i]) == 0) continue;
    const std::string what = absl::StrCat("cells-", i);
    skeleton.mutable_matrices(static_cast<int>(i))->add_cells()->set_reason(absl::StrCat(kMarker, what));
    markers.emplace_back(MarkerJson(what), static_cast<int>(i));
  }
  // Whether the journal holds a pair is known only by reading it: the
  // first chunk is read before the placeholder goes in.
  bool any_pair = false;
  if (with_pairs_) {
    run::JournalVisitor probe;
    probe.on_measured = [&](const run::FinishedTest&) -> absl::Status {
      any_pair = true;
      return absl::CancelledError("one is enough");
    };
    absl::StatusOr<run::JournalSummary> read = run::StreamJournal(journal_path_, probe);
    if (!read.ok() && !absl::IsCancelled(read.status())) return read.status();
  }
  if (any_pair) {
    skeleton.add_pairs()->set_reason(absl::StrCat(kMarker, "pairs"));
    markers.emplace_back(MarkerJson("pairs"), -1);
  }
  GDR_ASSIGN_OR_RETURN(std::string json, ToJson(skeleton));
  std::vector<Slot> slots;
  for (const auto& [marker, matrix] : markers) {
    GDR_ASSIGN_OR_RETURN(Slot s, FindSlot(json, marker, matrix));
    slots.push_back(s);
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.begin < b.begin; });
  size_t at = 0;
  for (const Slot& s : slots) {
    out.write(json.data() + at, static_cast<std::streamsize>(s.begin - at));
    bool first = true;
    const std::string separator = absl::StrCat(",\n", std::string(s.indent, ' '));
    if (s.matrix >= 0) {
      size_t cursor = 0;
      bool more = true;
      v1::MatrixCells holder;
      while (more) {
        holder.clear_cells();
        more = analysis::AppendCells(*ms[static_cast<size_t>(s.matrix)], &cursor,
                                     std::max<size_t>(chunks_.cells, 1), holder.mutable_cells());
        if (holder.cells().empty()) break;
        if (!first) out << separator;
        first = false;
        GDR_RETURN_IF_ERROR(AppendElements(holder, s.indent, out));
      }
    } else {
      v1::PairChunk holder;
      GDR_RETURN_IF_ERROR(
          ForEachPairChunk(chunks_.pairs, [&](const google::protobuf::RepeatedPtrField<v1::PairResult>& p) {
            if (!first) out << separator;
            first = false;
            *holder.mutable_pairs() = p;
            return AppendElements(holder, s.indent, out);
          }));
    }
    at = s.end;
  }
  out.write(json.data() + at, static_cast<std::streamsize>(json.size() - at));
  out.flush();
  return out ? absl::OkStatus() : absl::InternalError("run JSON: write failed");
}

}  // namespace gdrbench::controller::sweep
