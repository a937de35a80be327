// A fake NIC for the data path's Ops policy (write_loop.h, write_sweep.h,
// control.h): a simulated clock, per-QP send queues that complete in order
// after a fixed latency at a fixed wire rate, settable failures, and, when
// regions are registered, memory semantics: every WRITE is checked against
// the local regions (lkey) and the peer's regions (rkey) like a NIC's
// protection check, completes with IBV_WC_REM_ACCESS_ERR / LOC_PROT_ERR when
// it falls outside, and (copy_data) really moves the bytes, so a test can
// check what landed where. Two FakeNics linked with Link() exchange control
// messages (zero-length SEND with immediate) into the peer's posted receives.
//
// It is also the Nic policy of the out-of-band sessions (verbs_nic.h): on a
// FakeFabric, Register/CreateQps/Address/Connect behave like a NIC's QPs in
// INIT/RTR/RTS, Connect checks what a real QP would need to reach its peer
// (the destination QPN exists, the PSNs pair up, the source GID index is in
// this port's table, the destination GID is the peer's, the MTU fits both),
// and WRITEs and control messages reach the connected peer only.
//
// It checks the loop's obligations as it goes (never more than tx_depth
// outstanding per QP; the SQ never overflows; no SEND without a receive).
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/bench/control.h"
#include "agent/bench/oob.h"
#include "agent/bench/verbs_nic.h"
#include "agent/bench/verbs_ops.h"
#include "agent/memory/memory.h"
#include "agent/verbs/handles.h"

namespace gdrbench::agent::bench::testing {

class FakeNic;

// The wire between fake NICs: QPNs are unique on it and name their NIC.
class FakeFabric {
 public:
  uint32_t Register(FakeNic* nic, uint32_t q) {
    std::lock_guard lock(mu_);
    uint32_t qpn = next_qpn_++;
    qps_[qpn] = {nic, q};
    return qpn;
  }
  std::pair<FakeNic*, uint32_t> Find(uint32_t qpn) {
    std::lock_guard lock(mu_);
    auto it = qps_.find(qpn);
    return it == qps_.end() ? std::pair<FakeNic*, uint32_t>{nullptr, 0} : it->second;
  }
  // A NIC that goes: its QPNs name nothing any more.
  void Unregister(uint32_t qpn) {
    std::lock_guard lock(mu_);
    qps_.erase(qpn);
  }
  // Marks dead (FakeNic::dead) every NIC on the wire whose port LID
  // `lid_dies` says: a process that died with its tests in flight.
  void KillNics(const std::function<bool(uint32_t lid)>& lid_dies);
  uint32_t NextKey() {
    std::lock_guard lock(mu_);
    return next_key_++;
  }

 private:
  std::mutex mu_;
  uint32_t next_qpn_ = 0x11;
  uint32_t next_key_ = 0x100;
  std::map<uint32_t, std::pair<FakeNic*, uint32_t>> qps_;
};

class FakeNic {
 public:
  FakeNic(uint32_t qps, uint32_t sq_depth, int64_t ns_per_wr, int64_t latency_ns = 1000)
      : sq_depth_(sq_depth), ns_per_wr_(ns_per_wr), latency_ns_(latency_ns), queues_(qps),
        inbox_(qps), receives_(qps, 0) {}
  // A NIC on `fabric` whose port is `port` (its LID, MTU and GID table).
  FakeNic(FakeFabric* fabric, const verbs::PortInfo& port)
      : sq_depth_(8192), ns_per_wr_(100), latency_ns_(1000), fabric_(fabric), port_(port) {}
  ~FakeNic() {
    if (fabric_ == nullptr) return;
    for (const QpAddress& a : addresses_) fabric_->Unregister(a.qpn);
  }
  FakeNic(const FakeNic&) = delete;
  FakeNic& operator=(const FakeNic&) = delete;

  // Links two NICs both ways: control messages of one land in the other.
  static void Link(FakeNic& a, FakeNic& b) {
    a.peer_ = &b;
    b.peer_ = &a;
  }

