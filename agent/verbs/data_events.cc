#include "agent/verbs/data_events.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::verbs {
namespace {

constexpr int kPollMs = 50;

bool IsCqEvent(int type) { return type == IBV_EVENT_CQ_ERR; }

std::string QpName(const ibv_qp* qp, size_t index, size_t count, const std::string& device) {
  return absl::StrCat("QP ", qp->qp_num, " (", index + 1, " of ", count, ") on ", device);
}

}  // namespace

std::string DataEventFault(int event_type, const void* element, const DataObjects& o) {
  if (element == nullptr) return "";
  if (IsCqEvent(event_type)) {
    const char* which = element == o.send_cq ? "send" : element == o.recv_cq ? "receive" : nullptr;
    if (which == nullptr) return "";
    return absl::StrCat("the ", which, " CQ of ", o.device,
                        " overran (IBV_EVENT_CQ_ERR): completions were lost, the test cannot count its WRITEs");
  }
  const char* what = nullptr;
  switch (event_type) {
    case IBV_EVENT_QP_FATAL: what = "failed (IBV_EVENT_QP_FATAL): the NIC moved it to the error state"; break;
    case IBV_EVENT_QP_REQ_ERR:
      what = "got an invalid request error (IBV_EVENT_QP_REQ_ERR): the peer broke the transport's rules";
      break;
    case IBV_EVENT_QP_ACCESS_ERR:
      what = "got a remote access error (IBV_EVENT_QP_ACCESS_ERR): a key or range was refused";
      break;
    default: return "";
  }
  for (size_t q = 0; q < o.qps.size(); ++q) {
    if (element == o.qps[q]) return absl::StrCat(QpName(o.qps[q], q, o.qps.size(), o.device), " ", what);
  }
  return "";
}

class DataEvents::Impl {
 public:
  struct Sub {
    DataObjects objects;
    const std::atomic<bool>* cancelled = nullptr;
    std::atomic<bool> stop{false};
    std::string fault;  // guarded by mu_
  };

  Impl() : wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (wake_ < 0) spdlog::warn("data events: eventfd failed; a test's watch is removed within {} ms", kPollMs);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Impl() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    Wake();
    thread_.join();
    if (wake_ >= 0) close(wake_);
  }

  Sub* Add(const DataObjects& objects, const std::atomic<bool>& cancelled) {
    std::lock_guard<std::mutex> l(mu_);
    if (objects.context != nullptr) {
      const int fd = objects.context->async_fd;
      const int flags = fcntl(fd, F_GETFL);
      if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        spdlog::warn("data events of {}: O_NONBLOCK on its async fd failed; its errors end the test "
                     "through its completions only", objects.device);
        subs_.emplace_back();
        subs_.back().cancelled = &cancelled;
        return &subs_.back();
      }
    }
    subs_.emplace_back();
    Sub* s = &subs_.back();
    s->objects = objects;
    s->cancelled = &cancelled;
    ++generation_;
    Wake();
    return s;
  }

  // Returns once the thread no longer polls or reads the sub's context.
  void Remove(Sub* s) {
    std::unique_lock<std::mutex> l(mu_);
    subs_.remove_if([s](const Sub& x) { return &x == s; });
    const uint64_t g = ++generation_;
    Wake();
    idle_.wait(l, [&] { return !polling_ || poll_generation_ >= g; });
  }

  std::string FaultOf(const Sub* s) {
    std::lock_guard<std::mutex> l(mu_);
    return s->fault;
  }

  void Wake() {
    if (wake_ < 0) return;
    const uint64_t one = 1;
    (void)!write(wake_, &one, sizeof one);
  }

  void Loop() {
    std::vector<pollfd> fds;
    std::vector<ibv_context*> contexts;
    for (;;) {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (done_) return;
        fds.clear();
        contexts.clear();
        for (const Sub& s : subs_) {
          ibv_context* c = s.objects.context;
          if (c == nullptr || std::find(contexts.begin(), contexts.end(), c) != contexts.end()) continue;
          contexts.push_back(c);
          fds.push_back(pollfd{c->async_fd, POLLIN, 0});
        }
        if (wake_ >= 0) fds.push_back(pollfd{wake_, POLLIN, 0});
        polling_ = true;
        poll_generation_ = generation_;
      }
      const int ready = poll(fds.data(), fds.size(), kPollMs);
      std::lock_guard<std::mutex> l(mu_);
      for (size_t i = 0; ready > 0 && i < contexts.size(); ++i) {
        if (fds[i].revents != 0 && Registered(contexts[i])) Drain(contexts[i]);
      }
      if (wake_ >= 0 && (fds.back().revents & POLLIN) != 0) {
        uint64_t n = 0;
        (void)!read(wake_, &n, sizeof n);
      }
      for (Sub& s : subs_) {
        if (s.cancelled->load(std::memory_order_relaxed)) s.stop = true;
      }
      polling_ = false;
      idle_.notify_all();
    }
  }

  bool Registered(const ibv_context* c) const {
    for (const Sub& s : subs_) {
      if (s.objects.context == c) return true;
    }
    return false;
  }

  // Under mu_: every pending event of `c`, to the sub whose object it names.
  void Drain(ibv_context* c) {
    ibv_async_event ev{};
    while (ibv_get_async_event(c, &ev) == 0) {
      const int type = ev.event_type;
      const void* element = IsCqEvent(type) ? static_cast<const void*>(ev.element.cq)
                                            : static_cast<const void*>(ev.element.qp);
      ibv_ack_async_event(&ev);
      for (Sub& s : subs_) {
        if (s.objects.context != c || !s.fault.empty()) continue;
        std::string f = DataEventFault(type, element, s.objects);
        if (f.empty()) continue;
        spdlog::warn("{}", f);
        s.fault = std::move(f);
        s.stop = true;
      }
    }
  }

  class Handle final : public DataWatch {
   public:
    Handle(Impl* impl, Sub* sub) : impl_(impl), sub_(sub) {}
    ~Handle() override { impl_->Remove(sub_); }
    const std::atomic<bool>& stop() const override { return sub_->stop; }
    std::string fault() const override { return impl_->FaultOf(sub_); }

   private:
    Impl* impl_;
    Sub* sub_;
  };

 private:
  const int wake_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::list<Sub> subs_;           // guarded by mu_
  uint64_t generation_ = 0;       // guarded by mu_: bumped by every Add and Remove
  uint64_t poll_generation_ = 0;  // guarded by mu_: generation_ when the last poll began
  bool polling_ = false;          // guarded by mu_
  bool done_ = false;             // guarded by mu_
  std::thread thread_;
};


std::unique_ptr<DataWatch> CancelOnlyDataWatch(const std::atomic<bool>& cancelled) {
  class CancelOnly final : public DataWatch {
   public:
    explicit CancelOnly(const std::atomic<bool>& c) : c_(c) {}
    const std::atomic<bool>& stop() const override { return c_; }
    std::string fault() const override { return ""; }

   private:
    const std::atomic<bool>& c_;
  };
  return std::make_unique<CancelOnly>(cancelled);
}

DataEvents::DataEvents() : impl_(std::make_unique<Impl>()) {}
DataEvents::~DataEvents() = default;

std::unique_ptr<DataWatch> DataEvents::Watch(const DataObjects& objects, const std::atomic<bool>& cancelled) {
  return std::make_unique<Impl::Handle>(impl_.get(), impl_->Add(objects, cancelled));
}

}  // namespace gdrbench::agent::verbs
