#include "agent/service/sweep_convert.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/verbs/device_info.h"
#include "common/status.h"
#include "common/sweep_limits.h"

namespace gdrbench::agent::service {

absl::StatusOr<bench::SweepOptions> ToSweepOptions(const v1::SweepParams& p) {
  namespace lim = sweep_limits;
  bench::SweepOptions o;
  o.test = p.test() == v1::TEST_KIND_WRITE_LAT ? bench::TestKind::kWriteLat
                                                : bench::TestKind::kWriteBw;
  const bool lat = o.test == bench::TestKind::kWriteLat;
  o.sizes_bytes.assign(p.sizes_bytes().begin(), p.sizes_bytes().end());
  o.iterations = p.iterations();
  o.duration_ns = p.duration_ns();
  if (o.iterations == 0 && o.duration_ns == 0) {
    o.iterations = lat ? lim::kDefaultLatencyIterations : lim::kDefaultIterations;
  }
  o.warmup_iterations = p.warmup_iterations();
  o.qps = p.qps() == 0 ? lim::kDefaultQps : p.qps();
  o.tx_depth = p.tx_depth() == 0 ? (lat ? 1 : lim::kDefaultTxDepth) : p.tx_depth();
  o.cq_moderation = p.cq_moderation() == 0 ? std::min(lim::kDefaultCqModeration, o.tx_depth)
                                            : p.cq_moderation();
  o.post_list = p.post_list() == 0 ? lim::kDefaultPostList : p.post_list();
  o.bidirectional = p.bidirectional();
  o.verify = p.verify();
  o.seed = p.seed() == 0 ? 1 : p.seed();
  o.qp_timeout = p.qp_timeout() == 0 ? lim::kDefaultQpTimeout : p.qp_timeout();
  o.inline_size = p.has_inline_size() ? p.inline_size() : (lat ? lim::kDefaultLatencyInline : 0);
  if (p.has_gid_index()) {
    if (p.gid_index() < 0 || p.gid_index() > lim::kMaxGidIndex) {
      return absl::InvalidArgumentError(absl::StrCat("GID index ", p.gid_index(), " outside 0 .. ",
                                                     lim::kMaxGidIndex));
    }
    o.gid_index = p.gid_index();
  }
  o.relaxed_ordering = !p.disable_pcie_relaxed();
  if (p.has_sl()) {
    if (p.sl() > lim::kMaxServiceLevel) {
      return absl::InvalidArgumentError(absl::StrCat("service level ", p.sl(), " outside 0 .. ", lim::kMaxServiceLevel));
    }
    o.sl = static_cast<uint8_t>(p.sl());
  }
  if (p.has_tclass()) {
    if (p.tclass() > lim::kMaxTrafficClass) {
      return absl::InvalidArgumentError(
          absl::StrCat("traffic class ", p.tclass(), " outside 0 .. ", lim::kMaxTrafficClass));
    }
    o.tclass = static_cast<int>(p.tclass());
  }
  GDR_RETURN_IF_ERROR(bench::Validate(o));
  return o;
}

absl::Status CheckMemoryForTest(const memory::MemorySpec& m, const bench::SweepOptions& o) {
  if (o.test == bench::TestKind::kWriteLat &&
      (m.kind == memory::Kind::kGpu || m.kind == memory::Kind::kGpuStaged)) {
    return absl::UnimplementedError(absl::StrCat(
        "write_lat with ", m.ToString(), " memory: the ping-pong polls the receive buffer with "
        "the CPU, which cannot read GPU memory (perftest refuses it too: it needs write with "
        "immediate, which gdrbench does not implement); measure latency with host memory"));
  }
  return absl::OkStatus();
}

void ToProto(const bench::SizeOutcome& o, v1::SizeResult* out) {
  out->set_size_bytes(o.size_bytes);
  out->set_iterations(o.iterations);
  out->set_bw_avg_gbps(o.bw_avg_gbps);
  out->set_bw_peak_gbps(o.bw_peak_gbps);
  out->set_msg_rate_mpps(o.msg_rate_mpps);
  out->set_duration_ns(o.duration_ns);
  out->set_status(o.ok ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_FAILED);
  out->set_error(o.error);
  out->set_perftest_command(o.perftest_command);
  if (o.staged) {
    out->set_staged_copy_gbytes_per_s(o.staged_copy_gbytes_per_s);
    out->set_staged_bw_avg_gbps(o.staged_bw_avg_gbps);
    out->set_staged_copies(o.staged_copies);
  }
  if (o.latency_test) {
    v1::LatencyResult* l = out->mutable_latency();
    l->set_t_min_us(o.latency.t_min_us);
    l->set_t_max_us(o.latency.t_max_us);
    l->set_t_typical_us(o.latency.t_typical_us);
    l->set_t_avg_us(o.latency.t_avg_us);
    l->set_t_stdev_us(o.latency.t_stdev_us);
    l->set_p99_us(o.latency.p99_us);
    l->set_p999_us(o.latency.p999_us);
    l->set_samples(o.latency.samples);
  }
}

bench::CmMode FromProto(v1::ConnectionMode m) {
  switch (m) {
    case v1::CONNECTION_MODE_RDMA_CM: return bench::CmMode::kRdmaCm;
    case v1::CONNECTION_MODE_OOB: return bench::CmMode::kOob;
    default: return bench::CmMode::kAuto;
  }
}

v1::ConnectionMode ToProto(bench::CmMode m) {
  switch (m) {
    case bench::CmMode::kRdmaCm: return v1::CONNECTION_MODE_RDMA_CM;
    case bench::CmMode::kOob: return v1::CONNECTION_MODE_OOB;
    case bench::CmMode::kAuto: return v1::CONNECTION_MODE_AUTO;
  }
  return v1::CONNECTION_MODE_AUTO;
}

void ToProto(const bench::OobEndpoint& e, v1::OobEndpoint* out) {
  for (const bench::QpAddress& q : e.qps) {
    v1::OobQp* p = out->add_qps();
    p->set_qpn(q.qpn);
    p->set_psn(q.psn);
  }
  out->set_port(e.port);
  out->set_lid(e.lid);
  out->set_mtu_bytes(e.mtu_bytes);
  out->set_roce(e.roce);
  for (const bench::GidCandidate& g : e.gids) {
    v1::OobGid* p = out->add_gids();
    p->set_index(g.index);
    p->set_gid(std::string(reinterpret_cast<const char*>(g.gid.data()), g.gid.size()));
    p->set_type(g.type);
    p->set_prefix_length(g.prefix_length);
  }
}

absl::StatusOr<bench::OobEndpoint> FromProto(const v1::OobEndpoint& e) {
  bench::OobEndpoint out;
  if (e.qps_size() == 0) return absl::InvalidArgumentError("out-of-band endpoint without QPs");
  if (e.qps_size() > static_cast<int>(sweep_limits::kMaxQps)) {
    return absl::InvalidArgumentError(absl::StrCat(e.qps_size(), " QP addresses: at most ",
                                                   sweep_limits::kMaxQps));
  }
  for (const v1::OobQp& q : e.qps()) {
    if (q.qpn() == 0 || q.qpn() > 0xffffff || q.psn() > 0xffffff) {
      return absl::InvalidArgumentError(
          absl::StrCat("QP address qpn ", q.qpn(), " psn ", q.psn(), " is not a 24-bit pair"));
    }
    out.qps.push_back(bench::QpAddress{.qpn = q.qpn(), .psn = q.psn(),
                                       .lid = static_cast<uint16_t>(e.lid())});
  }
  if (e.port() == 0 || e.port() > 255 || e.lid() > 0xffff) {
    return absl::InvalidArgumentError(
        absl::StrCat("out-of-band port ", e.port(), " / LID ", e.lid(), " out of range"));
  }
  out.port = static_cast<uint8_t>(e.port());
  out.lid = static_cast<uint16_t>(e.lid());
  out.mtu_bytes = e.mtu_bytes();
  out.roce = e.roce();
  for (const v1::OobGid& g : e.gids()) {
    if (g.gid().size() != 16) return absl::InvalidArgumentError("a GID is not 16 bytes");
    bench::GidCandidate c{.index = g.index(), .gid = {}, .type = g.type(),
                          .prefix_length = g.prefix_length()};
    std::memcpy(c.gid.data(), g.gid().data(), 16);
    out.gids.push_back(c);
  }
  return out;
}

void ToProto(const bench::OobPeer& p, const std::string& gid_choice, v1::OobConnect* out) {
  ToProto(p.endpoint, out->mutable_initiator());
  for (const bench::RemoteSlice& s : p.slices) {
    v1::RemoteBuffer* b = out->add_buffers();
    b->set_addr(s.addr);
    b->set_rkey(s.rkey);
    b->set_length_bytes(s.length);
  }
  out->set_target_gid_index(p.target_gid_index);
  out->set_initiator_gid(
      std::string(reinterpret_cast<const char*>(p.initiator_gid.data()), p.initiator_gid.size()));
  out->set_global(p.global);
  out->set_gid_choice(gid_choice);
}

absl::StatusOr<bench::OobPeer> FromProto(const v1::OobConnect& c) {
  bench::OobPeer p;
  GDR_ASSIGN_OR_RETURN(p.endpoint, FromProto(c.initiator()));
  for (const v1::RemoteBuffer& b : c.buffers()) {
    if (b.addr() == 0 || b.length_bytes() == 0) {
      return absl::InvalidArgumentError("an initiator buffer has no address or length");
    }
    p.slices.push_back(bench::RemoteSlice{b.addr(), b.rkey(), b.length_bytes()});
  }
  if (c.initiator_gid().size() != 16) {
    return absl::InvalidArgumentError("the initiator's GID is not 16 bytes");
  }
  std::memcpy(p.initiator_gid.data(), c.initiator_gid().data(), 16);
  p.target_gid_index = c.target_gid_index();
  p.global = c.global();
  return p;
}

absl::StatusOr<verbs::DeviceInfo> CheckDevice(bench::SessionFactory& sessions,
                                              const std::vector<std::string>& owned,
                                              const std::string& device) {
  if (device.empty()) return absl::InvalidArgumentError("no RDMA device given (device is empty)");
  if (!owned.empty() && std::find(owned.begin(), owned.end(), device) == owned.end()) {
    return absl::InvalidArgumentError(absl::StrCat("this agent does not own RDMA device '", device,
                                                   "' (it owns ", absl::StrJoin(owned, ", "),
                                                   ")"));
  }
  return sessions.ResolveDevice(device);
}

void ToProto(const counters::Delta& d, v1::PortCounters* out) {
  out->set_device(d.device);
  out->set_port(d.port);
  out->set_interval_ns(d.interval_ns);
  out->set_compared(static_cast<uint32_t>(d.compared));
  out->set_packets(d.packets);
  out->set_absent(d.absent);
  for (const counters::Change& c : d.changes) {
    v1::CounterChange* o = out->add_changes();
    o->set_name(c.file);
    switch (c.kind) {
      case counters::Kind::kLink: o->set_kind(v1::COUNTER_KIND_LINK); break;
      case counters::Kind::kRetransmit: o->set_kind(v1::COUNTER_KIND_RETRANSMIT); break;
      case counters::Kind::kCongestion: o->set_kind(v1::COUNTER_KIND_CONGESTION); break;
      case counters::Kind::kPackets: o->set_kind(v1::COUNTER_KIND_PACKETS); break;
      case counters::Kind::kData: o->set_kind(v1::COUNTER_KIND_DATA); break;
      case counters::Kind::kTransportError: o->set_kind(v1::COUNTER_KIND_TRANSPORT_ERROR); break;
    }
    o->set_before(c.before);
    o->set_after(c.after);
    o->set_delta(c.delta);
    o->set_note(c.note);
  }
}

}  // namespace gdrbench::agent::service