  // Memory: regions this side may read (lkey) and regions of the peer this
  // side may write (rkey).
  void AddLocalRegion(const void* addr, uint64_t len, uint32_t lkey) {
    local_.push_back(Region{reinterpret_cast<uint64_t>(addr), len, lkey});
  }
  void AddRemoteRegion(const void* addr, uint64_t len, uint32_t rkey) {
    remote_.push_back(Region{reinterpret_cast<uint64_t>(addr), len, rkey});
  }
  bool copy_data = false;  // perform the writes (needs regions)
  bool drop_data = false;  // WRITEs complete but their bytes never land
  // The wire's rate: a WRITE of B bytes holds the wire at least B x 8 /
  // wire_gbps ns (0: ns_per_wr only, whatever its size).
  double wire_gbps = 0;

  // Failure injection.
  int post_error_at = -1;           // the Nth Post call returns this errno (ENOMEM)
  int64_t complete_error_at = -1;   // the WR with this global number completes with an error
  ibv_wc_status error_status = IBV_WC_REM_ACCESS_ERR;
  bool never_complete = false;      // the peer vanished: nothing completes
  bool qp_error = false;            // the QPs are in the error state: receives flush
  // This NIC's process died: nothing it is sent is delivered or ACKed, so
  // the peer's SENDs and keep-alives end with a retry error.
  std::atomic<bool> dead{false};
  // As rxe at retry count 7: a WRITE to a dead peer is retried forever and
  // never completes (no retry error ever comes).
  bool retries_forever = false;
  uint64_t keepalives = 0;

  // Observations.
  uint64_t posts = 0;
  uint64_t wrs = 0;
  uint64_t signalled = 0;
  uint64_t max_outstanding = 0;
  uint64_t polls = 0;
  bool sq_overflow = false;
  uint64_t out_of_region = 0;       // WRITEs outside a registered region
  std::string first_violation;
  uint64_t bytes_written = 0;
  uint64_t controls_sent = 0;
  uint64_t sends_without_receive = 0;

  void Configure(const std::vector<QpTarget>& targets, uint32_t bytes, uint32_t post_list) {
    targets_ = targets;
    bytes_ = bytes;
    post_list_ = post_list;
  }

  int Post(uint32_t qp, uint64_t first, uint32_t count, bool signal, uint64_t wr_id) {
    if (post_error_at >= 0 && static_cast<int64_t>(posts) == post_error_at) return 12;  // ENOMEM
    ++posts;
    Queue& q = queues_[qp];
    for (uint32_t i = 0; i < count; ++i) {
      bool last = i + 1 == count;
      ibv_wc_status st = Write(qp);
      // The wire serialises: each WR finishes ns_per_wr after the later of
      // its post and the previous WR's finish.
      wire_free_ = std::max(wire_free_, now_) + WireNs();
      q.pending.push_back(Wr{wire_free_ + latency_ns_, last && signal, wr_id, wrs, st});
      ++wrs;
    }
    (void)first;
    if (signal) ++signalled;
    q.unreaped += count;
    if (q.unreaped > sq_depth_) sq_overflow = true;
    max_outstanding = std::max<uint64_t>(max_outstanding, q.unreaped);
    now_ += 50;  // a post costs a little time
    return 0;
  }

  int Poll(int max, ibv_wc* wc) {
    ++polls;
    now_ += 20;
    int n = 0;
    if (never_complete) return 0;
    for (Queue& q : queues_) {
      while (n < max && !q.pending.empty() && q.pending.front().done_at <= now_) {
        Wr w = q.pending.front();
        q.pending.pop_front();
        bool injected = complete_error_at >= 0 && static_cast<int64_t>(w.global) >= complete_error_at;
        ibv_wc_status st = injected ? error_status : w.status;
        bool error = st != IBV_WC_SUCCESS;
        if (!w.signalled && !error) {
          q.retired_unsignalled++;
          continue;
        }
        wc[n] = ibv_wc{};
        wc[n].wr_id = w.wr_id;
        wc[n].status = st;
        wc[n].opcode = IBV_WC_RDMA_WRITE;
        ++n;
        // A signalled completion frees its SQ slot and those before it.
        q.unreaped -= std::min(q.unreaped, q.retired_unsignalled + 1);
        q.retired_unsignalled = 0;
        if (error) return n;
      }
    }
    if (n == 0) {
      // Nothing due: jump the clock to the next event, as time passes.
      int64_t next = INT64_MAX;
      for (Queue& q : queues_) {
        if (!q.pending.empty()) next = std::min(next, q.pending.front().done_at);
      }
      if (next != INT64_MAX && next > now_) now_ = next;
    }
    return n;
  }

