#include "server/history/export.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "report/run_chunks.h"

namespace gdrbench::server::history {

absl::Status ExportRun(store::Store& store, const store::RunRow& run,
                       const std::function<absl::Status(const v1::RunChunk&)>& fn) {
  v1::RunChunk chunk;
  GDR_ASSIGN_OR_RETURN(*chunk.mutable_header(), store.ReadHeader(run.key));
  const v1::Run header = chunk.header();
  GDR_RETURN_IF_ERROR(fn(chunk));
  constexpr int kCellsPerChunk = 16384;
  for (const auto& m : header.matrices()) {
    std::unordered_map<int64_t, uint32_t> index;  // nodes.id -> index in m.nodes
    GDR_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                         store.InternNodes(std::vector<std::string>(m.nodes().begin(), m.nodes().end())));
    for (uint32_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;
    chunk.Clear();
    auto flush = [&]() -> absl::Status {
      if (chunk.cells().cells_size() == 0) return absl::OkStatus();
      GDR_RETURN_IF_ERROR(fn(chunk));
      chunk.Clear();
      return absl::OkStatus();
    };
    store::CellQuery q;
    q.run = run.key;
    q.rail = m.rail();
    q.size_bytes = m.size_bytes();
    GDR_RETURN_IF_ERROR(store.ReadCells(q, [&](const store::CellRecord& c) {
      v1::MatrixCells* mc = chunk.mutable_cells();
      if (mc->cells_size() == 0) {
        mc->set_rail(m.rail());
        mc->set_size_bytes(m.size_bytes());
      }
      v1::MatrixCell* cell = mc->add_cells();
      cell->set_src(index[c.src]);
      cell->set_dst(index[c.dst]);
      cell->set_status(static_cast<v1::ResultStatus>(c.status));
      cell->set_bw_avg_gbps(c.bw_avg_gbps);
      cell->set_verdict(VerdictName(static_cast<CellVerdict>(c.verdict)));
      cell->set_expected_gbps(c.expected_gbps);
      cell->set_baseline_gbps(c.baseline_gbps);
      cell->set_reason(c.reason);
      if (mc->cells_size() == kCellsPerChunk) return flush();
      return absl::OkStatus();
    }));
    GDR_RETURN_IF_ERROR(flush());
  }
  return store.ReadPairChunks(run.key, [&](std::string bytes) -> absl::Status {
    chunk.Clear();
    if (!chunk.mutable_pairs()->ParseFromString(bytes)) {
      return absl::DataLossError(absl::StrCat("run ", run.run_id, ": a stored pair chunk does not parse"));
    }
    return fn(chunk);
  });
}

absl::StatusOr<v1::Run> AssembleRun(store::Store& store, const store::RunRow& run,
                                    uint64_t max_cells) {
  if (run.cells > max_cells) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", run.run_id, " has ", run.cells, " cells, more than ", max_cells,
        " to return whole: read it in pieces (ExportRun) or page its cells (ListCells)"));
  }
  v1::Run out;
  std::unordered_map<uint64_t, v1::BandwidthMatrix*> by_key;
  GDR_RETURN_IF_ERROR(ExportRun(store, run, [&](const v1::RunChunk& c) {
    switch (c.item_case()) {
      case v1::RunChunk::kHeader:
        out = c.header();
        for (auto& m : *out.mutable_matrices()) by_key[uint64_t{m.rail()} << 44 | m.size_bytes()] = &m;
        break;
      case v1::RunChunk::kCells: {
        auto* m = by_key[uint64_t{c.cells().rail()} << 44 | c.cells().size_bytes()];
        for (const auto& cell : c.cells().cells()) *m->add_cells() = cell;
        break;
      }
      case v1::RunChunk::kPairs:
        for (const auto& p : c.pairs().pairs()) *out.add_pairs() = p;
        break;
      default:
        break;
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<v1::UploadRunResponse> StoreRun(store::Store& store, const v1::Run& run,
                                               const IngestOptions& options) {
  Ingester ingest(store, options);
  GDR_RETURN_IF_ERROR(report::ForEachRunChunk(run, {}, [&](const v1::RunChunk& c) {
    return c.has_header() ? ingest.Begin(c.header()) : ingest.Add(c);
  }));
  return ingest.Finish();
}

}  // namespace gdrbench::server::history
