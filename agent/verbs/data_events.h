// Errors the kernel reports on a test's own verbs objects: IBV_EVENT_CQ_ERR
// (a CQ overran: completions were lost, the loop would wait for them until
// its stall limit), IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR and
// IBV_EVENT_QP_ACCESS_ERR. They arrive as asynchronous events on the context
// that made the objects (a test's own for out of band, librdmacm's shared
// one of the device for rdma_cm), not on PortEvents' context: one thread per
// agent reads the async fd of every context a running test registered (the
// initiator's sweep, and the target's own part: its reverse sweep or latency
// responder, agent/service/target_registry.cc) and stops that side (its stop
// flag, read by the data loop once per poll) with the event named.
//
//   DataEvents events;                          // one per agent
//   auto w = events.Watch(session.data_objects(), cancelled);
//   RunSweep(..., w->stop(), ...);              // ends within ~50 ms of the event
//   if (!w->fault().empty()) ...                // "the send CQ of mlx5_0 overran (IBV_EVENT_CQ_ERR) ..."
//
// stop() is also set within ~50 ms of `cancelled`. A watch of no context (the
// fake NIC) stops on `cancelled` only. The context must outlive the watch
// (a watch is removed before the objects are destroyed: the thread never
// reads a context after Watch's handle is gone).
// Thread safety: Watch and the watches may be used from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

struct ibv_context;
struct ibv_cq;
struct ibv_qp;

namespace gdrbench::agent::verbs {

// A test's objects whose errors end it.
struct DataObjects {
  ibv_context* context = nullptr;  // the context that made them; null: none to watch
  std::string device;              // for the sentence
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  std::vector<ibv_qp*> qps;
};

// The sentence for an async event of type `event_type` on `element` (the
// event's cq or qp pointer) when it is an error of one of `objects`; empty
// otherwise (another test's object, or an event that is not an error).
std::string DataEventFault(int event_type, const void* element, const DataObjects& objects);

class DataWatch {
 public:
  virtual ~DataWatch() = default;
  virtual const std::atomic<bool>& stop() const = 0;
  virtual std::string fault() const = 0;  // empty while none
};

// A watch of `cancelled` alone.
std::unique_ptr<DataWatch> CancelOnlyDataWatch(const std::atomic<bool>& cancelled);

class DataEvents {
 public:
  DataEvents();
  ~DataEvents();  // stops and joins the thread
  DataEvents(const DataEvents&) = delete;
  DataEvents& operator=(const DataEvents&) = delete;

  std::unique_ptr<DataWatch> Watch(const DataObjects& objects, const std::atomic<bool>& cancelled);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gdrbench::agent::verbs
