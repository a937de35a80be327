#include "controller/run/testing/nic_timeline.h"

#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gdrbench::controller::run {

class NicTimeline::Recorder final : public AgentApi {
 public:
  Recorder(NicTimeline* timeline, AgentApi* agent, std::string node)
      : timeline_(timeline), agent_(agent), node_(std::move(node)) {}

  absl::StatusOr<v1::NodeInfo> GetNodeInfo() override { return agent_->GetNodeInfo(); }
  absl::StatusOr<v1::PreflightReport> RunPreflight(const v1::RunPreflightRequest& r) override {
    return agent_->RunPreflight(r);
  }

  absl::Status OpenTarget(const v1::OpenTargetRequest& r, v1::OpenTargetResponse* resp) override {
    NicTimeline& tl = *timeline_;
    const std::string nic = Nic(r.device());
    std::string call;
    {
      std::unique_lock<std::mutex> lock(tl.mu_);
      if (tl.options_.open_waits_for_data.count() > 0 && tl.data_began_) {
        tl.data_cv_.wait_for(lock, tl.options_.open_waits_for_data, [&] { return tl.data_in_progress_ > 0; });
      }
      ++tl.opens_;
      if (tl.data_in_progress_ > 0) ++tl.opens_during_data_;
      call = absl::StrCat("open#", tl.next_call_++);
      tl.AddLocked(NicEvent::Kind::kOpenBegin, nic, call);
    }
    absl::Status st = agent_->OpenTarget(r, resp);
    std::lock_guard<std::mutex> lock(tl.mu_);
    if (st.ok()) {
      // Ids of their own: a fake may answer the same id for two targets of a NIC.
      std::string id = absl::StrCat(resp->target_id(), "#", call);
      tl.targets_[id] = {resp->target_id(), nic};
      resp->set_target_id(id);
      tl.AddLocked(NicEvent::Kind::kOpenEnd, nic, call, id);
    } else {
      tl.AddLocked(NicEvent::Kind::kOpenFailed, nic, call);
    }
    return st;
  }

  absl::Status RunWriteSweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                             const std::function<bool(v1::RunWriteSweepResponse&)>& on_message) override {
    return Sweep(r, timeout, on_message, nullptr);
  }
  absl::Status RunWriteSweepWithStop(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                                     const std::function<bool(v1::RunWriteSweepResponse&)>& on_message,
                                     StreamStop& stop) override {
    return Sweep(r, timeout, on_message, &stop);
  }

  absl::Status Sweep(const v1::RunWriteSweepRequest& r, std::chrono::milliseconds timeout,
                     const std::function<bool(v1::RunWriteSweepResponse&)>& on_message, StreamStop* stop) {
    NicTimeline& tl = *timeline_;
    const std::string nic = Nic(r.device());
    const bool held = r.wait_for_start();
    std::string target_nic;
    v1::RunWriteSweepRequest inner = r;
    {
      std::lock_guard<std::mutex> lock(tl.mu_);
      target_nic = tl.Translate(r.target_id(), inner.mutable_target_id());
      tl.AddLocked(NicEvent::Kind::kConnectBegin, nic, r.target_id());
      if (held) {
        // Its data begins when its target is started (ConnectTarget), or
        // now when that came first (the call's thread started late).
        ++tl.held_connects_;
        if (tl.data_in_progress_ > 0) ++tl.held_connects_during_data_;
        const bool started = tl.started_early_.erase(r.target_id()) > 0;
        tl.held_[r.target_id()] = {nic, started};
        if (started) {
          tl.AddLocked(NicEvent::Kind::kDataBegin, nic, r.target_id());
          tl.AddLocked(NicEvent::Kind::kDataBegin, target_nic, r.target_id());
          ++tl.data_in_progress_;
          tl.data_began_ = true;
        }
      } else {
        tl.AddLocked(NicEvent::Kind::kDataBegin, nic, r.target_id());
        tl.AddLocked(NicEvent::Kind::kDataBegin, target_nic, r.target_id());
        ++tl.data_in_progress_;
        tl.data_began_ = true;
      }
    }
    tl.data_cv_.notify_all();
    if (!held && tl.options_.data_time.count() > 0) std::this_thread::sleep_for(tl.options_.data_time);
    absl::Status st = stop != nullptr ? agent_->RunWriteSweepWithStop(inner, timeout, on_message, *stop)
                                      : agent_->RunWriteSweep(inner, timeout, on_message);
    bool data = !held;
    if (held) {
      std::lock_guard<std::mutex> lock(tl.mu_);
      data = tl.held_[r.target_id()].second;
      tl.held_.erase(r.target_id());
    }
    if (held && data && tl.options_.data_time.count() > 0) std::this_thread::sleep_for(tl.options_.data_time);
    std::lock_guard<std::mutex> lock(tl.mu_);
    if (data) {
      --tl.data_in_progress_;
      tl.AddLocked(NicEvent::Kind::kDataEnd, nic, r.target_id());
      tl.AddLocked(NicEvent::Kind::kDataEnd, target_nic, r.target_id());
    }
    tl.AddLocked(NicEvent::Kind::kConnectEnd, nic, r.target_id());
    return st;
  }

  absl::Status ConnectTarget(const v1::ConnectTargetRequest& r) override {
    NicTimeline& tl = *timeline_;
    v1::ConnectTargetRequest inner = r;
    {
      std::lock_guard<std::mutex> lock(tl.mu_);
      const std::string target_nic = tl.Translate(r.target_id(), inner.mutable_target_id());
      auto held = tl.held_.find(r.target_id());
      if (r.start() && held == tl.held_.end()) tl.started_early_.insert(r.target_id());
      if (r.start() && held != tl.held_.end() && !held->second.second) {
        // The target may tell its initiator to send from here on.
        held->second.second = true;
        tl.AddLocked(NicEvent::Kind::kDataBegin, held->second.first, r.target_id());
        tl.AddLocked(NicEvent::Kind::kDataBegin, target_nic, r.target_id());
        ++tl.data_in_progress_;
        tl.data_began_ = true;
      }
    }
    tl.data_cv_.notify_all();
    return agent_->ConnectTarget(inner);
  }
  absl::StatusOr<v1::VerifyTargetResponse> VerifyTarget(const v1::VerifyTargetRequest& r) override {
    v1::VerifyTargetRequest inner = r;
    {
      std::lock_guard<std::mutex> lock(timeline_->mu_);
      timeline_->Translate(r.target_id(), inner.mutable_target_id());
    }
    return agent_->VerifyTarget(inner);
  }

  absl::StatusOr<v1::CloseTargetResponse> CloseTarget(const std::string& id) override {
    NicTimeline& tl = *timeline_;
    std::string nic, inner;
    {
      std::lock_guard<std::mutex> lock(tl.mu_);
      nic = tl.Translate(id, &inner);
      tl.AddLocked(NicEvent::Kind::kCloseBegin, nic, id);
    }
    auto closed = agent_->CloseTarget(inner);
    std::lock_guard<std::mutex> lock(tl.mu_);
    tl.AddLocked(NicEvent::Kind::kCloseEnd, nic, id);
    return closed;
  }

 private:
  std::string Nic(const std::string& device) const { return absl::StrCat(node_, "/", device); }

  NicTimeline* timeline_;
  AgentApi* agent_;
  const std::string node_;
};

