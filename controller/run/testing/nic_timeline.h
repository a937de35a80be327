// NicTimeline: what the runner actually did to each NIC, recorded from its
// calls through AgentApi, and a validator of NIC exclusivity over it (issue
// 30: set-up may overlap data, data never overlaps data on a NIC).
//
// NicTimeline::Wrap puts a recorder in front of an agent (the fake cluster's):
// every OpenTarget (a set-up: its NIC is the request's device), RunWriteSweep
// (the initiator's connection, on its NIC, from the call's start to its end)
// with its data phase (on the initiator's NIC and on the target's, the one
// that opened the request's target_id: from the call's start, or, for a
// sweep held with wait_for_start, from the ConnectTarget that starts its
// target, to the call's end; a held sweep never started moved no data) and
// CloseTarget is logged with its start and end, in one total order (a
// sequence number taken under one lock). RecordingOptions can stretch the
// calls so that phases have a length.
//
// ValidateNicTimeline fails (FAILED_PRECONDITION naming the NIC and both
// tests) when two data phases on one NIC overlap, or when a NIC holds more
// than `max_targets` targets at once (from the start of its OpenTarget to the
// end of its CloseTarget; a failed OpenTarget holds nothing) or more than
// `max_targets` initiator connections (RunWriteSweep calls).
// Thread safety: the wrapped agents may be called concurrently; events() and
// the validator after the calls.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "controller/run/agent_api.h"

namespace gdrbench::controller::run {

struct NicEvent {
  enum class Kind {
    kOpenBegin,
    kOpenEnd,
    kOpenFailed,
    kConnectBegin,  // an initiator's RunWriteSweep began (its NIC)
    kConnectEnd,
    kDataBegin,
    kDataEnd,
    kCloseBegin,
    kCloseEnd
  };
  Kind kind;
  std::string nic;     // "node/device"
  std::string call;    // which call: "open#3" (an OpenTarget) or the target id (the others)
  uint64_t seq = 0;    // the order of all events
  std::string target;  // kOpenEnd: the target id the OpenTarget made
};

struct RecordingOptions {
  // Each RunWriteSweep holds its data phase this long before answering.
  std::chrono::microseconds data_time{0};
  // Once a data phase has begun, each OpenTarget waits up to this long for
  // one to be in progress somewhere (on any NIC) before it is made: a set-up
  // the runner does ahead then lands inside the data phase it overlaps,
  // deterministically, while one done between data phases waits the whole
  // bound and lands outside every data phase. (Before the first data phase
  // nothing waits: the first round's tests open their own targets then.)
  std::chrono::milliseconds open_waits_for_data{0};
};

class NicTimeline {
 public:
  explicit NicTimeline(RecordingOptions options = {}) : options_(options) {}

  // A recorder in front of `agent` (not owned, must outlive it) of node `node`.
  std::unique_ptr<AgentApi> Wrap(AgentApi* agent, std::string node);
  // Appends an event by hand (a timeline for the validator's own tests).
  void Add(NicEvent::Kind kind, std::string nic, std::string call, std::string target = "");

  std::vector<NicEvent> events() const;
  // The OpenTarget calls that began while a data phase was in progress.
  size_t OpensDuringData() const;
  size_t opens() const;
  // RunWriteSweep calls held (wait_for_start) that began while a data phase
  // was in progress: initiators connected ahead of their data.
  size_t HeldConnectsDuringData() const;
  size_t held_connects() const;

 private:
  class Recorder;
  friend class Recorder;
  // The agent's id of the recorder's target `id` into `inner`; its NIC.
  std::string Translate(const std::string& id, std::string* inner) const;
  void AddLocked(NicEvent::Kind kind, std::string nic, std::string call, std::string target = "");

  const RecordingOptions options_;
  mutable std::mutex mu_;
  std::condition_variable data_cv_;
  std::vector<NicEvent> events_;
  // The recorder's target id -> the agent's, and the target's NIC.
  std::map<std::string, std::pair<std::string, std::string>> targets_;
  // Held sweeps: the recorder's target id -> the initiator's NIC, and
  // whether its data phase began (ConnectTarget with start).
  std::map<std::string, std::pair<std::string, bool>> held_;
  std::set<std::string> started_early_;  // started before their sweep's call began
  int data_in_progress_ = 0;
  bool data_began_ = false;
  size_t opens_ = 0, opens_during_data_ = 0;
  size_t held_connects_ = 0, held_connects_during_data_ = 0;
  uint64_t next_call_ = 0;
};

absl::Status ValidateNicTimeline(const std::vector<NicEvent>& events, int max_targets = 2);

}  // namespace gdrbench::controller::run
