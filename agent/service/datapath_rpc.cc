// OpenTarget, ConnectTarget, RunWriteSweep, VerifyTarget, CloseTarget: the
// data path RPCs. Validation and conversion here; the initiator's test
// sequence in bench::DriveInitiatorSweep (agent/bench/sweep_driver.h), over
// bench::InitiatorSession / TargetSession (agent/bench/session.h); targets
// and their leases in target_registry.cc.
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/bench/session.h"
#include "agent/bench/sweep_driver.h"
#include "agent/bench/write_sweep.h"
#include "agent/service/agent_handler.h"
#include "agent/service/sweep_convert.h"
#include "agent/service/target_registry.h"
#include "agent/verbs/cm.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {
namespace {

// The perftest line for the whole sweep: "-a" when the sizes are perftest's.
std::string SweepPerftestCommand(const bench::SweepOptions& o, const std::string& device,
                                 int gid_index, const std::string& server) {
  const bool lat = o.test == bench::TestKind::kWriteLat;
  std::string one = lat ? bench::PerftestLatCommand(o, o.sizes_bytes.front(), device, gid_index, server)
                        : bench::PerftestCommand(o, o.sizes_bytes.front(), device, gid_index, server);
  if (o.sizes_bytes == bench::AllSizes()) {
    std::string needle = absl::StrCat(" -s ", o.sizes_bytes.front());
    if (auto pos = one.find(needle); pos != std::string::npos) one.replace(pos, needle.size(), " -a");
  }
  return one;
}

// Everything a RunWriteSweep request must get right, before any hardware.
absl::StatusOr<bench::InitiatorSpec> ValidateSweep(const v1::RunWriteSweepRequest& r,
                                                   const bench::SweepOptions& options) {
  bench::InitiatorSpec spec;
  spec.options = options;
  GDR_ASSIGN_OR_RETURN(spec.memory,
                       memory::MemorySpec::Parse(r.params().memory().empty() ? "host" : r.params().memory()));
  GDR_RETURN_IF_ERROR(CheckMemoryForTest(spec.memory, options));
  spec.cm = FromProto(r.params().cm());
  if (spec.cm == bench::CmMode::kAuto) spec.cm = bench::CmMode::kRdmaCm;  // pre-oob controllers
  if (spec.cm == bench::CmMode::kOob) {
    GDR_ASSIGN_OR_RETURN(spec.target, FromProto(r.target_oob()));
  } else {
    if (r.target_address().empty()) {
      return absl::InvalidArgumentError("no target_address given (the target's rdma_cm address)");
    }
    GDR_RETURN_IF_ERROR(verbs::ParseSockAddr(r.target_address(), 0).status());
    if (r.target_cm_port() == 0 || r.target_cm_port() > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("target_cm_port ", r.target_cm_port(), " is not a port (1 .. 65535)"));
    }
    spec.target_address = r.target_address();
    spec.target_port = static_cast<uint16_t>(r.target_cm_port());
  }
  if (!r.bind_address().empty()) GDR_RETURN_IF_ERROR(verbs::ParseSockAddr(r.bind_address(), 0).status());
  spec.bind_address = r.bind_address();
  spec.wait_for_start = r.wait_for_start();
  if (static_cast<uint32_t>(r.remote_buffers_size()) != options.qps) {
    return absl::InvalidArgumentError(absl::StrCat(r.remote_buffers_size(),
                                                   " remote buffers for ", options.qps,
                                                   " QPs: give one per QP (from OpenTarget)"));
  }
  for (const v1::RemoteBuffer& b : r.remote_buffers()) {
    if (b.addr() == 0 || b.length_bytes() == 0) {
      return absl::InvalidArgumentError("a remote buffer has no address or length");
    }
    if (b.length_bytes() > bench::kMaxBufferBytes / options.qps) {
      return absl::InvalidArgumentError(absl::StrCat(
          "remote buffers of ", b.length_bytes(), " B x ", options.qps,
          " QPs exceed the limit of ", bench::kMaxBufferBytes, " B"));
    }
    spec.remote.push_back(bench::RemoteSlice{b.addr(), b.rkey(), b.length_bytes()});
  }
  return spec;
}

