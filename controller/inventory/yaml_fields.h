// The typed readers of inventory YAML fields, each error pointing at the
// file, line and field ("inv.yaml:7: tls.ca: expected a non-empty string"),
// shared by the inventory's sections (inventory.cc, qos_yaml.cc, tls_yaml.cc).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/inventory/inventory.h"
#include "yaml-cpp/yaml.h"

namespace gdrbench::controller::inventory {

// Where a parse error points: source, line of the offending node, field path.
class Ctx {
 public:
  explicit Ctx(absl::string_view source) : source_(source) {}
  absl::Status Error(const YAML::Node& at, absl::string_view field, absl::string_view why) const;
  // "inv.yaml:7" (the node's line), or the source alone when it has none.
  std::string Where(const YAML::Node& at) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

// How a node reads in an error: 'scalar', a list, a mapping, nothing.
std::string Shown(const YAML::Node& n);

// A mapping whose keys are all in `allowed`; both errors name the accepted
// keys, so a wrong guess at the schema says what to write instead
// (docs/inventory.md has the whole reference).
absl::Status CheckKeys(const Ctx& ctx, const YAML::Node& map, absl::string_view field,
                       const std::set<std::string>& allowed);

absl::StatusOr<std::string> GetString(const Ctx& ctx, const YAML::Node& n, absl::string_view field);
// A version string; an unquoted scalar YAML would read as a number is refused
// with the quoting hint (yaml_fields.cc says which).
absl::StatusOr<std::string> GetVersion(const Ctx& ctx, const YAML::Node& n, absl::string_view field);
absl::StatusOr<uint64_t> GetUint(const Ctx& ctx, const YAML::Node& n, absl::string_view field, uint64_t max);
absl::StatusOr<double> GetRate(const Ctx& ctx, const YAML::Node& n, absl::string_view field);
absl::StatusOr<bool> GetBool(const Ctx& ctx, const YAML::Node& n, absl::string_view field);

// The qos: section (sl, tclass) of the inventory (qos_yaml.cc).
absl::StatusOr<Qos> GetQos(const Ctx& ctx, const YAML::Node& n);

// The tls: section (ca, cert, key, server_name, insecure) of the inventory,
// each file's origin ("inv.yaml:7: tls.ca") kept for its errors (tls_yaml.cc).
absl::StatusOr<rpc::ClientTlsConfig> GetTls(const Ctx& ctx, const YAML::Node& t);

}  // namespace gdrbench::controller::inventory
