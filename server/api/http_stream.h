// One HTTP connection's byte stream for cpp-httplib's parser (http_connection.h):
// plaintext or TLS (OpenSSL) over a non-blocking socket, every wait a
// poll() against a deadline and the server's stop signals. Per request it
// enforces a total deadline, a byte budget and a line count for the request
// line and headers, and, once admitted, the body's byte budget and
// deadline; what it refused is its fault().
// Thread safety: one connection thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "server/api/http_gate.h"

typedef struct ssl_st SSL;

namespace gdrbench::server::api {

enum class StreamFault {
  kNone,
  kHeaderTooLarge,   // line and headers past limits.max_header_bytes
  kTooManyHeaders,   // more than limits.max_headers header lines
  kHeaderTimeout,    // line and headers not complete within limits.header_timeout
  kBodyTooLarge,     // a chunked body past its budget
  kBodyTimeout,      // a body not complete within its deadline
  kStopped,          // the server is stopping
  kIo,               // the peer went away, or a TLS error
};

class HttpStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  // `soft_stop` ends waits for a request; `hard_stop` ends every wait.
  HttpStream(int fd, SSL* ssl, const HttpLimits& limits, int soft_stop, int hard_stop);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // The TLS handshake, within `deadline`.
  bool Handshake(Clock::time_point deadline);
  // Waits up to `idle` for the next request's first byte.
  bool AwaitRequest(std::chrono::milliseconds idle);
  // A request begins: its line and headers must be complete by `deadline`.
  void StartRequest(Clock::time_point deadline);
  // The gate admitted a body: at most `budget` bytes (as sent: chunk
  // framing included), all of them by `deadline`.
  void AdmitBody(uint64_t budget, Clock::time_point deadline, uint64_t decoded_limit);
  uint64_t decoded_limit() const { return decoded_limit_; }

  StreamFault fault() const { return fault_; }
  bool responded() const { return responded_; }
  // The answer is written and the connection ends (a refused request).
  void CloseAfterResponse() { close_after_ = true; }
  bool close_after() const { return close_after_; }
  // Writes a bare answer when httplib wrote none for the fault (408, 431).
  void AnswerFault();
  // Ends the connection: TLS close_notify, then, after a refusal, reads
  // and discards what the client still sends for a moment (at most 1 s and
  // 1 MiB) so that it reads the answer before the socket closes.
  void Close();

 private:
  enum class Phase { kHeaders, kGate, kBody };
  ssize_t Fill(Clock::time_point deadline, StreamFault on_timeout);
  bool Wait(short events, Clock::time_point deadline, bool soft);
  ssize_t Send(const char* p, size_t n, Clock::time_point deadline);
  ssize_t ReadHeaderBytes(char* out, size_t size);

  int fd_;
  SSL* ssl_;
  const HttpLimits& limits_;
  int soft_stop_, hard_stop_;
  char buf_[16 << 10];
  size_t pos_ = 0, len_ = 0;
  Phase phase_ = Phase::kHeaders;
  Clock::time_point deadline_;
  uint64_t header_bytes_ = 0, body_bytes_ = 0, body_budget_ = 0, decoded_limit_ = 0;
  int lines_ = 0;
  uint32_t tail_ = 0;  // the last 4 header bytes: "\r\n\r\n" ends the headers
  StreamFault fault_ = StreamFault::kNone;
  bool responded_ = false, close_after_ = false;
};

}  // namespace gdrbench::server::api