void FillPath(const bench::InitiatorSession& in, v1::SweepSummary& summary) {
  const verbs::PathInfo& path = in.path();
  summary.set_memory_kind(in.memory_kind());
  summary.set_registration(in.registration());
  summary.set_port(path.port);
  summary.set_gid_index(path.gid_index);
  summary.set_gid(path.gid);
  summary.set_gid_type(path.gid_type);
  summary.set_local_address(path.local_address);
  summary.set_remote_address(path.remote_address);
  summary.set_path_mtu_bytes(path.path_mtu_bytes);
}

// The summary's totals, reverse checks and status from the test's outcome.
void SetOutcome(const bench::SweepOutcome& o, v1::SweepSummary& summary) {
  summary.set_sizes_in_lockstep(o.sizes_in_lockstep);
  summary.set_total_bytes(o.total_bytes);
  summary.set_duration_ns(o.total_ns);
  summary.set_bw_avg_gbps_best(o.bw_avg_gbps_best);
  for (const bench::ReverseCheck& c : o.reverse_checks) {
    v1::SizeResult* rc = summary.add_reverse_checks();
    rc->set_size_bytes(c.size_bytes);
    rc->set_verified(c.verified);
    rc->set_verify_first_bad_offset(c.first_bad_offset);
    rc->set_status(c.verified ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
    rc->set_error(c.error);
  }
  switch (o.end) {
    case bench::SweepEnd::kOk: summary.set_status(v1::RESULT_STATUS_OK); break;
    case bench::SweepEnd::kFailed: summary.set_status(v1::RESULT_STATUS_FAILED); break;
    case bench::SweepEnd::kCancelled:
    case bench::SweepEnd::kNotRun: summary.set_status(v1::RESULT_STATUS_ERROR); break;
  }
  if (o.end != bench::SweepEnd::kOk) summary.set_error(o.error);
}

// The summary before the test: the request's side of it.
void StartSummary(const v1::RunWriteSweepRequest& r, const bench::SweepOptions& options,
                  const bench::InitiatorSpec& spec, v1::SweepSummary& summary) {
  summary.set_device(r.device());
  summary.set_qps(options.qps);
  summary.set_cm(ToProto(spec.cm));
  summary.set_remote_address(spec.cm == bench::CmMode::kOob
                                 ? std::string("out of band")
                                 : absl::StrCat(r.target_address(), ":", r.target_cm_port()));
}

// The handler's side of the test (bench::DriveInitiatorSweep): each step
// into the v1 messages, sent through `emit`; the port's counters around the
// measured part.
class SummarySink final : public bench::SweepSink {
 public:
  using Emit = std::function<bool(const v1::RunWriteSweepResponse&)>;
  using ReadCounters = std::function<counters::Sample(const std::string&, uint32_t)>;

  SummarySink(const v1::RunWriteSweepRequest& r, const bench::InitiatorSpec& spec, const Emit& emit,
              ReadCounters read_counters)
      : r_(r), spec_(spec), emit_(emit), read_counters_(std::move(read_counters)) {
    StartSummary(r, spec.options, spec, summary());
  }

  bool Connect(const bench::OobPeer& me, const std::string& gid_choice) override {
    v1::RunWriteSweepResponse msg;
    ToProto(me, gid_choice, msg.mutable_connect());
    summary().set_gid_choice(gid_choice);
    return emit_(msg);
  }

  // The port's counters are sampled once connected (the target's window,
  // OpenTarget to CloseTarget, holds the connection too).
  void Connected(const bench::InitiatorSession& in) override {
    FillPath(in, summary());
    const verbs::PathInfo& path = in.path();
    const std::string server = spec_.cm == bench::CmMode::kOob ? "" : r_.target_address();
    summary().set_perftest_command(SweepPerftestCommand(spec_.options, r_.device(), path.gid_index, server));
    path_remote_ = path.remote_address;
    counter_port_ = path.port != 0 ? path.port : 1;
    counters_before_ = read_counters_(r_.device(), counter_port_);
  }

  bool Size(const bench::SizeOutcome& o) override {
    v1::RunWriteSweepResponse msg;
    ToProto(o, msg.mutable_size());
    return emit_(msg);
  }

  void Measured() override {
    ToProto(counters::Diff(counters_before_, read_counters_(r_.device(), counter_port_)),
            summary().mutable_counters());
  }

  void Finished(const bench::SweepOutcome& o) override {
    if (o.end == bench::SweepEnd::kNotRun) {
      // A test that could not run is data, not a failed RPC.
      summary().set_status(v1::RESULT_STATUS_ERROR);
      summary().set_error(o.error);
      spdlog::warn("sweep {} -> {}: {}", r_.device(), summary().remote_address(), o.error);
      emit_(summary_msg_);
      return;
    }
    SetOutcome(o, summary());
    const std::string first_error = o.end == bench::SweepEnd::kFailed ? o.error : "";
    spdlog::info("sweep {} -> {} ({}): {} of {} sizes{}, best {:.3f} Gb/s, {}{}{}", r_.device(), path_remote_,
                 bench::CmModeName(spec_.cm), o.sizes_ran, spec_.options.sizes_bytes.size(),
                 o.sizes_in_lockstep ? " in lock-step with the reverse direction" : "", o.bw_avg_gbps_best,
                 v1::ResultStatus_Name(summary().status()), first_error.empty() ? "" : ": ", first_error);
    if (!o.caller_gone) emit_(summary_msg_);
  }

 private:
  v1::SweepSummary& summary() { return *summary_msg_.mutable_summary(); }

  const v1::RunWriteSweepRequest& r_;
  const bench::InitiatorSpec& spec_;
  const Emit& emit_;
  const ReadCounters read_counters_;
  v1::RunWriteSweepResponse summary_msg_;
  std::string path_remote_;
  uint32_t counter_port_ = 1;
  counters::Sample counters_before_;
};

}  // namespace