std::unique_ptr<AgentApi> NicTimeline::Wrap(AgentApi* agent, std::string node) {
  return std::make_unique<Recorder>(this, agent, std::move(node));
}

std::string NicTimeline::Translate(const std::string& id, std::string* inner) const {
  auto it = targets_.find(id);
  if (it == targets_.end()) {
    *inner = id;
    return "unknown target " + id;
  }
  *inner = it->second.first;
  return it->second.second;
}

void NicTimeline::AddLocked(NicEvent::Kind kind, std::string nic, std::string call, std::string target) {
  const uint64_t seq = events_.size();
  events_.push_back(NicEvent{kind, std::move(nic), std::move(call), seq, std::move(target)});
}

void NicTimeline::Add(NicEvent::Kind kind, std::string nic, std::string call, std::string target) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(kind, std::move(nic), std::move(call), std::move(target));
}

std::vector<NicEvent> NicTimeline::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

size_t NicTimeline::OpensDuringData() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_during_data_;
}

size_t NicTimeline::opens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_;
}

size_t NicTimeline::HeldConnectsDuringData() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_connects_during_data_;
}

size_t NicTimeline::held_connects() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_connects_;
}

absl::Status ValidateNicTimeline(const std::vector<NicEvent>& events, int max_targets) {
  using Kind = NicEvent::Kind;
  struct Nic {
    std::set<std::string> data;     // the calls moving data on it now
    std::set<std::string> opening;  // OpenTarget under way ("open#k")
    std::set<std::string> targets;  // opened, not yet closed (target ids)
    std::set<std::string> connections;  // initiators' RunWriteSweep calls under way
  };
  std::map<std::string, Nic> nics;
  for (const NicEvent& e : events) {
    Nic& n = nics[e.nic];
    switch (e.kind) {
      case Kind::kOpenBegin: n.opening.insert(e.call); break;
      case Kind::kOpenEnd:
        n.opening.erase(e.call);
        n.targets.insert(e.target);
        break;
      case Kind::kOpenFailed: n.opening.erase(e.call); break;
      case Kind::kDataBegin:
        if (!n.data.empty()) {
          return absl::FailedPreconditionError(absl::StrCat("NIC ", e.nic, ": data of ", e.call,
                                                            " began while data of ", *n.data.begin(),
                                                            " was moving (event ", e.seq, ")"));
        }
        n.data.insert(e.call);
        break;
      case Kind::kDataEnd: n.data.erase(e.call); break;
      case Kind::kConnectBegin:
        n.connections.insert(e.call);
        if (n.connections.size() > static_cast<size_t>(max_targets)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "NIC ", e.nic, " carries ", n.connections.size(), " initiator connections (",
              absl::StrJoin(n.connections, ", "), "), more than ", max_targets, " (event ", e.seq, ")"));
        }
        break;
      case Kind::kConnectEnd: n.connections.erase(e.call); break;
      case Kind::kCloseBegin: break;
      case Kind::kCloseEnd: n.targets.erase(e.call); break;
    }
    const size_t held = n.targets.size() + n.opening.size();
    if (held > static_cast<size_t>(max_targets)) {
      std::string names;
      for (const auto& t : n.targets) absl::StrAppend(&names, names.empty() ? "" : ", ", t);
      for (const auto& t : n.opening) absl::StrAppend(&names, names.empty() ? "" : ", ", t, " (opening)");
      return absl::FailedPreconditionError(absl::StrCat("NIC ", e.nic, " holds ", held, " targets (", names,
                                                        "), more than ", max_targets, " (event ", e.seq,
                                                        ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::controller::run
