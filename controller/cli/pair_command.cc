#include "controller/cli/pair_command.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/analysis/gdr.h"
#include "controller/analysis/link_flags.h"
#include "controller/analysis/verdicts.h"
#include "controller/cli/cli_util.h"
#include "controller/cli/exit_codes.h"
#include "controller/report/report.h"
#include "controller/run/agent_api.h"
#include "controller/run/grpc_agent_api.h"
#include "controller/run/memory_kinds.h"
#include "controller/run/pair_tester.h"
#include "controller/run/port_state.h"

namespace gdrbench::controller::cli {
namespace {

using std::chrono::milliseconds;

// The device to use on an agent: the one given, else its only owned device,
// else its first NIC with an active port.
absl::StatusOr<std::string> PickDevice(run::AgentApi& agent, const std::string& address,
                                       const std::string& given, const char* flag) {
  if (!given.empty()) return given;
  auto info = agent.GetNodeInfo();
  if (!info.ok()) return info.status();
  if (info->devices_owned_size() == 1) return info->devices_owned(0);
  for (const auto& nic : info->nics()) {
    for (const auto& port : nic.ports()) {
      if (run::PortStateOf(port) == v1::PORT_STATE_ACTIVE) return nic.device();
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "agent ", address, " has no RDMA device with an active port (give ", flag, ")"));
}

std::string Gbps(double v) { return absl::StrFormat("%.6f", v); }

std::string Header(bool bidirectional, bool verify, bool staged) {
  std::string h = absl::StrFormat(" %-10s %-12s %-16s %-19s %-14s", "#bytes", "#iterations",
                                  "BW peak[Gb/s]", "BW average[Gb/s]", "MsgRate[Mpps]");
  if (bidirectional) absl::StrAppend(&h, absl::StrFormat(" %-16s %-16s", "BW rev[Gb/s]", "BW sum[Gb/s]"));
  // gpu-staged: the GPU -> pinned host copy and copy + wire (agent/bench/staging.h).
  if (staged) absl::StrAppend(&h, absl::StrFormat(" %-18s %-20s", "staging copy[GB/s]", "copy+wire[Gb/s]"));
  if (verify) absl::StrAppend(&h, " verified");
  return h;
}

// What an endpoint really used ("gpu (ibv_reg_dmabuf_mr)"), else what it asked for.
std::string Memory(const v1::Endpoint& e) {
  if (e.memory_kind().empty()) return e.memory();
  return absl::StrCat(e.memory_kind(), " (", e.registration(), ")");
}

std::string Banner(const v1::PairResult& r) {
  const v1::SweepSummary& s = r.summary();
  if (s.registration().empty()) {  // the test never got as far as a connection
    return absl::StrCat(" RDMA WRITE ", r.src().nic_device(), " (", r.src().agent_address(),
                        ") -> ", r.dst().nic_device(), " (", r.dst().agent_address(), ")");
  }
  return absl::StrCat(
      " RDMA WRITE ", r.src().nic_device(), " (", r.src().agent_address(), ") -> ",
      r.dst().nic_device(), " (", r.dst().agent_address(), "), RC ",
      s.cm() == v1::CONNECTION_MODE_OOB ? absl::StrCat("out of band (", s.gid_choice(), ")")
                                        : std::string("over rdma_cm"),
      "\n",
      " memory: ", Memory(r.src()), " -> ", Memory(r.dst()), "; QPs: ", s.qps(), "; GID index ",
      s.gid_index(), " (", s.gid_type(), "); path MTU ", s.path_mtu_bytes(), "\n ",
      s.local_address(), " -> ", s.remote_address());
}

const v1::SizeResult* ReverseFor(const v1::PairResult& r, uint64_t size) {
  for (const auto& x : r.reverse_sizes()) {
    if (x.size_bytes() == size) return &x;
  }
  return nullptr;
}

// The perftest line and the verdict.
std::string Footer(const v1::PairResult& r, bool bidirectional) {
  std::string out;
  if (bidirectional && r.has_summary() && !r.sizes().empty()) {
    absl::StrAppend(&out, r.summary().sizes_in_lockstep()
                              ? " both directions in lock-step: each size started and ended together (a barrier "
                                "before and after it, as perftest's duplex mode)\n"
                              : " NOT in lock-step: the directions' sizes overlapped freely, so a direction that "
                                "finished first left the other unloaded (its figures and the sum may be "
                                "inflated)\n");
  }
  if (r.verify_seed() != 0) absl::StrAppend(&out, " verify seed: ", r.verify_seed(), " (--seed runs it again)\n");
  if (!r.summary().perftest_command().empty()) {
    absl::StrAppend(&out, " perftest equivalent: ", r.summary().perftest_command(), "\n");
  }
  bool counters = false;
  for (const auto* pc : {&r.src_counters(), &r.dst_counters()}) {
    if (pc->device().empty() && pc->absent().empty()) continue;  // not sampled
    absl::StrAppend(&out, " counters ", pc == &r.src_counters() ? "client " : "server ",
                    report::DescribePortCounters(*pc), "\n");
    counters = true;
  }
  if (counters) absl::StrAppend(&out, " (", report::kPortCountersCaveat, ")\n");
  absl::StrAppend(&out, " result: ", v1::ResultStatus_Name(r.status()),
                  r.reason().empty() ? "" : absl::StrCat(": ", r.reason()),
                  r.link_flag().empty() ? "" : absl::StrCat(", but ", r.link_flag()), "\n");
  return out;
}

// ib_write_lat's table (perftest's print_report_lat), in us.
std::string LatencyTable(const v1::PairResult& r) {
  std::string out = absl::StrFormat(" %-7s %-11s %-11s %-11s %-15s %-11s %-13s %-23s %-23s\n",
                                    "#bytes", "#iterations", "t_min[usec]", "t_max[usec]",
                                    "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
                                    "99% percentile[usec]", "99.9% percentile[usec]");
  for (const auto& s : r.sizes()) {
    const v1::LatencyResult& l = s.latency();
    absl::StrAppend(&out, absl::StrFormat(" %-7d %-11d %-11.2f %-11.2f %-15.2f %-11.2f %-13.2f "
                                          "%-23.2f %-23.2f\n",
                                          s.size_bytes(), s.iterations(), l.t_min_us(),
                                          l.t_max_us(), l.t_typical_us(), l.t_avg_us(),
                                          l.t_stdev_us(), l.p99_us(), l.p999_us()));
  }
  return out;
}

// One kind on the pair: "host 11.2 Gb/s at 1 MiB", "gpu ERROR (reason)",
// "gpu-staged 11.0 Gb/s wire, 8.3 Gb/s copy + wire".
std::string KindLine(const v1::PairResult& h) {
  std::string kind = analysis::MemoryKindOf(h.src().memory());
  if (h.status() != v1::RESULT_STATUS_OK) {
    return absl::StrCat(kind, ": ", v1::ResultStatus_Name(h.status()).substr(14), " (", h.reason(), ")");
  }
  const v1::SizeResult* last = nullptr;  // the largest OK size
  for (const auto& s : h.sizes()) {
    if (s.status() == v1::RESULT_STATUS_OK && (last == nullptr || s.size_bytes() > last->size_bytes())) last = &s;
  }
  if (last == nullptr) return absl::StrCat(kind, ": no size measured");
  std::string out = absl::StrFormat("%s: %.2f Gb/s at %d B", kind, last->bw_avg_gbps(), last->size_bytes());
  if (last->staged_bw_avg_gbps() > 0) {
    absl::StrAppend(&out, absl::StrFormat(" on the wire, %.2f Gb/s copy + wire (staging copy %.2f GB/s)",
                                          last->staged_bw_avg_gbps(), last->staged_copy_gbytes_per_s()));
  }
  return out;
}

// The memory spec `kind` means on one side: as given, except a bare "gpu" /
// "gpu-staged": the GPU of the NIC's rail in the agent's rail map.
absl::StatusOr<std::string> SideMemory(run::AgentApi& agent, const std::string& address,
                                       const std::string& device, const std::string& kind) {
  if (kind != "gpu" && kind != "gpu-staged") return kind;
  auto info = agent.GetNodeInfo();
  if (!info.ok()) {
    return absl::Status(info.status().code(),
                        absl::StrCat("GetNodeInfo on ", address, ": ", info.status().message()));
  }
  for (const auto& rail : info->rails()) {
    if (rail.nic_device() == device) return absl::StrCat(kind, ":", rail.gpu_index());
  }
  std::string why = info->gpus().empty()
                        ? (info->gpus_absent_reason().empty() ? std::string("the agent lists no GPU")
                                                              : info->gpus_absent_reason())
                        : absl::StrCat("none of its ", info->gpus_size(), " GPU(s) has ", device,
                                       " as its rail NIC");
  return absl::FailedPreconditionError(absl::StrCat(kind, " memory on ", address, ": no GPU for ",
                                                    device, " (", why, "); give --memory ", kind,
                                                    ":<index|BDF>"));
}

}  // namespace

std::string FormatMemoryKinds(const v1::PairResult& r) {
  if (r.memory_halves().empty()) return "";
  std::string out = " memory kinds on this pair, back to back (largest OK size):\n";
  absl::StrAppend(&out, "   ", KindLine(r), "\n");
  for (const auto& h : r.memory_halves()) absl::StrAppend(&out, "   ", KindLine(h), "\n");
  if (r.gpu_host_ratio() > 0) absl::StrAppend(&out, absl::StrFormat("   gpu/host %.3f", r.gpu_host_ratio()));
  if (r.staged_host_ratio() > 0) {
    absl::StrAppend(&out, absl::StrFormat("%s gpu-staged (copy + wire)/host %.3f",
                                          r.gpu_host_ratio() > 0 ? ";" : "  ", r.staged_host_ratio()));
  }
  if (r.gpu_host_ratio() > 0 || r.staged_host_ratio() > 0) out += "\n";
  for (const auto& b : analysis::GdrBlames({r}, analysis::DefaultPolicy())) {
    absl::StrAppend(&out, "   blame gdr: ", b.reason(), "\n");
  }
  return out;
}

std::string FormatPairReport(const v1::PairResult& r, bool bidirectional) {
  std::string out = FormatPairTable(r, bidirectional);
  for (const auto& h : r.memory_halves()) {
    absl::StrAppend(&out, "\n memory ", h.src().memory(), " -> ", h.dst().memory(), " (next kind, same pair)\n",
                    FormatPairTable(h, bidirectional));
  }
  if (!r.memory_halves().empty()) absl::StrAppend(&out, "\n", FormatMemoryKinds(r));
  return out;
}

std::string FormatPairTable(const v1::PairResult& r, bool bidirectional) {
  std::string out = absl::StrCat(Banner(r), "\n");
  bool latency = false;
  for (const auto& s : r.sizes()) latency = latency || s.has_latency();
  if (latency) return absl::StrCat(out, LatencyTable(r), Footer(r, false));
  bool verify = false;
  for (const auto& s : r.sizes()) verify = verify || s.verified() || s.verify_first_bad_offset();
  bool staged = false;
  for (const auto& s : r.sizes()) staged = staged || s.staged_bw_avg_gbps() > 0;
  absl::StrAppend(&out, Header(bidirectional, verify, staged), "\n");
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
    if (staged) {
      absl::StrAppend(&line, absl::StrFormat(" %-18s %-20s", absl::StrFormat("%.3f", s.staged_copy_gbytes_per_s()),
                                             Gbps(s.staged_bw_avg_gbps())));
    }
    if (verify) {
      const v1::SizeResult* rev = bidirectional ? ReverseFor(r, s.size_bytes()) : nullptr;
      bool rev_bad = rev != nullptr && !rev->verified() && rev->status() == v1::RESULT_STATUS_FAILED;
      const char* v = !s.verified() ? "NO" : rev_bad ? "NO (reverse)" : "yes";
      absl::StrAppend(&line, " ", v);
    }
    absl::StrAppend(&out, line, "\n");
  }
  return absl::StrCat(out, Footer(r, bidirectional));
}

