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
// Thread safety: Start/Stop from one thread; the accept loop is internal.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
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
  // started). Connections shed so far are counted in shed().
  void Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor);
  // Closes the listening sockets and joins the accept thread.
  void Stop();
  uint64_t shed() const { return shed_.load(); }

 private:
  Listener() = default;
  void AcceptLoop();
  void AcceptOne(int listen_fd);

  std::vector<int> fds_;
  int port_ = 0;
  int wake_[2] = {-1, -1};  // a pipe: Stop() wakes the poll
  int reserve_fd_ = -1;     // closed to drain the backlog when out of fds
  int baseline_fd_ = 0;     // fd numbers below it were open before any connection
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::thread thread_;
  std::atomic<uint64_t> shed_{0};
};

// Raises this process's soft RLIMIT_NOFILE to its hard limit (systemd's
// default soft limit is 1024) and returns the soft limit now in force.
int64_t RaiseFileLimit();

}  // namespace gdrbench::agent::service
