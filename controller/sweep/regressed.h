// Regressed cells, for the retest (issue 29, confirmation before blame): the
// cells of a judged run that read regressed against the references
// gdrbench-server would judge them by once the run is stored
// (Controller.GetLinkReferences: the cluster's baseline run and each link's
// history, with each link's threshold), and, for each, two partner cells
// that separate the link from its two ends.
//
// A cell regressed when it is OK, not already low or failed (those are
// retested anyway), and below (1 - threshold) x a reference it has. Its
// partners, for a regressed a->b: a->c and d->b, with c and d the first nodes
// after a (after b), in index order and wrapping, whose cell with that end is
// OK, passed and did not regress. Retested together, the three readings
// taken later in the run tell a bad link (a->b low again, a->c and d->b fine)
// from a bad end (its partner cell low too); the server's roll-up
// (server/history/regressions.h) reads them so.
//
// Only same-rail verdict matrices (the ones the server stores and compares).
// Pure functions but FetchAndFind (which calls `fetch`); thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/analysis/matrix.h"
#include "gdrbench/v1/controller.pb.h"

namespace gdrbench::controller::sweep {

// One cell of a verdict matrix.
struct CellRef {
  const analysis::Matrix* m = nullptr;
  uint32_t src = 0, dst = 0;
};

// The server's references, per (rail, size).
using ReferenceMap = std::map<std::pair<uint32_t, uint64_t>, v1::LinkReferences>;

struct RegressedCells {
  std::vector<CellRef> regressed;  // matrix order (rail, src, dst)
  std::vector<CellRef> partners;   // two per regressed cell at most, deduplicated
};

// `nodes`: the matrices' node names (MatrixSet::nodes()). A reference naming
// a node the run does not have is ignored.
RegressedCells FindRegressed(const std::vector<const analysis::Matrix*>& verdict_matrices,
                             const std::vector<std::string>& nodes, const ReferenceMap& references);

// gdrbench-server's references of one (rail, verdict size): Controller.GetLinkReferences.
using LinkReferencesFn =
    std::function<absl::StatusOr<v1::LinkReferences>(uint32_t rail, uint64_t size_bytes)>;

// Asks `fetch` once for each same-rail verdict matrix and returns
// FindRegressed's cells. `note` gets one line per matrix ("regressions: rail 0
// size 65536 B: history (12 links with 5 or more runs)", or why its call
// failed: its cells are not retested and their findings will say "seen
// once") and one for what was found.
RegressedCells FetchAndFind(const LinkReferencesFn& fetch, const analysis::MatrixSet& matrices,
                            const std::function<void(const std::string&)>& note);

// True when `gbps` is below (1 - threshold) x reference (reference > 0).
bool Regressed(double reference, double threshold, double gbps);

}  // namespace gdrbench::controller::sweep