  int64_t NowNs() { return now_ += 100; }  // time passes while a loop spins
  int64_t now() const { return now_; }
  void Advance(int64_t ns) { now_ += ns; }  // work outside the NIC (a staging copy)
  uint32_t qps() const { return static_cast<uint32_t>(queues_.size()); }
  // The real one sleeps 1 ms. On a fabric the peer is another thread that
  // runs in real time: let some real time pass too, or a wait for its
  // message would time out on the virtual clock before the peer ran.
  void Idle() {
    now_ += 1'000'000;
    if (fabric_ != nullptr || real_time_idle) std::this_thread::sleep_for(idle_sleep);
  }
  // Linked NICs driven from two threads: let real time pass in Idle too.
  bool real_time_idle = false;
  // The real time an Idle lets pass: short, so that unit tests take little
  // wall time; a simulated fleet (many NICs' loops on one host) sets the
  // real NIC's 1 ms (verbs_ops.h), each wake-up being CPU it takes from the rest.
  std::chrono::microseconds idle_sleep{200};

  // The Nic policy (verbs_nic.h).
  absl::StatusOr<MemoryKeys> Register(memory::Buffer& buffer, int access) {
    registered_access = access;
    if (fail_register) return absl::FailedPreconditionError("fake NIC: registration refused");
    uint32_t key = fabric_ != nullptr ? fabric_->NextKey() : 0x100;
    AddLocalRegion(buffer.data(), buffer.size(), key);
    copy_data = true;
    return MemoryKeys{.lkey = key, .rkey = key, .method = "fake_reg_mr"};
  }
  absl::Status CreateQps(uint32_t qps, const verbs::QpCaps& caps, int send_cq_entries) {
    if (caps.max_send_wr == 0 || send_cq_entries <= 0) {
      return absl::InvalidArgumentError("fake NIC: a QP needs send WRs and a CQ");
    }
    created_caps = caps;
    queues_.assign(qps, Queue{});
    inbox_.assign(qps, {});
    receives_.assign(qps, 0);
    peers_.assign(qps, Peer{});
    for (uint32_t q = 0; q < qps; ++q) {
      uint32_t qpn = fabric_ != nullptr ? fabric_->Register(this, q) : q + 1;
      addresses_.push_back(QpAddress{.qpn = qpn, .psn = (qpn * 7919) & 0xffffff,
                                     .lid = static_cast<uint16_t>(port_.lid)});
    }
    return ArmControlReceives(*this);
  }
  QpAddress Address(uint32_t q) const { return addresses_[q]; }
  uint32_t lid() const { return port_.lid; }
  absl::Status Connect(uint32_t q, const QpTransition& rtr, const QpTransition& rts);
  ibv_qp* qp(uint32_t) const { return nullptr; }
  FakeNic& ops() { return *this; }
  // No context: nothing for DataEvents to read (session.h WatchData's
  // default); the device's name (device_name), for a fake factory's watch.
  verbs::DataObjects data_objects() const {
    verbs::DataObjects o;
    o.device = device_name;
    return o;
  }
  std::string device_name;
  uint32_t max_inline() const { return created_caps.max_inline_data; }
  void SetInline(bool on) { inline_on = on; }
  bool connected(uint32_t q) const { return q < peers_.size() && peers_[q].nic != nullptr; }
  bool fail_register = false;
  int registered_access = 0;
  bool inline_on = false;
  verbs::QpCaps created_caps;

