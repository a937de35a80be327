// Name resolution for agent discovery without a cluster API: a Kubernetes
// headless Service or a DNS round-robin name has one A/AAAA record per agent.
// Resolver is an interface so the inventory is unit-tested with a fake; the
// real one asks the system resolver (getaddrinfo: /etc/hosts, DNS, nsswitch).
// Thread safety: Resolve may be called concurrently.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench::controller::inventory {

class Resolver {
 public:
  virtual ~Resolver() = default;
  // Every address (A and AAAA records) of `name` as numeric strings
  // ("10.0.0.1", "fd00::1"), each once, in the resolver's order.
  // Errors: NOT_FOUND when the name has no address, UNAVAILABLE when the
  // resolver failed temporarily (EAI_AGAIN), INTERNAL otherwise; the message
  // names the name.
  virtual absl::StatusOr<std::vector<std::string>> Resolve(absl::string_view name) const = 0;
};

// getaddrinfo(AF_UNSPEC): A and AAAA records alike.
class SystemResolver final : public Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(absl::string_view name) const override;
};

// A process-wide SystemResolver.
const Resolver& DefaultResolver();

}  // namespace gdrbench::controller::inventory
