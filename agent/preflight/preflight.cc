#include "agent/preflight/preflight.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"

#include "agent/preflight/context.h"
#include "agent/preflight/live_hardware.h"
#include "agent/preflight/runner.h"

namespace gdrbench::agent::preflight {

namespace {

// Restricts an RdmaQuery to the devices an agent owns.
class OwnedRdma : public RdmaQuery {
 public:
  OwnedRdma(RdmaQuery& inner, const std::vector<std::string>& owned) : inner_(inner), owned_(owned) {}
  std::string source() const override { return inner_.source(); }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> ListDevices(std::string* absent_reason) override {
    ASSIGN_OR_RETURN(std::vector<verbs::DeviceInfo> all, inner_.ListDevices(absent_reason));
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

}  // namespace

absl::StatusOr<Report> RunPreflightOn(const FsRoot& fs, const std::vector<std::string>& only,
                                      const Expectations& expect,
                                      const std::vector<std::string>& devices) {
  Hardware hw = MakeHardware(fs);
  OwnedRdma owned(*hw.rdma, devices);
  RdmaQuery& rdma = devices.empty() ? *hw.rdma : static_cast<RdmaQuery&>(owned);
  Context ctx(fs, rdma, *hw.cuda, *hw.probe, expect, devices);
  return RunPreflight(ctx, only);
}

}  // namespace gdrbench::agent::preflight
