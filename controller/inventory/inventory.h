// The set of nodes a sweep covers, from a YAML file, a Slurm hostlist or an
// explicit --agents list. Pure data plus parsers; thread-safe (no state).
//
// YAML schema (every key optional except `nodes`):
//   port: 7070                  # agent port for entries without one
//   link_gbps: 400              # expected per-port link rate; 0/absent = the
//                               # port's active rate reported by the agent
//   memory: host                # default buffer kind: host | hugepage | gpu
//   tls: {ca: FILE, cert: FILE, key: FILE, server_name: NAME, insecure: false}
//   rails:                      # default rails for every node: NIC -> GPU
//     - {nic: mlx5_0, gpu: 0}
//   nodes:
//     - name: node01            # a single node
//       address: 10.0.0.1:7070  # default NAME:port
//       rails: [...]            # overrides the default rails
//       link_gbps: 200
//       leaf: su1-leaf{rail}    # the leaf switch its NIC of each rail is
//                               # cabled to: one name ("{rail}" becomes the
//                               # rail index) or a list, one per rail
//       spine_group: su1        # the spine group (plane, pod) of those
//                               # leaves: one name ("{rail}" too) or a list
//     - hostlist: node[02-16]   # many nodes, address NAME:port
//       rails: [...]
//     - dns: agents.gdrbench.svc.cluster.local   # one node per A/AAAA
//                               # record (NAME[:PORT]); named by its agent
//   qos:                        # the fabric's class for test traffic, as
//     sl: 3                     # NCCL_IB_SL / NCCL_IB_TC: the tests' service
//     tclass: 106               # level (0..15, out of band only) and traffic
//                               # class (0..255); --sl / --tclass override
//   expect:                     # fleet expectations (expectations.h)
//     gpus: 8
//     rails: 8
//     link_gbps: 400            # every rail at least this
//     link_state: PORT_ACTIVE
//     nvidia_driver: "580"      # exact or prefix; also cuda_driver,
//                               # rdma_core, ofed, hca_firmware
//     min_mtu: 4096
// The whole reference, with examples: docs/inventory.md.
// Errors name the source, the line and the field:
//   "inv.yaml:7: nodes[1].rails[0].gpu: expected a non-negative integer, got 'x'".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/rpc/tls.h"
#include "controller/inventory/expectations.h"
#include "controller/inventory/resolver.h"

namespace gdrbench::controller::inventory {

inline constexpr int kDefaultAgentPort = 7070;  // gdrbench-agent's default --listen port

// Rail r of a node: its r-th NIC and the GPU whose memory that NIC moves.
// Rail r of one node is tested against rail r of the others.
struct Rail {
  std::string nic;                 // "mlx5_0"; empty = let the agent choose
  std::optional<uint32_t> gpu;     // GPU index, when GPU memory is used
};

// A topology label of a node per rail (inventory `leaf:` / `spine_group:`):
// one text for every rail ("{rail}" replaced by the rail index) or a list.
struct RailLabel {
  std::string every_rail;
  std::vector<std::string> per_rail;
  bool empty() const { return every_rail.empty() && per_rail.empty(); }
  // "" when the rail has no label.
  std::string Of(size_t rail) const;
};

struct Node {
  std::string name;                // unique
  std::string address;             // agent HOST:PORT
  std::vector<Rail> rails;         // empty = discovered from the agent (GetNodeInfo)
  double link_gbps = 0;            // expected link rate; 0 = from the agent
  int line = 0;                    // where it was defined (1-based; 0 = not from a file)
  // Found by DNS (`dns:NAME`): `name` is its address until its agent's
  // GetNodeInfo hostname replaces it (run::NameDiscoveredNodes).
  bool name_from_agent = false;
  RailLabel leaf{};                // the leaf switch per rail (capacity report)
  RailLabel spine_group{};
};

// The fabric's default service level and traffic class for the tests
// (inventory `qos:`); unset: the sweep's (0, or rdma_cm's default TOS).
struct Qos {
  std::optional<uint32_t> sl;      // 0 .. 15
  std::optional<uint32_t> tclass;  // 0 .. 255
};

struct Inventory {
  std::vector<Node> nodes;
  rpc::ClientTlsConfig tls;
  bool has_tls = false;            // the file had a tls: section
  std::string memory = "host";
  std::string source;              // file name, "--agents" or "--hostlist"
  Expectations expect;             // what every node must have (expect:)
  Qos qos;                         // qos:
};

// INVALID_ARGUMENT "<source>:<line>: <field>: <problem>" for schema errors,
// YAML syntax errors, duplicate node names and an empty node list.
// `dns:` entries are resolved with `resolver`; a name without an address is
// an error naming the line (NOT_FOUND / UNAVAILABLE from the resolver).
absl::StatusOr<Inventory> ParseInventoryYaml(absl::string_view text, absl::string_view source,
                                             const Resolver& resolver = DefaultResolver());
// NOT_FOUND / PERMISSION_DENIED naming the file, else as ParseInventoryYaml.
absl::StatusOr<Inventory> LoadInventoryFile(const std::string& path,
                                            const Resolver& resolver = DefaultResolver());

// "node[01-16]" or "node[01-16]:7070": one node per host, address
// HOST:port (`default_port` when the expression has no ":PORT").
absl::StatusOr<Inventory> InventoryFromHostlist(absl::string_view expression, int default_port);

// "10.0.0.1:50051,10.0.0.2:50051" or "node[1-4]:7000": comma-separated
// HOST[:PORT] entries, each may be a hostlist. Node name = the host.
// "dns:NAME[:PORT]" entries become one node per address of NAME
// (name_from_agent); an address listed twice is one node.
absl::StatusOr<Inventory> InventoryFromAgents(absl::string_view agents, int default_port,
                                              const Resolver& resolver = DefaultResolver());

// One node per address of "NAME[:PORT]" (the part after "dns:"), address
// ADDR:PORT, named ADDR until its agent names it. INVALID_ARGUMENT for a bad
// port; the resolver's error, prefixed "dns:NAME: ", otherwise.
absl::StatusOr<std::vector<Node>> NodesFromDns(absl::string_view spec, int default_port,
                                               const Resolver& resolver);

// Splits "host:port" / "[v6]:port"; port -1 when absent. INVALID_ARGUMENT for
// a port outside 1..65535.
absl::Status SplitHostPort(absl::string_view address, std::string* host, int* port);

// The rail count of the inventory: the largest rail list (0 when every node
// discovers its rails).
size_t MaxRails(const Inventory& inventory);

}  // namespace gdrbench::controller::inventory
