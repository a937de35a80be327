#include "controller/run/pair_stream.h"

#include <utility>

#include "controller/run/clear_keeping.h"

namespace gdrbench::controller::run {

Spares& ThreadSpares() {
  thread_local Spares spares;
  return spares;
}

v1::SweepSummary* SwapInSummary(v1::PairResult* r) {
  Spares& spares = ThreadSpares();
  if (!r->has_summary() && spares.summary != nullptr) r->set_allocated_summary(spares.summary.release());
  return r->mutable_summary();
}

namespace {

// Keeps the initiator's memory, registration and port counters of the
// summary it answered.
void TakeInitiatorSummary(v1::PairResult* r) {
  Assign(r->mutable_src()->mutable_memory_kind(), r->summary().memory_kind());
  Assign(r->mutable_src()->mutable_registration(), r->summary().registration());
  // The initiator's port counters: kept once, beside the target's.
  if (r->summary().has_counters()) {
    r->mutable_src_counters()->Swap(r->mutable_summary()->mutable_counters());
    r->mutable_summary()->clear_counters();
  }
}

}  // namespace

absl::Status StreamSweep(const PairSide& initiator, const PairSide& target,
                         const v1::RunWriteSweepRequest& sweep, std::chrono::milliseconds timeout,
                         const v1::OpenTargetResponse& opened,
                         absl::FunctionRef<void(bool, const absl::Status&)> answer, Stream& stream,
                         v1::PairResult* r, StreamStop* stop) {
  // The callback captures only this (one pointer: std::function keeps it
  // inline, no allocation per test).
  struct Ctx {
    Stream* stream;
    v1::PairResult* r;
    const v1::OpenTargetResponse* opened;
    const PairSide* target;
    absl::FunctionRef<void(bool, const absl::Status&)> answer;
  } ctx{&stream, r, &opened, &target, answer};
  std::function<bool(v1::RunWriteSweepResponse&)> on_message = [c = &ctx](v1::RunWriteSweepResponse& m) {
    Stream& s = *c->stream;
    // The first impossible answer ends the stream: dropped, never kept,
    // and the agent stops sweeping rather than run to the deadline.
    if (!s.bounds.Check(m).ok()) return false;
    if (m.has_connect()) {
      // Out of band: the initiator's QPs are up; the target brings its
      // own up and tells the initiator to start (in band, kReady; held:
      // once started).
      v1::ConnectTargetRequest req;
      req.set_target_id(c->opened->target_id());
      *req.mutable_initiator() = m.connect();
      s.connect_st = c->target->agent->ConnectTarget(req);
      c->answer(true, s.connect_st);
    }
    // Taken, not copied (agent_api.h: the stream's message is ours).
    if (m.has_size()) c->r->add_sizes()->Swap(m.mutable_size());
    if (m.has_summary()) {
      SwapInSummary(c->r)->Swap(m.mutable_summary());
      s.got_summary = true;
    }
    return true;
  };
  absl::Status st = stop != nullptr
                        ? initiator.agent->RunWriteSweepWithStop(sweep, timeout, on_message, *stop)
                        : initiator.agent->RunWriteSweep(sweep, timeout, on_message);
  // Stopped by us: the agent did answer (the impossible); not a failed call.
  if (!stream.bounds.first_error().ok() && absl::IsCancelled(st)) st = absl::OkStatus();
  answer(false, st);
  if (stream.got_summary) TakeInitiatorSummary(r);
  return st;
}

HeldSweep::HeldSweep(const PairSide& initiator, const PairSide& target, v1::RunWriteSweepRequest request,
                     std::chrono::milliseconds timeout, const v1::OpenTargetResponse& opened,
                     AnswerBounds bounds, std::function<void(bool, const absl::Status&)> on_answer)
    : initiator_{initiator.agent, std::string(initiator.name), std::string(initiator.device),
                 std::string(initiator.bind_address), std::string(initiator.memory)},
      target_{target.agent, std::string(target.name), std::string(target.device),
              std::string(target.bind_address), std::string(target.memory)},
      request_(std::move(request)),
      timeout_(timeout),
      opened_(opened),
      on_answer_(std::move(on_answer)),
      stream_{std::move(bounds), absl::OkStatus(), false} {
  thread_ = std::thread([this] {
    const PairSide in = initiator_.view(), tg = target_.view();
    auto answer = [this](bool is_target, const absl::Status& st) {
      on_answer_(is_target, st);
      if (!st.ok() && first_error_.ok()) first_error_ = st;
    };
    status_ = StreamSweep(in, tg, request_, timeout_, opened_, answer, stream_, &result_, &stop_);
  });
}

HeldSweep::~HeldSweep() { Abandon(); }

absl::Status HeldSweep::Start() {
  v1::ConnectTargetRequest req;
  req.set_target_id(opened_.target_id());
  req.set_start(true);
  absl::Status st = target_.agent->ConnectTarget(req);
  on_answer_(true, st);
  return st;
}

void HeldSweep::Abandon() {
  if (!thread_.joinable()) return;
  stop_.Stop();
  thread_.join();
}

absl::Status HeldSweep::Finish(v1::PairResult* r, Stream** stream, absl::Status* first_error) {
  if (thread_.joinable()) thread_.join();
  r->mutable_sizes()->Swap(result_.mutable_sizes());
  if (result_.has_summary()) SwapInSummary(r)->Swap(result_.mutable_summary());
  if (result_.has_src()) {
    Assign(r->mutable_src()->mutable_memory_kind(), result_.src().memory_kind());
    Assign(r->mutable_src()->mutable_registration(), result_.src().registration());
  }
  if (result_.has_src_counters()) r->mutable_src_counters()->Swap(result_.mutable_src_counters());
  *stream = &stream_;
  *first_error = first_error_;
  return status_;
}

}  // namespace gdrbench::controller::run
