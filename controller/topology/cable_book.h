// The cables of a dump as its lines list them: most dumps list a cable once
// from each end, and both ends must agree. Shared by the readers
// (ibnetdiscover, iblinkinfo, lldpctl) so every reader applies the same rule
// with the same wording.
//
// Thread safety: one book per parse; not shared.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/topology/fabric.h"

namespace gdrbench::controller::topology {

class CableBook {
 public:
  // `name` writes a port in errors (PortText when absent).
  explicit CableBook(std::function<std::string(const PortRef&)> name = nullptr);

  // Records that `self`'s line (at `where`, "FILE:LINE") names `peer` as the
  // far end of its cable. The first listing of a cable appends it to
  // `cables` (lower = self, upper = peer; AssignTiers orders them later); the
  // second, from the other end, only checks. INVALID_ARGUMENT prefixed
  // `where` when a port is listed twice or the two ends disagree:
  //   "f.txt:9: A[3] is listed twice (first at f.txt:4)"
  //   "f.txt:9: A[3] says its peer is B[1], but B[1] (f.txt:4) says C[2]"
  //   "f.txt:9: A[3] says its peer is B[1], but C[2] (f.txt:4) says A[3] is its peer"
  absl::Status Add(const PortRef& self, const PortRef& peer, const std::string& link, double gbps,
                   const std::string& where, std::vector<Cable>& cables);

 private:
  struct Seen {
    PortRef peer;
    std::string where;
  };
  std::function<std::string(const PortRef&)> name_;
  std::map<PortRef, Seen> seen_;     // a port -> the peer its own line names
  std::map<PortRef, Seen> claimed_;  // a port -> the port whose line names it as peer
};

// "S-0ff08c43215bae48[3]".
std::string PortText(const PortRef& p);

}  // namespace gdrbench::controller::topology
