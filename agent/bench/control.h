// Control messages between the two sides of a test, in band on the test's
// own QPs: a zero-length SEND with immediate data, received on a receive CQ
// of its own (the write loop polls only the send CQ, so a message arriving
// mid-sweep never disturbs it). Needs no buffer and no memory polling, so it
// works the same for host and GPU memory and in both connection modes.
//
//   kReady        target -> initiator, every QP, once the target's QP is RTS
//                 (out-of-band mode: nothing may be posted to a QP that
//                 cannot receive yet; rdma_cm's ESTABLISHED says as much)
//   kReverseDone  target -> initiator, QP 0, once the reverse sweep of a
//                 bidirectional test is over: the initiator keeps its QPs and
//                 buffer up until then, and then checks the reverse regions
//   barrier       both ways, QP 0, bidirectional tests: before and after the
//                 measured pass of every size (BarrierMessage(index, end)),
//                 so both directions start and end each size together, as
//                 perftest's ctx_hand_shake around each size in duplex mode
//
// While a side waits (WaitControl) it probes the peer once a second with a
// signalled zero-length RDMA WRITE (a keep-alive: no receive consumed, the
// peer's CPU not involved). A peer whose process died no longer ACKs, and RC
// ends the probe with an error after its retries (4.096 us x 2^qp_timeout x
// 8: 0.5 s at perftest's 14), so a dead peer is heard in seconds, in both
// connection modes, instead of at the wait's timeout.
//
// Each side posts kControlReceives zero-length receives per QP before its QP
// leaves INIT, and re-arms one per message consumed.
//
// Ops (verbs_ops.h, or the fake NIC in the tests) provides:
//   int PostControl(uint32_t qp, uint32_t imm);   // completion via Poll, wr_id kControlWrIdBit|qp
//   int PostControlReceive(uint32_t qp);
//   int PollControl(int max, ibv_wc* wc);         // imm_data in host order
//   int PostKeepalive(uint32_t qp);   // zero-length signalled WRITE, wr_id kKeepaliveWrId|qp;
//                                     // < 0: not possible yet (no remote slice configured)
//   int Poll(int max, ibv_wc* wc);  int64_t NowNs();  uint32_t qps() const;
//   void Idle();   // nothing arrived: yield the CPU a little (the real one sleeps 1 ms, so a
//                  // side waiting minutes for its peer does not take a core from it)
//
// Errors: DEADLINE_EXCEEDED (timeout), ABORTED (cancelled), UNAVAILABLE (a
// post failed, or a completion says the QP is in the error state: the peer
// failed, or the link went down), INTERNAL (an unknown message).
// Thread safety: the thread that owns the QPs.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/bench/verbs_ops.h"

namespace gdrbench::agent::bench {

enum class ControlMessage : uint32_t {
  kReady = 0x67640001,
  kReverseDone = 0x67640002,
  kBarrierBase = 0x67650000,  // | (size index << 1) | end: BarrierMessage
};
inline constexpr uint32_t kControlReceives = 4;
// How long a control message's send completion is waited for.
inline constexpr int64_t kControlSendTimeoutNs = 10'000'000'000;
inline constexpr int64_t kKeepaliveIntervalNs = 1'000'000'000;
// A keep-alive not acknowledged within this is the peer's death, whatever
// RC's own retries do: a live peer's kernel ACKs a zero-length WRITE in
// microseconds (seconds behind a congested queue), while rxe retries a WRITE
// to a destroyed QP forever at retry count 7.
inline constexpr int64_t kKeepaliveAnswerNs = 12'000'000'000;

// The barrier before (end = false) or after (end = true) the measured pass
// of size `index` (sizes are at most kMaxSizes, far below 2^15).
inline ControlMessage BarrierMessage(size_t index, bool end) {
  return static_cast<ControlMessage>(static_cast<uint32_t>(ControlMessage::kBarrierBase) |
                                     ((static_cast<uint32_t>(index) & 0x7fff) << 1) |
                                     (end ? 1u : 0u));
}
inline bool IsBarrier(uint32_t imm) {
  return (imm & 0xffff0000u) == static_cast<uint32_t>(ControlMessage::kBarrierBase);
}
inline bool IsKnownControl(uint32_t imm) {
  return imm == static_cast<uint32_t>(ControlMessage::kReady) ||
         imm == static_cast<uint32_t>(ControlMessage::kReverseDone) || IsBarrier(imm);
}

inline const char* ControlMessageName(ControlMessage m) {
  switch (m) {
    case ControlMessage::kReady:
      return "ready";
    case ControlMessage::kReverseDone:
      return "reverse sweep done";
    default:
      break;
  }
  if (IsBarrier(static_cast<uint32_t>(m))) {
    return (static_cast<uint32_t>(m) & 1) != 0 ? "size end barrier" : "size start barrier";
  }
  return "unknown";
}

// Posts kControlReceives receives on every QP.
template <typename Ops>
absl::Status ArmControlReceives(Ops& ops) {
  for (uint32_t q = 0; q < ops.qps(); ++q) {
    for (uint32_t i = 0; i < kControlReceives; ++i) {
      if (int rc = ops.PostControlReceive(q); rc != 0) {
        return absl::UnavailableError(absl::StrCat("ibv_post_recv (control) on QP ", q, ": ",
                                                   std::strerror(rc)));
      }
    }
  }
  return absl::OkStatus();
}

// Sends `m` on QP `qp` and waits for its send completion.
template <typename Ops>
absl::Status SendControl(Ops& ops, uint32_t qp, ControlMessage m, int64_t timeout_ns) {
  if (int rc = ops.PostControl(qp, static_cast<uint32_t>(m)); rc != 0) {
    return absl::UnavailableError(absl::StrCat("posting the '", ControlMessageName(m),
                                               "' message on QP ", qp, ": ", std::strerror(rc)));
  }
  const int64_t deadline = ops.NowNs() + timeout_ns;
  ibv_wc wc[4];
  for (;;) {
    int n = ops.Poll(4, wc);
    if (n < 0) return absl::UnavailableError(absl::StrCat("ibv_poll_cq failed: errno ", -n));
    for (int i = 0; i < n; ++i) {
      if ((wc[i].wr_id & kKeepaliveWrId) == kKeepaliveWrId && wc[i].status != IBV_WC_SUCCESS) {
        return absl::UnavailableError(absl::StrCat(
            "the peer stopped answering (keep-alive on QP ", wc[i].wr_id & 0xffff, ": ",
            ibv_wc_status_str(wc[i].status), ")"));
      }
      if (wc[i].wr_id != (kControlWrIdBit | qp)) continue;  // a flushed WR of a failed loop
      if (wc[i].status != IBV_WC_SUCCESS) {
        return absl::UnavailableError(absl::StrCat(
            "the '", ControlMessageName(m), "' message on QP ", qp, " failed: ",
            ibv_wc_status_str(wc[i].status), " (status ", static_cast<int>(wc[i].status), ")"));
      }
      return absl::OkStatus();
    }
    if (n == 0 && ops.NowNs() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the '", ControlMessageName(m), "' message on QP ", qp, " did not complete within ",
          timeout_ns / 1'000'000, " ms"));
    }
    if (n == 0) ops.Idle();
  }
}

