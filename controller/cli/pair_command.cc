#include "controller/cli/pair_command.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/cli/cli_util.h"
#include "controller/client/agent_client.h"
#include "controller/run/pair_tester.h"

namespace gdrbench::controller::cli {
namespace {

using std::chrono::milliseconds;

// The device to use on an agent: the one given, else its only owned device,
// else its first NIC with an active port.
absl::StatusOr<std::string> PickDevice(AgentClient& agent, const std::string& given,
                                       const char* flag) {
  if (!given.empty()) return given;
  auto info = agent.GetNodeInfo();
  if (!info.ok()) return info.status();
  if (info->devices_owned_size() == 1) return info->devices_owned(0);
  for (const auto& nic : info->nics()) {
    for (const auto& port : nic.ports()) {
      if (port.state() == "PORT_ACTIVE") return nic.device();
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "agent ", agent.address(), " has no RDMA device with an active port (give ", flag, ")"));
}

std::string Gbps(double v) { return absl::StrFormat("%.6f", v); }

std::string Header(bool bidirectional, bool verify) {
  std::string h = absl::StrFormat(" %-10s %-12s %-16s %-19s %-14s", "#bytes", "#iterations",
                                  "BW peak[Gb/s]", "BW average[Gb/s]", "MsgRate[Mpps]");
  if (bidirectional) absl::StrAppend(&h, absl::StrFormat(" %-16s %-16s", "BW rev[Gb/s]", "BW sum[Gb/s]"));
  if (verify) absl::StrAppend(&h, " verified");
  return h;
}

std::string Banner(const v1::PairResult& r) {
  const v1::SweepSummary& s = r.summary();
  if (s.registration().empty()) {  // the test never got as far as a connection
    return absl::StrCat(" RDMA WRITE ", r.src().nic_device(), " (", r.src().agent_address(),
                        ") -> ", r.dst().nic_device(), " (", r.dst().agent_address(), ")");
  }
  return absl::StrCat(
      " RDMA WRITE ", r.src().nic_device(), " (", r.src().agent_address(), ") -> ",
      r.dst().nic_device(), " (", r.dst().agent_address(), "), RC over rdma_cm\n",
      " memory: ", s.memory_kind().empty() ? r.src().memory() : s.memory_kind(), " (",
      s.registration(), ") -> ", r.dst().memory(), "; QPs: ", s.qps(), "; GID index ",
      s.gid_index(), " (", s.gid_type(), "); path MTU ", s.path_mtu_bytes(), "\n ",
      s.local_address(), " -> ", s.remote_address());
}

const v1::SizeResult* ReverseFor(const v1::PairResult& r, uint64_t size) {
  for (const auto& x : r.reverse_sizes()) {
    if (x.size_bytes() == size) return &x;
  }
  return nullptr;
}

void Finish(v1::PairResult& r) {
  if (r.status() != v1::RESULT_STATUS_UNSPECIFIED) return;
  std::vector<std::string> bad;
  for (const auto& s : r.sizes()) {
    if (s.status() != v1::RESULT_STATUS_OK) {
      bad.push_back(absl::StrCat(s.size_bytes(), " B: ", s.error()));
    }
  }
  for (const auto& s : r.reverse_sizes()) {
    if (s.status() != v1::RESULT_STATUS_OK) {
      bad.push_back(absl::StrCat(s.size_bytes(), " B (reverse): ", s.error()));
    }
  }
  if (r.summary().status() != v1::RESULT_STATUS_OK) {
    r.set_status(r.summary().status() == v1::RESULT_STATUS_UNSPECIFIED ? v1::RESULT_STATUS_ERROR
                                                                        : r.summary().status());
    r.set_reason(r.summary().error().empty() ? "the sweep ended without a summary"
                                             : r.summary().error());
  } else if (!bad.empty()) {
    r.set_status(v1::RESULT_STATUS_FAILED);
    r.set_reason(absl::StrJoin(bad, "; "));
  } else {
    r.set_status(v1::RESULT_STATUS_OK);
  }
}

}  // namespace

std::string FormatPairTable(const v1::PairResult& r, bool bidirectional) {
  std::string out = absl::StrCat(Banner(r), "\n");
  bool verify = false;
  for (const auto& s : r.sizes()) verify = verify || s.verified() || s.verify_first_bad_offset();
  absl::StrAppend(&out, Header(bidirectional, verify), "\n");
  for (const auto& s : r.sizes()) {
    std::string line = absl::StrFormat(" %-10d %-12d %-16s %-19s %-14s", s.size_bytes(),
                                       s.iterations(), Gbps(s.bw_peak_gbps()),
                                       Gbps(s.bw_avg_gbps()),
                                       absl::StrFormat("%.6f", s.msg_rate_mpps()));
    if (bidirectional) {
      const v1::SizeResult* rev = ReverseFor(r, s.size_bytes());
      double rb = rev ? rev->bw_avg_gbps() : 0;
      absl::StrAppend(&line, absl::StrFormat(" %-16s %-16s", Gbps(rb), Gbps(s.bw_avg_gbps() + rb)));
    }
    if (verify) {
      const v1::SizeResult* rev = bidirectional ? ReverseFor(r, s.size_bytes()) : nullptr;
      bool rev_bad = rev != nullptr && !rev->verified() && rev->status() == v1::RESULT_STATUS_FAILED;
      const char* v = !s.verified() ? "NO" : rev_bad ? "NO (reverse)" : "yes";
      absl::StrAppend(&line, " ", v);
    }
    absl::StrAppend(&out, line, "\n");
  }
  if (!r.summary().perftest_command().empty()) {
    absl::StrAppend(&out, " perftest equivalent: ", r.summary().perftest_command(), "\n");
  }
  absl::StrAppend(&out, " result: ", v1::ResultStatus_Name(r.status()),
                  r.reason().empty() ? "" : absl::StrCat(": ", r.reason()), "\n");
  return out;
}

int PairCommand(const PairOptions& o) {
  auto params = ToSweepParams(o.sweep);
  if (!params.ok()) return PrintError(params.status());
  if (o.server.empty() || o.client.empty()) {
    return PrintError(absl::InvalidArgumentError("give both --server and --client"));
  }
  if (!(o.sweep_timeout_s > 0) || !(o.lease_s >= 0)) {
    return PrintError(absl::InvalidArgumentError("--sweep-timeout must be > 0 and --lease >= 0"));
  }
  auto server = ConnectAgent(o.server, o.common);
  if (!server.ok()) return PrintError(server.status());
  auto client = ConnectAgent(o.client, o.common);
  if (!client.ok()) return PrintError(client.status());
  auto sdev = PickDevice(**server, o.server_device, "--server-device");
  if (!sdev.ok()) return PrintError(sdev.status());
  auto cdev = PickDevice(**client, o.client_device, "--client-device");
  if (!cdev.ok()) return PrintError(cdev.status());

  v1::PairResult result;
  result.mutable_src()->set_agent_address(o.client);
  result.mutable_src()->set_nic_device(*cdev);
  result.mutable_src()->set_memory(params->memory());
  result.mutable_dst()->set_agent_address(o.server);
  result.mutable_dst()->set_nic_device(*sdev);
  result.mutable_dst()->set_memory(params->memory());
  const bool json = o.common.json;
  const bool bidi = params->bidirectional();
  auto t0 = std::chrono::steady_clock::now();

  v1::OpenTargetRequest open;
  open.set_device(*sdev);
  open.set_bind_address(o.server_bind);
  open.set_memory(params->memory());
  open.set_qps(params->qps());
  open.set_bidirectional(bidi);
  open.set_verify(params->verify());
  *open.mutable_sizes_bytes() = params->sizes_bytes();
  *open.mutable_params() = *params;
  double lease = o.lease_s > 0 ? o.lease_s : o.sweep_timeout_s + 60;
  open.set_lease_ns(static_cast<int64_t>(lease * 1e9));
  auto target = (*server)->OpenTarget(open);
  if (!target.ok()) return PrintError(target.status());
  result.mutable_dst()->set_memory(
      absl::StrCat(target->memory_kind(), " (", target->registration(), ")"));

  v1::RunWriteSweepRequest sweep;
  sweep.set_device(*cdev);
  sweep.set_bind_address(o.client_bind);
  sweep.set_target_address(target->address());
  sweep.set_target_cm_port(target->cm_port());
  sweep.set_target_id(target->target_id());
  *sweep.mutable_remote_buffers() = target->buffers();
  *sweep.mutable_params() = *params;
  absl::Status st = (*client)->RunWriteSweep(
      sweep, milliseconds(static_cast<int64_t>(o.sweep_timeout_s * 1000)),
      [&](const v1::RunWriteSweepResponse& m) {
        if (m.has_size()) *result.add_sizes() = m.size();
        if (m.has_summary()) *result.mutable_summary() = m.summary();
      });
  if (!st.ok()) {
    result.set_status(v1::RESULT_STATUS_ERROR);
    result.set_reason(std::string(st.message()));
  }

  bool sweep_ok = st.ok() && result.summary().status() == v1::RESULT_STATUS_OK;
  if (sweep_ok && (params->verify() || bidi)) {
    v1::VerifyTargetRequest vr;
    vr.set_target_id(target->target_id());
    vr.set_seed(params->seed());
    auto verified = (*server)->VerifyTarget(vr);
    if (!verified.ok()) {
      result.set_status(v1::RESULT_STATUS_ERROR);
      result.set_reason(absl::StrCat("VerifyTarget: ", verified.status().message()));
    } else {
      for (const auto& v : verified->sizes()) {
        for (auto& s : *result.mutable_sizes()) {
          if (s.size_bytes() != v.size_bytes()) continue;
          s.set_verified(v.verified());
          s.set_verify_first_bad_offset(v.verify_first_bad_offset());
          if (!v.verified()) {
            s.set_status(v1::RESULT_STATUS_FAILED);
            s.set_error(v.error());
          }
        }
      }
      *result.mutable_reverse_sizes() = verified->reverse_sizes();
      run::ApplyReverseChecks(&result);
    }
  }
  // Always release the target; a failed close is noted (the lease frees it).
  if (absl::Status c = (*server)->CloseTarget(target->target_id()); !c.ok()) {
    std::fprintf(stderr, "gdrbench: warning: CloseTarget %s: %s (its lease will free it)\n",
                 target->target_id().c_str(), std::string(c.message()).c_str());
  }
  Finish(result);
  result.set_duration_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count());

  if (json) {
    PrintJson(result);
  } else {
    std::fputs(FormatPairTable(result, bidi).c_str(), stdout);
  }
  if (result.status() != v1::RESULT_STATUS_OK) {
    std::fprintf(stderr, "gdrbench: pair %s -> %s: %s: %s\n", o.client.c_str(), o.server.c_str(),
                 v1::ResultStatus_Name(result.status()).c_str(), result.reason().c_str());
    return 1;
  }
  return 0;
}

}  // namespace gdrbench::controller::cli
