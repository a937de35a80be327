#include "server/sweeps/library_executor.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "controller/cli/sweep_flags.h"
#include "controller/inventory/inventory.h"
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
  sweep::SweepConfig c;
  ASSIGN_OR_RETURN(c.inventory, controller::inventory::LoadInventoryFile(it->second));
  const std::string mode = s.mode().empty() ? "all-pairs" : s.mode();
  if (mode == "pairs") {
    return absl::InvalidArgumentError("mode pairs needs a pair list file: run it with gdrbench sweep --mode pairs");
  }
  ASSIGN_OR_RETURN(c.schedule.mode, controller::schedule::ParseMode(mode));
  c.schedule.bidirectional = s.bidirectional();
  c.schedule.quick_matchings = s.quick_rounds() ? s.quick_rounds() : 3;
  c.schedule.max_concurrent = s.max_concurrent();
  // As `gdrbench sweep` maps --fan-in (controller/cli/sweep_command.cc); the
  // bounds (1 <= K < nodes) are the schedule's, checked by Check's plan.
  if (c.schedule.mode == controller::schedule::Mode::kIncast) {
    if (!s.has_fan_in()) {
      return absl::InvalidArgumentError("mode incast needs fan_in K (senders per target, 1 <= K < nodes)");
    }
    c.schedule.fan_in = s.fan_in();
  } else if (s.has_fan_in()) {
    return absl::InvalidArgumentError(absl::StrCat("fan_in is only for mode incast, not ", mode));
  }
  controller::cli::SweepFlags f;  // the defaults of `gdrbench sweep`
  f.sizes = s.sizes().empty() ? "64K,1M" : s.sizes();
  f.iterations = s.duration_s() > 0 ? 0 : (s.iterations() ? s.iterations() : 1000);
  if (!(s.duration_s() >= 0 && s.duration_s() <= 3600)) {
    return absl::InvalidArgumentError("duration_s must be 0 to 3600 seconds");
  }
  f.duration_s = s.duration_s();
  if (s.qps() > 64) return absl::InvalidArgumentError("qps must be at most 64");
  f.qps = s.qps() ? s.qps() : 1;
  f.bidirectional = s.bidirectional();
  f.verify = s.verify();
  if (!s.cm().empty()) f.cm = s.cm();  // else auto; ToSweepParams refuses other words
  ASSIGN_OR_RETURN(c.params, controller::cli::ToSweepParams(f));
  c.memory = s.memory();
  auto fraction = [](double v, const char* name) -> absl::Status {
    if (v >= 0 && v <= 1) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(name, " must be 0 to 1"));
  };
  if (s.has_min_link_fraction()) {
    RETURN_IF_ERROR(fraction(s.min_link_fraction(), "min_link_fraction"));
    c.policy.set_min_fraction_of_link(s.min_link_fraction());
  }
  if (s.has_fleet_min_drop()) {
    RETURN_IF_ERROR(fraction(s.fleet_min_drop(), "fleet_min_drop"));
    c.policy.set_fleet_min_drop(s.fleet_min_drop());
  }
  if (s.has_mad_k()) {
    if (!(s.mad_k() >= 0 && s.mad_k() <= 100)) return absl::InvalidArgumentError("mad_k must be 0 to 100");
    c.policy.set_mad_k(s.mad_k());
  }
  if (s.has_retest_low()) {
    if (s.retest_low() > 10) return absl::InvalidArgumentError("retest_low must be at most 10");
    c.retest_low = s.retest_low();
  }
  if (s.has_parallel()) {
    if (s.parallel() < 1 || s.parallel() > 4096) return absl::InvalidArgumentError("parallel must be 1 to 4096");
    c.parallel = s.parallel();
  }
  c.preflight = !s.no_preflight();
  c.force = s.force();
  return c;
}

absl::Status LibraryExecutor::Check(const std::string& cluster, const v1::SweepSpec& spec) const {
  ASSIGN_OR_RETURN(sweep::SweepConfig c, ToConfig(cluster, spec));
  return sweep::PlanWithoutAgents(c).status();
}

absl::StatusOr<v1::Run> LibraryExecutor::Run(const std::string& cluster, const v1::SweepSpec& spec,
                                             const ProgressFn& progress, const std::atomic<bool>& cancelled) {
  ASSIGN_OR_RETURN(sweep::SweepConfig c, ToConfig(cluster, spec));
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
