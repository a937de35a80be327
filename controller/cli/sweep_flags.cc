#include "controller/cli/sweep_flags.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace gdrbench::controller::cli {
namespace {

namespace limits = sweep_limits;

absl::Status Bad(auto... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); }

// The flags whose meaning differs between the commands.
void AddPairOnlyFlags(CLI::App* c, SweepFlags& f) {
  c->add_option("--cq-moderation", f.cq_moderation,
                absl::StrCat("signal every N WRITEs (default min(", limits::kDefaultCqModeration, ", tx depth))"));
  c->add_option("--memory", f.memory,
                "host, hugepage, gpu[:<i|BDF>], gpu-staged[:<i|BDF>] (gpu: the NIC's rail GPU), or a "
                "list (host,gpu): one test per kind, back to back")
      ->capture_default_str();
  c->add_option("--seed", f.seed,
                "verify pattern seed; 0: a random one per test (the result's verify_seed says which)")
      ->capture_default_str();
}

}  // namespace

void AddSweepFlags(CLI::App* c, SweepFlags& f, SweepFlagSet set) {
  const bool sweep = set == SweepFlagSet::kSweep;
  f = SweepFlags{};
  if (sweep) f.sizes = sweep::FormatSizes(limits::kDefaultSweepSizes);
  c->add_option("--sizes", f.sizes,
                absl::StrCat("message sizes: all (", limits::kAllSizesMin, " B .. ", limits::kAllSizesMax >> 20,
                             " MiB), 2,64K,1M or 2-8M"))
      ->capture_default_str();
  c->add_option("--iterations", f.iterations,
                sweep ? absl::StrCat("WRITEs per size and QP (default ", limits::kDefaultSweepIterations,
                                     "; none with --duration)")
                      : absl::StrCat("WRITEs per size and QP (default ", limits::kDefaultIterations, ")"))
      ->check(CLI::NonNegativeNumber);
  c->add_option("--duration", f.duration_s, "seconds per size instead of --iterations");
  c->add_option("--warmup", f.warmup, "unmeasured WRITEs per size and QP first")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c->add_option("--qps", f.qps, "QPs per test")->capture_default_str()->check(CLI::Range(1, static_cast<int>(limits::kMaxQps)));
  c->add_option("--tx-depth", f.tx_depth, "outstanding WRITEs per QP (send queue depth)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c->add_option("--post-list", f.post_list, "WRITEs per ibv_post_send")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  if (!sweep) AddPairOnlyFlags(c, f);
  c->add_flag("--bidirectional", f.bidirectional,
              sweep ? "bidirectional tests (half the rounds); default one direction per sub-round"
                    : "both directions at once");
  c->add_flag("--verify", f.verify, "check the data of each size's last pass on the target");
  c->add_option("--qp-timeout", f.qp_timeout, "QP local ACK timeout exponent, 4.096 us x 2^N (perftest -u)")
      ->capture_default_str();
  c->add_option("--cm", f.cm, "connection: auto (rdma_cm when the port has an IP), rdma_cm, oob (no IPoIB)")
      ->capture_default_str();
  c->add_option("--gid-index", f.gid_index, "GID index of both ends (perftest -x); default chosen");
  c->add_option("--sl", f.sl,
                absl::StrCat("service level 0 .. ", limits::kMaxServiceLevel,
                             " (perftest -S, NCCL_IB_SL): out of band only, rdma_cm refuses it; default 0",
                             sweep ? " or the inventory's qos.sl" : ""));
  c->add_option("--tclass", f.tclass,
                absl::StrCat("traffic class 0 .. ", limits::kMaxTrafficClass,
                             " (perftest --tclass, NCCL_IB_TC; DSCP << 2): the GRH out of band, the TOS with "
                             "rdma_cm; default 0 out of band, rdma_cm's default_roce_tos",
                             sweep ? ", or the inventory's qos.tclass" : ""));
  c->add_flag("--disable-pcie-relaxed", f.disable_pcie_relaxed,
              "register buffers without PCIe relaxed ordering (perftest --disable_pcie_relaxed; relaxed "
              "ordering is perftest's and NCCL's default)");
  if (!sweep) {
    c->add_option("--test", f.test, "write_bw, or write_lat (ib_write_lat's ping-pong, latency in us)")
        ->capture_default_str();
  }
}

absl::StatusOr<v1::SweepParams> ToSweepParams(const SweepFlags& f) {
  const sweep::FieldNames& names = sweep::kFlagNames;
  v1::SweepParams p;
  absl::StatusOr<std::vector<uint64_t>> sizes = sweep::ParseSizes(f.sizes);
  if (!sizes.ok()) return Bad(names.sizes, ": ", sizes.status().message());
  for (uint64_t s : *sizes) p.add_sizes_bytes(s);
  GDR_ASSIGN_OR_RETURN(int64_t duration_ns, sweep::DurationNs(f.duration_s, names.duration));
  p.set_iterations(f.iterations);
  p.set_duration_ns(duration_ns);
  p.set_warmup_iterations(f.warmup);
  p.set_qps(f.qps);
  p.set_tx_depth(f.tx_depth);
  p.set_cq_moderation(f.cq_moderation);
  p.set_post_list(f.post_list);
  p.set_bidirectional(f.bidirectional);
  p.set_verify(f.verify);
  p.set_memory(f.memory);
  p.set_seed(f.seed);
  p.set_qp_timeout(f.qp_timeout);
  GDR_ASSIGN_OR_RETURN(v1::ConnectionMode cm, sweep::ParseConnectionMode(f.cm, names.cm));
  p.set_cm(cm);
  if (f.gid_index != -1) p.set_gid_index(f.gid_index);
  p.set_disable_pcie_relaxed(f.disable_pcie_relaxed);
  // Range-checked here: a negative value (other than unset) or one past
  // 32 bits must not wrap into range.
  if (f.sl != -1) {
    if (f.sl < 0 || f.sl > limits::kMaxServiceLevel) {
      return Bad(names.sl, " ", f.sl, ": give 0 .. ", limits::kMaxServiceLevel, " (the service level, perftest -S)");
    }
    p.set_sl(static_cast<uint32_t>(f.sl));
  }
  if (f.tclass != -1) {
    if (f.tclass < 0 || f.tclass > limits::kMaxTrafficClass) {
      return Bad(names.tclass, " ", f.tclass, ": give 0 .. ", limits::kMaxTrafficClass,
                 " (the traffic class, DSCP << 2 | ECN, perftest --tclass)");
    }
    p.set_tclass(static_cast<uint32_t>(f.tclass));
  }
  if (f.test == "write_bw") {
    p.set_test(v1::TEST_KIND_WRITE_BW);
  } else if (f.test == "write_lat") {
    p.set_test(v1::TEST_KIND_WRITE_LAT);
  } else {
    return Bad(names.test, " '", f.test, "': give write_bw or write_lat");
  }
  GDR_RETURN_IF_ERROR(sweep::ValidateParams(p, names));
  return p;
}

}  // namespace gdrbench::controller::cli
