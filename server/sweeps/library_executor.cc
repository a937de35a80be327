#include "server/sweeps/library_executor.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/inventory/inventory.h"
#include "controller/sweep/spec.h"
#include "server/store/store.h"

namespace gdrbench::server::sweeps {

namespace sweep = controller::sweep;

LibraryExecutor::LibraryExecutor(std::map<std::string, std::string> inventories, std::string state_dir)
    : inventories_(std::move(inventories)), state_dir_(std::move(state_dir)) {}

absl::StatusOr<std::unique_ptr<LibraryExecutor>> LibraryExecutor::Create(
    std::map<std::string, std::string> inventories, std::string state_dir) {
  for (const auto& [name, file] : inventories) {
    auto inv = controller::inventory::LoadInventoryFile(file);
    if (!inv.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--cluster ", name, "=", file, ": ", inv.status().message()));
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("--state-dir ", state_dir, ": ", ec.message()));
  return std::unique_ptr<LibraryExecutor>(new LibraryExecutor(std::move(inventories), std::move(state_dir)));
}

std::set<std::string> LibraryExecutor::clusters() const {
  std::set<std::string> out;
  for (const auto& [name, file] : inventories_) out.insert(name);
  return out;
}

absl::StatusOr<sweep::SweepConfig> LibraryExecutor::ToConfig(const std::string& cluster,
                                                             const v1::SweepSpec& s) const {
  auto it = inventories_.find(cluster);
  if (it == inventories_.end()) return absl::NotFoundError(absl::StrCat("no inventory for cluster ", cluster));
  GDR_ASSIGN_OR_RETURN(controller::inventory::Inventory inventory,
                       controller::inventory::LoadInventoryFile(it->second));
  GDR_ASSIGN_OR_RETURN(sweep::SweepConfig c, sweep::ConfigFromSpec(s));
  if (c.schedule.mode == controller::schedule::Mode::kPairs) {
    return absl::InvalidArgumentError("mode pairs needs a pair list file: run it with gdrbench sweep --mode pairs");
  }
  c.inventory = std::move(inventory);
  return c;
}

absl::Status LibraryExecutor::Check(const std::string& cluster, const v1::SweepSpec& spec) const {
  GDR_ASSIGN_OR_RETURN(sweep::SweepConfig c, ToConfig(cluster, spec));
  return sweep::PlanWithoutAgents(c).status();
}

absl::StatusOr<v1::Run> LibraryExecutor::Run(const std::string& cluster, const v1::SweepSpec& spec,
                                             const ProgressFn& progress, const std::atomic<bool>& cancelled) {
  GDR_ASSIGN_OR_RETURN(sweep::SweepConfig c, ToConfig(cluster, spec));
  std::error_code ec;
  c.journal_path = (std::filesystem::path(state_dir_) /
                    absl::StrCat("sweep-", cluster, "-", store::NowMicros(), ".journal"))
                       .string();
  // The manager's flag is the library's cancellation (seen between tests
  // and once the probe is done).
  controller::run::CancelToken token(&cancelled);
  sweep::SweepHooks hooks;
  hooks.cancel = &token;
  // A phase change comes without counters: the last ones stay (a watcher
  // sees "analysis, 8 of 8 tests done", not zeros).
  v1::SweepProgress out;
  hooks.on_progress = [&](const sweep::SweepProgress& p) {
    out.set_phase(sweep::PhaseName(p.phase));
    if (p.tests.tests_total == 0) {
      progress(out);
      return;
    }
    out.set_tests_total(p.tests.tests_total);
    out.set_tests_done(p.tests.tests_done);
    out.set_tests_bad(p.tests.tests_bad);
    out.set_round(static_cast<uint32_t>(p.tests.round));
    out.set_rounds(static_cast<uint32_t>(p.tests.rounds));
    out.set_elapsed_s(p.tests.elapsed_s);
    out.set_eta_s(p.tests.eta_s);
    progress(out);
  };
  if (link_references_) {
    c.link_references = [&](uint32_t rail, uint64_t size_bytes) {
      v1::GetLinkReferencesRequest req;
      req.set_cluster(cluster);
      req.set_rail(rail);
      req.set_size_bytes(size_bytes);
      return link_references_(req);
    };
  }
  absl::StatusOr<v1::Run> run = sweep::RunSweep(c, hooks);
  if (run.ok()) {
    run->set_cluster(cluster);
    std::filesystem::remove(c.journal_path, ec);
  }
  return run;
}

absl::Status ParseClusterFlag(const std::string& flag, std::map<std::string, std::string>* out) {
  auto eq = flag.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--cluster '", flag, "': expected NAME=INVENTORY.yaml"));
  }
  std::string name = flag.substr(0, eq);
  if (out->count(name)) return absl::InvalidArgumentError(absl::StrCat("--cluster ", name, " given twice"));
  (*out)[name] = flag.substr(eq + 1);
  return absl::OkStatus();
}

}  // namespace gdrbench::server::sweeps
