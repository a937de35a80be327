#include "controller/topology/cable_book.h"

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::topology {

std::string PortText(const PortRef& p) { return absl::StrCat(p.device, "[", p.port, "]"); }

CableBook::CableBook(std::function<std::string(const PortRef&)> name)
    : name_(name ? std::move(name) : std::function<std::string(const PortRef&)>(PortText)) {}

absl::Status CableBook::Add(const PortRef& self, const PortRef& peer, const std::string& link, double gbps,
                            const std::string& where, std::vector<Cable>& cables) {
  auto error = [&](const std::string& why) { return absl::InvalidArgumentError(absl::StrCat(where, ": ", why)); };
  if (auto it = seen_.find(self); it != seen_.end()) {
    return error(absl::StrCat(name_(self), " is listed twice (first at ", it->second.where, ")"));
  }
  const std::string claim = absl::StrCat(name_(self), " says its peer is ", name_(peer), ", but ");
  if (auto back = seen_.find(peer); back != seen_.end() && !(back->second.peer == self)) {
    return error(absl::StrCat(claim, name_(peer), " (", back->second.where, ") says ", name_(back->second.peer)));
  }
  if (auto by = claimed_.find(self); by != claimed_.end() && !(by->second.peer == peer)) {
    return error(absl::StrCat(claim, name_(by->second.peer), " (", by->second.where, ") says ", name_(self),
                              " is its peer"));
  }
  seen_[self] = Seen{peer, where};
  claimed_[peer] = Seen{self, where};
  if (seen_.count(peer)) return absl::OkStatus();  // the peer's own line listed this cable already
  Cable c;
  c.lower = self;
  c.upper = peer;
  c.link = link;
  c.gbps = gbps;
  c.where = where;
  cables.push_back(std::move(c));
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::topology