// Messages that arrived while a side waited for another kind, kept for its
// next wait: out of band, a short bidirectional test's "reverse sweep done"
// can reach the initiator in the same poll as "ready".
struct ControlMailbox {
  std::vector<std::pair<uint32_t, uint32_t>> early;  // (QP, message)
};

// The keep-alive of a waiting side (see the top of this file): one probe
// on QP 0 at a time, a second apart. Poll() is the send CQ; nothing of the
// write loop is outstanding while a side waits, and a late probe completion
// carries the control bit, which the loop skips.
struct PeerProbe {
  bool outstanding = false;
  int64_t next_ns = 0;
  int64_t posted_ns = 0;

  template <typename Ops>
  absl::Status Step(Ops& ops, int64_t now) {
    ibv_wc wc[4];
    int n = ops.Poll(4, wc);
    if (n < 0) return absl::UnavailableError(absl::StrCat("ibv_poll_cq failed: errno ", -n));
    for (int i = 0; i < n; ++i) {
      if ((wc[i].wr_id & kKeepaliveWrId) != kKeepaliveWrId) continue;
      if (wc[i].status != IBV_WC_SUCCESS) {
        return absl::UnavailableError(absl::StrCat(
            "the peer stopped answering: the keep-alive WRITE on QP ", wc[i].wr_id & 0xffff,
            " failed (", ibv_wc_status_str(wc[i].status), ", status ",
            static_cast<int>(wc[i].status), "): its process or its link is gone"));
      }
      outstanding = false;
    }
    if (outstanding && now - posted_ns > kKeepaliveAnswerNs) {
      return absl::UnavailableError(absl::StrCat(
          "the peer stopped answering: the keep-alive WRITE on QP 0 was not acknowledged within ",
          kKeepaliveAnswerNs / 1'000'000'000, " s: its process or its link is gone"));
    }
    if (!outstanding && now >= next_ns) {
      int rc = ops.PostKeepalive(0);
      if (rc > 0) {
        return absl::UnavailableError(
            absl::StrCat("posting the keep-alive on QP 0: ", std::strerror(rc)));
      }
      outstanding = rc == 0;
      posted_ns = now;
      next_ns = now + kKeepaliveIntervalNs;
    }
    return absl::OkStatus();
  }
};

// Waits until `m` arrived on each of the QPs in `from` (indices), re-arming
// a receive for every message consumed, probing the peer meanwhile
// (PeerProbe). Messages of another kind go to `box` when given (dropped
// otherwise); `m`s already in it count. Waiting for a barrier, a "reverse
// sweep done" means the peer's sweep ended early: UNAVAILABLE.
template <typename Ops>
absl::Status WaitControl(Ops& ops, ControlMessage m, const std::vector<uint32_t>& from,
                         const std::atomic<bool>& cancelled, int64_t timeout_ns,
                         ControlMailbox* box = nullptr) {
  std::vector<uint8_t> seen(ops.qps(), 0);
  size_t got = 0;
  auto count = [&](uint32_t q) {
    bool wanted = false;
    for (uint32_t f : from) wanted = wanted || f == q;
    if (wanted && q < seen.size() && !seen[q]) {
      seen[q] = 1;
      ++got;
    }
  };
  if (box != nullptr) {
    for (auto it = box->early.begin(); it != box->early.end();) {
      if (it->second != static_cast<uint32_t>(m)) {
        ++it;
        continue;
      }
      count(it->first);
      it = box->early.erase(it);
    }
  }
  const int64_t deadline = ops.NowNs() + timeout_ns;
  PeerProbe probe{.outstanding = false, .next_ns = ops.NowNs() + kKeepaliveIntervalNs};
  ibv_wc wc[1];
  while (got < from.size()) {
    // One message at a time: what arrives after the awaited one stays in the
    // receive CQ for the next wait (a peer one barrier ahead, "reverse sweep
    // done" right behind the last barrier) instead of being consumed here.
    int n = ops.PollControl(1, wc);
    if (n < 0) return absl::UnavailableError(absl::StrCat("ibv_poll_cq (control) failed: errno ", -n));
    for (int i = 0; i < n; ++i) {
      const uint32_t q = static_cast<uint32_t>(wc[i].wr_id);
      if (wc[i].status != IBV_WC_SUCCESS) {
        return absl::UnavailableError(absl::StrCat(
            "QP ", q, " went to the error state while waiting for the '", ControlMessageName(m),
            "' message (", ibv_wc_status_str(wc[i].status), "): the peer failed or the link broke"));
      }
      if (q >= seen.size()) return absl::InternalError(absl::StrCat("control message on QP ", q));
      if (int rc = ops.PostControlReceive(q); rc != 0) {
        return absl::UnavailableError(absl::StrCat("re-arming the control receive on QP ", q,
                                                   ": ", std::strerror(rc)));
      }
      if (wc[i].imm_data == static_cast<uint32_t>(m)) {
        count(q);
      } else if (IsBarrier(static_cast<uint32_t>(m)) &&
                 wc[i].imm_data == static_cast<uint32_t>(ControlMessage::kReverseDone)) {
        if (box != nullptr) box->early.emplace_back(q, wc[i].imm_data);
        return absl::UnavailableError(absl::StrCat("the peer ended its sweep while this side "
                                                   "waited for the '", ControlMessageName(m),
                                                   "' of size ", (static_cast<uint32_t>(m) >> 1) & 0x7fff));
      } else if (IsKnownControl(wc[i].imm_data)) {
        if (box != nullptr) box->early.emplace_back(q, wc[i].imm_data);
      } else {
        return absl::InternalError(absl::StrCat("unknown control message 0x",
                                                absl::Hex(wc[i].imm_data), " on QP ", q));
      }
    }
    if (n > 0) continue;
    if (cancelled.load()) {
      return absl::AbortedError(absl::StrCat("cancelled while waiting for the '",
                                             ControlMessageName(m), "' message"));
    }
    const int64_t now = ops.NowNs();
    if (now > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "no '", ControlMessageName(m), "' message from the peer within ", timeout_ns / 1'000'000,
          " ms (", got, " of ", from.size(), " QPs)"));
    }
    if (absl::Status alive = probe.Step(ops, now); !alive.ok()) {
      return absl::Status(alive.code(), absl::StrCat("waiting for the '", ControlMessageName(m),
                                                     "' message: ", alive.message()));
    }
    ops.Idle();
  }
  return absl::OkStatus();
}

