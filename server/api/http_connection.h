// The HTTP side's connections, in front of cpp-httplib's parsing and routing
// (issue 31, item 1; docs/architecture.md, "The HTTP side under attack").
//
// cpp-httplib 0.11 (Debian 12) reads headers and bodies on a fixed pool of
// threads with a read timeout that restarts with every byte, and counts
// neither headers nor chunked body bytes; its limits are compile-time macros
// of the shared library. GatedServer keeps its request parser and router and
// replaces what lies around them (Server::process_and_close_socket is
// virtual, process_request protected):
//   * one thread per admitted connection, at most limits.max_connections in
//     all and limits.max_connections_per_address from one address; one over
//     either is shed at once (plaintext: a 503; TLS: closed), so slow or idle
//     clients cannot hold the threads another client needs;
//   * its own Stream (plaintext or TLS through OpenSSL on a non-blocking
//     socket) that enforces, per request, a total deadline for the TLS
//     handshake and the request line and headers (not restarted by a byte),
//     a byte budget and a line count for them, and, once the gate
//     (http_gate.h) admitted a body, the body's byte budget and deadline;
//   * the gate itself, run as the pre-routing handler: a request it refuses
//     is answered without a byte of its body read, and its connection closed
//     (a short lingering close, so the client reads the answer);
//   * keep-alive: limits.keep_alive_max_requests per connection, each after
//     at most limits.keep_alive_idle of silence.
// Stop: Shutdown(deadline) ends connections waiting for a request at once;
// requests in flight get until `deadline`, then every wait fails.
// Thread safety: as httplib::Server; Shutdown from any thread.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/api/auth.h"
#include "server/api/http_gate.h"
#include "server/metrics/metrics.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace gdrbench::server::api {

class GatedServer : public httplib::Server {
 public:
  struct Options {
    HttpLimits limits;
    std::vector<BodyRoute> body_routes;
    const Authorizer* auth = nullptr;
    SSL_CTX* tls = nullptr;                  // plaintext when null; must outlive the server
    metrics::Counters* counters = nullptr;   // requests_refused, connections_shed
  };
  explicit GatedServer(Options options);
  ~GatedServer() override;

  // Stops accepting (httplib::Server::stop) and ends the connections as
  // the header says; returns when every connection thread has ended.
  void Shutdown(std::chrono::steady_clock::time_point deadline);

  // After bind_to_port: the listen backlog raised from httplib's 5 (a burst
  // of connections would otherwise wait out SYN retransmits).
  void RaiseBacklog(int backlog);

  // The decoded-body limit the gate admitted for the request being served
  // on this thread (0 when it has no body).
  static uint64_t AdmittedBodyLimit();
  // Ends the connection this thread serves after the response: a handler
  // that stopped reading a body part way (the rest of it is still unread).
  static void CloseAfterResponse();
  const HttpLimits& limits() const { return options_.limits; }

  struct Stops;  // the two eventfds every wait polls

 protected:
  bool process_and_close_socket(socket_t sock) override;

 private:
  class ConnectionThreads;
  void InstallHooks();
  bool ClaimAddress(const std::string& ip);
  void ReleaseAddress(const std::string& ip);
  void Shed(int fd, const char* why);

  Options options_;
  std::shared_ptr<Stops> stops_;
  std::mutex mu_;
  std::map<std::string, int> per_address_;  // open connections by client address
  std::chrono::steady_clock::time_point hard_deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace gdrbench::server::api