TargetRegistry& AgentHandler::targets() {
  std::call_once(targets_once_, [this] {
    targets_ = std::make_shared<TargetRegistry>(
        [this](const std::string& device) {
          return CheckDevice(*sessions_, config_.devices, device);
        },
        sessions_, TargetLimits{}, nullptr, true,
        [this](const std::string& device, uint32_t port) {
          return ReadTestCounters(device, port);
        });
  });
  return *targets_;
}

absl::StatusOr<v1::OpenTargetResponse> AgentHandler::OpenTarget(const v1::OpenTargetRequest& r) {
  return targets().Open(r);
}

absl::StatusOr<v1::ConnectTargetResponse> AgentHandler::ConnectTarget(
    const v1::ConnectTargetRequest& r) {
  GDR_RETURN_IF_ERROR(targets().Connect(r));
  return v1::ConnectTargetResponse{};
}

absl::StatusOr<v1::VerifyTargetResponse> AgentHandler::VerifyTarget(
    const v1::VerifyTargetRequest& r) {
  // The initiator returns only after the reverse sweep of a bidirectional
  // test ended, so this wait is short; it stays well inside an RPC deadline.
  return targets().Verify(r, std::chrono::seconds(5));
}

absl::StatusOr<v1::CloseTargetResponse> AgentHandler::CloseTarget(const v1::CloseTargetRequest& r) {
  return targets().Close(r.target_id());
}

absl::Status AgentHandler::RunWriteSweep(
    const v1::RunWriteSweepRequest& r,
    const std::function<bool(const v1::RunWriteSweepResponse&)>& emit,
    const std::atomic<bool>& cancelled) {
  // Validation: every field, before any hardware is touched.
  GDR_ASSIGN_OR_RETURN(bench::SweepOptions options, ToSweepOptions(r.params()));
  GDR_ASSIGN_OR_RETURN(bench::InitiatorSpec spec, ValidateSweep(r, options));
  GDR_ASSIGN_OR_RETURN(spec.device, CheckDevice(*sessions_, config_.devices, r.device()));
  SummarySink sink(r, spec, emit, [this](const std::string& device, uint32_t port) {
    return ReadTestCounters(device, port);
  });
  bench::DriveInitiatorSweep(*sessions_, spec, cancelled, sink, background_);
  return absl::OkStatus();
}

}  // namespace gdrbench::agent::service
