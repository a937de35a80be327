// The initiator's side of one pair test (pair_tester.h): its RunWriteSweep
// stream, run inline by RunPairTest, or started ahead of its test and held
// (HeldSweep) while the test before moves data on the NICs.
// Internal to controller/run: pair_tester.cc is its only user.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "controller/run/agent_api.h"
#include "controller/run/answer_bounds.h"
#include "controller/run/pair_tester.h"
#include "gdrbench/v1/run.pb.h"

namespace gdrbench::controller::run {

// This thread's spare sub-messages (RecycleResult).
struct Spares {
  std::unique_ptr<v1::SweepSummary> summary;
  std::unique_ptr<google::protobuf::Timestamp> started_at;
};
Spares& ThreadSpares();

// The result's summary, the spare (as it was left: its content is swapped
// away at once) when it has none.
v1::SweepSummary* SwapInSummary(v1::PairResult* r);

// What the initiator's stream leaves behind.
struct Stream {
  AnswerBounds bounds;
  absl::Status connect_st;  // out of band: ConnectTarget with the initiator's half
  bool got_summary = false;
};

// Runs the initiator's sweep against the `opened` target, taking its answers
// into `r` (sizes, summary, the initiator's memory, registration and port
// counters) and `stream`; the call's status. Out of band its first message
// goes to the target's agent (ConnectTarget). `stop` (may be null) ends it
// from another thread.
absl::Status StreamSweep(const PairSide& initiator, const PairSide& target,
                         const v1::RunWriteSweepRequest& sweep, std::chrono::milliseconds timeout,
                         const v1::OpenTargetResponse& opened,
                         absl::FunctionRef<void(bool, const absl::Status&)> answer, Stream& stream,
                         v1::PairResult* r, StreamStop* stop = nullptr);

// The initiator's stream of a test whose target answered start_held, started
// ahead on a thread of its own with wait_for_start: the initiator connects
// (rdma_cm: address, route and connection; out of band: its QPs, handed to
// the target at once) while the test before may still move data on these
// NICs. No data moves until Start (ConnectTarget with start on the target's
// agent, which then sends kReady), which the test's runner calls only once
// the NICs' data phases before it have ended.
// Thread safety: Start, Finish and Abandon from one thread; on_answer is
// called from the stream's thread too.
class HeldSweep {
 public:
  // `opened` (the target's answer) must outlive this object; the sides are
  // copied. `request` has wait_for_start set; `timeout` bounds the stream,
  // its wait included.
  HeldSweep(const PairSide& initiator, const PairSide& target, v1::RunWriteSweepRequest request,
            std::chrono::milliseconds timeout, const v1::OpenTargetResponse& opened, AnswerBounds bounds,
            std::function<void(bool target, const absl::Status&)> on_answer);
  ~HeldSweep();  // Abandon, unless Finish ran

  // Tells the target its initiator may send: the test's data phase begins.
  absl::Status Start();
  // Waits for the stream's end, then moves its answers into `r` (as
  // StreamSweep would have); the call's status. `stream` then holds what the
  // stream left behind, `first_error` the first failed RPC of the stream's.
  absl::Status Finish(v1::PairResult* r, Stream** stream, absl::Status* first_error);
  // The test will not run: the stream is stopped (no data moved) and joined.
  void Abandon();

 private:
  struct Side {
    AgentApi* agent;
    std::string name, device, bind_address, memory;
    PairSide view() const { return PairSide{agent, name, device, bind_address, memory}; }
  };

  const Side initiator_, target_;
  const v1::RunWriteSweepRequest request_;
  const std::chrono::milliseconds timeout_;
  const v1::OpenTargetResponse& opened_;
  const std::function<void(bool, const absl::Status&)> on_answer_;
  StreamStop stop_;
  // Written by the stream's thread, read after it is joined.
  Stream stream_;
  v1::PairResult result_;
  absl::Status status_, first_error_;
  std::thread thread_;  // last: started after everything it uses
};

}  // namespace gdrbench::controller::run