  // Control messages.
  int PostControl(uint32_t qp, uint32_t imm) {
    ++controls_sent;
    FakeNic* peer = peer_;
    uint32_t pq = qp;
    if (fabric_ != nullptr) {
      peer = connected(qp) ? peers_[qp].nic : nullptr;
      pq = connected(qp) ? peers_[qp].q : 0;
    }
    const bool gone = peer != nullptr && peer->dead.load();
    if (peer != nullptr && !qp_error && !gone) {
      std::lock_guard lock(peer->inbox_mu_);
      if (peer->receives_[pq] == 0) {
        ++sends_without_receive;  // a real RC QP would RNR-retry; the protocol must not rely on it
      } else {
        --peer->receives_[pq];
        peer->inbox_[pq].push_back(imm);
      }
    }
    Queue& q = queues_[qp];
    q.pending.push_back(Wr{now_ + (gone ? kRetryNs : latency_ns_), true, kControlWrIdBit | qp,
                           wrs++,
                           qp_error ? IBV_WC_WR_FLUSH_ERR
                                    : (gone ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS)});
    q.unreaped += 1;
    return 0;
  }
  // A zero-length WRITE to the peer: ACKed when the peer lives, a transport
  // retry error (after RC's retries) when it is dead.
  int PostKeepalive(uint32_t qp) {
    ++keepalives;
    FakeNic* peer = fabric_ != nullptr ? (connected(qp) ? peers_[qp].nic : nullptr) : peer_;
    const bool gone = peer == nullptr || peer->dead.load();
    Queue& q = queues_[qp];
    if (gone && retries_forever) return 0;  // posted; no completion ever
    q.pending.push_back(Wr{now_ + (gone ? kRetryNs : latency_ns_), true, kKeepaliveWrId | qp,
                           wrs++, gone ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS});
    q.unreaped += 1;
    return 0;
  }
  // RC's retries at perftest's qp_timeout 14: 4.096 us x 2^14 x 8.
  static constexpr int64_t kRetryNs = 536'870'912;
  int PostControlReceive(uint32_t qp) {
    std::lock_guard lock(inbox_mu_);
    ++receives_[qp];
    return 0;
  }
  int PollControl(int max, ibv_wc* wc) {
    std::lock_guard lock(inbox_mu_);
    int n = 0;
    for (uint32_t q = 0; q < inbox_.size() && n < max; ++q) {
      if (qp_error && receives_[q] > 0) {
        --receives_[q];
        wc[n] = ibv_wc{};
        wc[n].wr_id = q;
        wc[n].status = IBV_WC_WR_FLUSH_ERR;
        ++n;
        continue;
      }
      while (n < max && !inbox_[q].empty()) {
        wc[n] = ibv_wc{};
        wc[n].wr_id = q;
        wc[n].status = IBV_WC_SUCCESS;
        wc[n].opcode = IBV_WC_RECV;
        wc[n].imm_data = inbox_[q].front();
        inbox_[q].pop_front();
        ++n;
      }
    }
    now_ += 20;
    return n;
  }
  uint32_t receives_posted(uint32_t qp) {
    std::lock_guard lock(inbox_mu_);
    return receives_[qp];
  }

 private:
  struct Region {
    uint64_t addr;
    uint64_t len;
    uint32_t key;
  };
  struct Wr {
    int64_t done_at;
    bool signalled;
    uint64_t wr_id;
    uint64_t global;
    ibv_wc_status status;
  };
  struct Queue {
    std::deque<Wr> pending;
    uint64_t unreaped = 0;
    uint64_t retired_unsignalled = 0;
  };

  static bool Inside(const std::vector<Region>& rs, uint64_t addr, uint64_t len, uint32_t key) {
    for (const Region& r : rs) {
      if (r.key == key && addr >= r.addr && len <= r.len && addr - r.addr <= r.len - len) {
        return true;
      }
    }
    return false;
  }

  // The protection check and the data movement of one WRITE on QP `qp`.
  ibv_wc_status Write(uint32_t qp) {
    if (local_.empty() && remote_.empty()) return IBV_WC_SUCCESS;  // timing-only use
    if (qp >= targets_.size()) return IBV_WC_LOC_QP_OP_ERR;
    const QpTarget& t = targets_[qp];
    if (!Inside(local_, t.local_addr, bytes_, t.lkey)) {
      Violation(absl::StrCat("local [", t.local_addr, ", +", bytes_, ") lkey ", t.lkey));
      return IBV_WC_LOC_PROT_ERR;
    }
    if (fabric_ != nullptr && (!connected(qp) || peers_[qp].nic->dead.load())) {
      return IBV_WC_RETRY_EXC_ERR;  // nobody answers
    }
    const std::vector<Region>& remote = fabric_ != nullptr ? peers_[qp].nic->local_ : remote_;
    if (!Inside(remote, t.remote_addr, bytes_, t.rkey)) {
      Violation(absl::StrCat("remote [", t.remote_addr, ", +", bytes_, ") rkey ", t.rkey));
      return IBV_WC_REM_ACCESS_ERR;
    }
    if (copy_data && !drop_data) {
      std::memmove(reinterpret_cast<void*>(t.remote_addr),
                   reinterpret_cast<const void*>(t.local_addr), bytes_);
    }
    bytes_written += bytes_;
    return IBV_WC_SUCCESS;
  }
  int64_t WireNs() const {
    if (wire_gbps <= 0) return ns_per_wr_;
    return std::max<int64_t>(ns_per_wr_, static_cast<int64_t>(bytes_ * 8.0 / wire_gbps));
  }
  void Violation(std::string what) {
    if (out_of_region++ == 0) first_violation = std::move(what);
  }