int PairCommand(const PairOptions& o) {
  auto params = ToSweepParams(o.sweep);
  if (!params.ok()) return PrintError(params.status());
  if (o.server.empty() || o.client.empty()) {
    return PrintError(absl::InvalidArgumentError(
        absl::StrCat("give both --target and --initiator (each an agent's HOST:PORT); missing: ",
                     o.server.empty() ? "--target" : "", o.server.empty() && o.client.empty() ? " and " : "",
                     o.client.empty() ? "--initiator" : "")));
  }
  if (!(o.sweep_timeout_s > 0) || !(o.lease_s >= 0)) {
    return PrintError(absl::InvalidArgumentError("--sweep-timeout must be > 0 and --lease >= 0"));
  }
  auto server = run::GrpcAgentApi::Create(ClientConfig(o.server, o.common));
  if (!server.ok()) return PrintError(server.status());
  auto client = run::GrpcAgentApi::Create(ClientConfig(o.client, o.common));
  if (!client.ok()) return PrintError(client.status());
  auto sdev = PickDevice(**server, o.server, o.server_device, "--target-device");
  if (!sdev.ok()) return PrintError(sdev.status());
  auto cdev = PickDevice(**client, o.client, o.client_device, "--initiator-device");
  if (!cdev.ok()) return PrintError(cdev.status());

  // --memory host,gpu: one test per kind, back to back (run/memory_kinds.h);
  // a kind a side cannot have fails only its half.
  auto listed = run::SplitMemoryKinds(params->memory());
  if (!listed.ok()) return PrintError(listed.status());
  std::vector<run::KindSides> kinds;
  for (const std::string& kind : *listed) {
    run::KindSides k;
    auto cm = SideMemory(**client, o.client, *cdev, kind);
    auto sm = SideMemory(**server, o.server, *sdev, kind);
    k.initiator_memory = cm.ok() ? *cm : kind;
    k.target_memory = sm.ok() ? *sm : kind;
    if (!cm.ok() || !sm.ok()) k.unavailable = std::string((cm.ok() ? sm : cm).status().message());
    kinds.push_back(std::move(k));
  }

  v1::PairResult result;
  result.mutable_src()->set_agent_address(o.client);
  result.mutable_src()->set_nic_device(*cdev);
  result.mutable_src()->set_memory(params->memory());
  result.mutable_dst()->set_agent_address(o.server);
  result.mutable_dst()->set_nic_device(*sdev);
  result.mutable_dst()->set_memory(params->memory());
  run::PairTestOptions to;
  to.sweep_timeout = milliseconds(static_cast<int64_t>(o.sweep_timeout_s * 1000));
  to.lease = milliseconds(static_cast<int64_t>(o.lease_s * 1000));
  // The same tester as every test of a sweep (controller/run/pair_tester.h).
  absl::Status rpc = run::RunPairTestPerKind(
      run::PairSide{client->get(), o.client, *cdev, o.client_bind, kinds.front().initiator_memory},
      run::PairSide{server->get(), o.server, *sdev, o.server_bind, kinds.front().target_memory},
      kinds, *params, params->bidirectional(), to, &result, [](bool, const absl::Status&) {});
  result.set_link_flag(analysis::LinkFlag(result, analysis::DefaultPolicy()));
  for (v1::PairResult& half : *result.mutable_memory_halves()) {
    half.set_link_flag(analysis::LinkFlag(half, analysis::DefaultPolicy()));
  }

  if (o.common.json) {
    PrintJson(result);
  } else {
    std::fputs(FormatPairReport(result, params->bidirectional()).c_str(), stdout);
  }
  bool failed = false;
  auto report = [&](const v1::PairResult& r) {
    if (r.status() == v1::RESULT_STATUS_OK) return;
    failed = true;
    std::fprintf(stderr, "gdrbench: pair %s -> %s%s: %s: %s\n", o.client.c_str(), o.server.c_str(),
                 kinds.size() > 1 ? absl::StrCat(", memory ", r.src().memory()).c_str() : "",
                 v1::ResultStatus_Name(r.status()).c_str(), r.reason().c_str());
  };
  report(result);
  for (const auto& h : result.memory_halves()) report(h);
  // An agent that refused the parameters is bad usage, as a bad flag is.
  if (failed) return rpc.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailed;
  return 0;
}

}  // namespace gdrbench::controller::cli
