// The SweepExecutor that runs real sweeps: controller/sweep's RunSweep over
// a cluster's inventory file (read again for every sweep, so an edited
// inventory applies to the next one). A SweepSpec is mapped by
// controller/sweep's ConfigFromSpec, as `gdrbench sweep` maps its flags
// (same defaults: common/sweep_limits.h); the nodes and the agents' TLS
// come only from the inventory. Each sweep
// journals into `state_dir`: removed once the run is returned, kept (and
// named in the job's error) when the sweep stopped early, so the finished
// tests can still be stored with `gdrbench runs upload JOURNAL`.
// Thread safety: Run may be called for different clusters at once.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "controller/sweep/sweep.h"
#include "server/sweeps/sweep_manager.h"

namespace gdrbench::server::sweeps {

class LibraryExecutor final : public SweepExecutor {
 public:
  // `inventories`: cluster name -> inventory YAML. Each is loaded once here
  // (INVALID_ARGUMENT naming the cluster and the file's error) and
  // `state_dir` is created (INTERNAL), so a bad flag stops the server at
  // its start, not at the first sweep.
  static absl::StatusOr<std::unique_ptr<LibraryExecutor>> Create(
      std::map<std::string, std::string> inventories, std::string state_dir);

  std::set<std::string> clusters() const override;
  absl::Status Check(const std::string& cluster, const v1::SweepSpec& spec) const override;
  absl::StatusOr<v1::Run> Run(const std::string& cluster, const v1::SweepSpec& spec,
                              const ProgressFn& progress, const std::atomic<bool>& cancelled) override;
  void SetLinkReferences(LinkReferencesFn fn) override { link_references_ = std::move(fn); }

  // The library's config for a spec (INVALID_ARGUMENT with a sentence).
  absl::StatusOr<controller::sweep::SweepConfig> ToConfig(const std::string& cluster,
                                                          const v1::SweepSpec& spec) const;

 private:
  LibraryExecutor(std::map<std::string, std::string> inventories, std::string state_dir);
  std::map<std::string, std::string> inventories_;
  std::string state_dir_;
  LinkReferencesFn link_references_;
};

// "NAME=FILE" (the --cluster flag) into the map; INVALID_ARGUMENT otherwise.
absl::Status ParseClusterFlag(const std::string& flag, std::map<std::string, std::string>* out);

}  // namespace gdrbench::server::sweeps
