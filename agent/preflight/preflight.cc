#include "agent/preflight/preflight.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "agent/preflight/capture.h"
#include "agent/preflight/context.h"
#include "agent/preflight/live_hardware.h"
#include "agent/preflight/runner.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {

namespace {

// Restricts an RdmaQuery to the devices an agent owns.
class OwnedRdma : public RdmaQuery {
 public:
  OwnedRdma(RdmaQuery& inner, const std::vector<std::string>& owned) : inner_(inner), owned_(owned) {}
  std::string source() const override { return inner_.source(); }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* absent_reason) override {
    GDR_ASSIGN_OR_RETURN(std::vector<verbs::DeviceInfo> all, inner_.ListDevices(absent_reason));
    std::vector<verbs::DeviceInfo> out;
    std::vector<std::string> present;
    for (auto& d : all) {
      present.push_back(d.name);
      if (std::find(owned_.begin(), owned_.end(), d.name) != owned_.end()) out.push_back(std::move(d));
    }
    for (const auto& want : owned_) {
      if (std::find(present.begin(), present.end(), want) == present.end()) {
        return absl::NotFoundError(absl::StrCat("RDMA device '", want, "' owned by this agent (--devices) is absent (present: ",
                                                present.empty() ? "none" : absl::StrJoin(present, ", "), ")"));
      }
    }
    return out;
  }
  absl::StatusOr<bool> DmabufRegistrationSupported(const std::string& device) override {
    return inner_.DmabufRegistrationSupported(device);
  }

 private:
  RdmaQuery& inner_;
  const std::vector<std::string>& owned_;
};

// Removes a temporary tree when the run is over.
struct TreeCleanup {
  std::string dir;
  ~TreeCleanup() {
    if (!dir.empty()) RemoveTree(dir);
  }
};

// Every mention of `dir` (with its trailing path) in `report` as the path on
// the captured node: "<dir>/sys/x" -> "/sys/x".
void NameAsOnTheNode(const std::string& dir, Report* report) {
  auto strip = [&](std::string* s) { absl::StrReplaceAll({{dir, ""}}, s); };
  for (CheckResult& c : report->checks) {
    strip(&c.summary);
    strip(&c.remediation);
    for (Evidence& e : c.evidence) {
      strip(&e.source);
      strip(&e.observed);
    }
  }
}

}  // namespace

// What one attempt's Context reads through; kept alive by the Context's
// shared_ptr while a hung check's thread still uses it.
struct Session {
  Session(const FsRoot& root, const RunOptions& run)
      : fs(root), options(run), hw(MakeHardware(fs)), owned(*hw.rdma, options.devices),
        ctx(fs, options.devices.empty() ? *hw.rdma : static_cast<RdmaQuery&>(owned), *hw.cuda,
            *hw.probe, options.expect, options.devices) {}
  FsRoot fs;
  RunOptions options;
  Hardware hw;
  OwnedRdma owned;
  Context ctx;
};

absl::StatusOr<Report> RunPreflightOn(const FsRoot& fs, const RunOptions& options) {
  auto make = [&fs, options]() -> std::shared_ptr<Context> {
    auto s = std::make_shared<Session>(fs, options);
    Context& ctx = s->ctx;
    ctx.set_gpu_load(s->hw.load.get());
    ctx.set_kernel_log(s->hw.kernel_log.get());
    ctx.set_load_all_gpu_links(options.load_all_gpu_links);
    if (fs.is_live()) {
      absl::Duration interval = options.counter_interval;
      ctx.set_counter_wait([interval] { std::this_thread::sleep_for(absl::ToChronoNanoseconds(interval)); },
                           interval);
      ctx.set_counter_history(options.counter_history);
    }
    return std::shared_ptr<Context>(s, &s->ctx);  // owns the whole session
  };
  GDR_ASSIGN_OR_RETURN(Report report, RunPreflightBounded(make, options.checks, options.deadlines));
  if (!fs.is_live()) {
    // Offline the node is the one captured, not this one.
    if (auto host = fs.ReadLine("/etc/hostname"); host.ok() && !host->empty()) report.hostname = *host;
    if (auto info = CaptureInfo(fs); info.ok()) {
      report.captured = *info;
    } else {
      report.captured = absl::StrCat("capture information unreadable: ", info.status().message());
    }
  }
  return report;
}

absl::StatusOr<Report> RunPreflightAt(const std::string& root, const RunOptions& options) {
  struct stat st;
  if (stat(root.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--fs-root ", root, " does not exist"));
  }
  if (S_ISDIR(st.st_mode)) return RunPreflightOn(FsRoot(root), options);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fs-root ", root, " is neither a directory nor a capture .tar.gz"));
  }
  if (!absl::EndsWith(root, ".tar.gz") && !absl::EndsWith(root, ".tgz")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fs-root ", root, " is a file but not a capture (.tar.gz from gdrbench-agent capture)"));
  }
  TreeCleanup tree;
  GDR_ASSIGN_OR_RETURN(tree.dir, ExtractTree(root));
  GDR_ASSIGN_OR_RETURN(Report report, RunPreflightOn(FsRoot(tree.dir), options));
  report.fs_root = root;  // name the tarball, not the temporary directory
  // Evidence names paths as on the captured node: "/sys/class/infiniband",
  // not the temporary directory it was unpacked into (gone once we return).
  NameAsOnTheNode(tree.dir, &report);
  return report;
}

}  // namespace gdrbench::agent::preflight