  uint32_t sq_depth_;
  int64_t ns_per_wr_;
  int64_t latency_ns_;
  std::vector<Queue> queues_;
  std::vector<std::deque<uint32_t>> inbox_;
  std::vector<uint32_t> receives_;
  std::vector<Region> local_;
  std::vector<Region> remote_;
  std::vector<QpTarget> targets_;
  uint32_t bytes_ = 0;
  uint32_t post_list_ = 1;
  FakeNic* peer_ = nullptr;
  struct Peer {
    FakeNic* nic = nullptr;
    uint32_t q = 0;
  };
  FakeFabric* fabric_ = nullptr;
  verbs::PortInfo port_;
  std::vector<QpAddress> addresses_;
  std::vector<Peer> peers_;
  std::mutex inbox_mu_;  // inbox_ and receives_: the peer delivers from its thread
  int64_t now_ = 1'000'000;
  int64_t wire_free_ = 0;
};

inline absl::Status FakeNic::Connect(uint32_t q, const QpTransition& rtr, const QpTransition& rts) {
  auto bad = [&](auto... parts) {
    return absl::InvalidArgumentError(absl::StrCat("fake NIC, QP ", q, ": ", parts...));
  };
  if (fabric_ == nullptr || q >= peers_.size()) return bad("not on a fabric");
  if (connected(q)) return bad("already connected");
  if (rtr.attr.qp_state != IBV_QPS_RTR || rts.attr.qp_state != IBV_QPS_RTS) return bad("states");
  auto [peer, pq] = fabric_->Find(rtr.attr.dest_qp_num);
  if (peer == nullptr) return bad("no QP ", rtr.attr.dest_qp_num, " on the fabric");
  if (rtr.attr.rq_psn != peer->Address(pq).psn) {
    return bad("rq_psn ", rtr.attr.rq_psn, " is not the peer's first PSN ", peer->Address(pq).psn);
  }
  if (rts.attr.sq_psn != addresses_[q].psn) return bad("sq_psn is not this QP's");
  if (rtr.attr.ah_attr.is_global) {
    bool sgid = false, dgid = false;
    for (const verbs::GidEntry& g : port_.gids) sgid = sgid || g.index == rtr.attr.ah_attr.grh.sgid_index;
    for (const verbs::GidEntry& g : peer->port_.gids) {
      auto raw = ParseGid(g.gid);
      dgid = dgid || (raw.ok() && std::memcmp(raw->data(), rtr.attr.ah_attr.grh.dgid.raw, 16) == 0);
    }
    if (!sgid) return bad("source GID index ", int{rtr.attr.ah_attr.grh.sgid_index}, " not in the table");
    if (!dgid) return bad("destination GID is not the peer's");
  } else if (port_.link_layer == "Ethernet") {
    return bad("RoCE needs a GRH");
  } else if (rtr.attr.ah_attr.dlid != peer->port_.lid) {
    return bad("dlid ", rtr.attr.ah_attr.dlid, " is not the peer's LID ", peer->port_.lid);
  }
  uint32_t mtu = 128u << rtr.attr.path_mtu;
  if (mtu > port_.active_mtu_bytes || mtu > peer->port_.active_mtu_bytes) return bad("MTU ", mtu);
  if (rts.attr.timeout == 0 || rts.attr.retry_cnt != 7) return bad("timeout/retry");
  peers_[q] = Peer{peer, pq};
  return absl::OkStatus();
}

// Under the lock: a NIC on the map has not passed its destructor's Unregister.
inline void FakeFabric::KillNics(const std::function<bool(uint32_t lid)>& lid_dies) {
  std::lock_guard lock(mu_);
  for (auto& [qpn, nic_q] : qps_) {
    if (lid_dies(nic_q.first->lid())) nic_q.first->dead = true;
  }
}

}  // namespace gdrbench::agent::bench::testing
