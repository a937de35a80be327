// The agent's own TCP listener in front of gRPC (issue 12, item 1 and 6).
//
// gRPC 1.51's accept loop stops for good after one accept4() EMFILE, and it
// binds with SO_REUSEPORT, so a second agent could share the port. This
// listener binds without SO_REUSEPORT (a port in use is an error at start),
// accepts on its own thread, and hands each connection to gRPC through an
// ExternalConnectionAcceptor (TLS and all happen in gRPC as before). It never
// stops on an error: EMFILE/ENFILE drain the backlog through a reserved fd,
// and a connection whose fd number reaches the fd budget (RLIMIT_NOFILE less
// limits::kReservedFds, at most limits::kMaxOpenFds, and about
// limits::kMaxConnections above the fds open when serving began) is closed
// at once: Linux hands out the lowest free number, so that many are open.
//
// Admission (agent/service/admission.h): every connection handed to gRPC is
// unauthenticated until Authenticate() names its peer (a call arrived on it).
// Unauthenticated connections past their deadline or their budgets are
// dropped with shutdown(2) on this thread; gRPC then reads EOF and closes
// its fd. A refusal summary is logged at most once per interval.
//
// Thread safety: Start/Stop from one thread; Authenticate from any thread
// (gRPC's); the accept loop is internal.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/service/admission.h"
#include "grpcpp/server_builder.h"

namespace gdrbench::agent::service {

class Listener {
 public:
  // Binds HOST:PORT (port 0: any free port; "0.0.0.0" and "[::]": every
  // address, IPv4 and IPv6). UNAVAILABLE naming the address and errno's
  // reason ("Address already in use") when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<Listener>> Bind(const std::string& address);
  ~Listener();

  int port() const { return port_; }
  // Starts accepting; connections go to `acceptor` (its server must be
  // started) when `admission` admits them. Connections shed by the fd
  // budget so far are counted in shed().
  void Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
             Admission admission);
  // Closes the listening sockets and joins the accept thread.
  void Stop();
  uint64_t shed() const { return shed_.load(); }
  // A call arrived from `grpc_peer` (ServerContext::peer(), "ipv4:A:P"):
  // its connection is authenticated from now on. Peers that are not ours
  // (another listener's, already authenticated) are ignored.
  void Authenticate(const std::string& grpc_peer);

 private:
  // A connection handed to gRPC, as accept() gave it: gRPC closes the fd,
  // and the number may then name another file; dev/ino tell them apart.
  struct Socket {
    int fd;
    dev_t dev;
    ino_t ino;
    bool handed;  // false: accepted in the current batch, not yet gRPC's
  };

  Listener() = default;
  void AcceptLoop();
  // Accepts a batch, then hands its survivors to gRPC.
  void AcceptOne(int listen_fd);
  void AcceptBatch(int listen_fd);
  // Admission of a connection accepted as `fd` from `peer` (queued in
  // pending_ for the hand-off).
  void Admit(int fd, const PeerAddress& peer);
  // accept() failed with EMFILE/ENFILE: takes one connection off the
  // backlog through the reserve fd and closes it.
  void DrainOne(int listen_fd);
  // Deadlines, the sweep of closed connections and the refusal summary.
  void Housekeeping();
  bool Alive(Admission::ConnId id) const;
  void ForgetSocket(Admission::ConnId id);
  void Drop(Admission::ConnId id);
  int PollTimeoutMs();

  std::vector<int> fds_;
  int port_ = 0;
  int wake_[2] = {-1, -1};  // a pipe: Stop() wakes the poll
  int reserve_fd_ = -1;     // closed to drain the backlog when out of fds
  int baseline_fd_ = 0;     // fd numbers below it were open before any connection
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::mutex mu_;                        // guards admission_ (Authenticate runs on gRPC's threads)
  std::optional<Admission> admission_;
  // The accept thread's own: the connections admission knows, by id and fd.
  std::unordered_map<Admission::ConnId, Socket> sockets_;
  std::unordered_map<int, Admission::ConnId> by_fd_;
  std::vector<Admission::ConnId> pending_;  // admitted in this batch, in order
  Admission::ConnId next_id_ = 1;
  std::chrono::steady_clock::time_point next_sweep_{};
  std::thread thread_;
  std::atomic<uint64_t> shed_{0};
};

// Raises this process's soft RLIMIT_NOFILE to its hard limit (systemd's
// default soft limit is 1024) and returns the soft limit now in force.
int64_t RaiseFileLimit();

}  // namespace gdrbench::agent::service