// The target's go to its initiator: kReady on each of QPs 0..qps-1.
template <typename Ops>
absl::Status SendReadyOnQps(Ops& ops, uint32_t qps) {
  for (uint32_t q = 0; q < qps; ++q) {
    if (absl::Status st = SendControl(ops, q, ControlMessage::kReady, kControlSendTimeoutNs); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

// The initiator's wait for its target's kReady on each of QPs 0..qps-1
// (WaitControl).
template <typename Ops>
absl::Status WaitReadyOnQps(Ops& ops, uint32_t qps, const std::atomic<bool>& cancelled, int64_t timeout_ns,
                            ControlMailbox* box = nullptr) {
  std::vector<uint32_t> all(qps);
  for (uint32_t q = 0; q < qps; ++q) all[q] = q;
  return WaitControl(ops, ControlMessage::kReady, all, cancelled, timeout_ns, box);
}

// The per-size barrier of a bidirectional test: this side's barrier
// message on QP 0, then the peer's. Both sides call it at the same points
// of their sweeps.
template <typename Ops>
absl::Status MeetPeer(Ops& ops, size_t index, bool end, const std::atomic<bool>& cancelled,
                      int64_t timeout_ns) {
  const ControlMessage m = BarrierMessage(index, end);
  if (absl::Status st = SendControl(ops, 0, m, kControlSendTimeoutNs); !st.ok()) return st;
  return WaitControl(ops, m, {0}, cancelled, timeout_ns);
}

}  // namespace gdrbench::agent::bench
