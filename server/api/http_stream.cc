#include "server/api/http_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::api {
namespace {

constexpr uint32_t kHeaderEnd = 0x0d0a0d0a;  // "\r\n\r\n"

void Address(const sockaddr_storage& ss, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

int RemainingMs(HttpStream::Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - HttpStream::Clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1 << 30));
}

}  // namespace

HttpStream::HttpStream(int fd, SSL* ssl, const HttpLimits& limits, int soft_stop, int hard_stop)
    : fd_(fd), ssl_(ssl), limits_(limits), soft_stop_(soft_stop), hard_stop_(hard_stop) {}

bool HttpStream::is_readable() const { return pos_ < len_ || (ssl_ && SSL_pending(ssl_) > 0); }

bool HttpStream::is_writable() const { return fault_ != StreamFault::kIo && fault_ != StreamFault::kStopped; }

void HttpStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t n = sizeof ss;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &n) == 0) Address(ss, ip, port);
}

void HttpStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t n = sizeof ss;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &n) == 0) Address(ss, ip, port);
}

// True when the socket is ready for `events`; false at the deadline (the
// caller names the fault) or when a stop signal fires (kStopped).
bool HttpStream::Wait(short events, Clock::time_point deadline, bool soft) {
  for (;;) {
    pollfd p[3] = {{fd_, events, 0}, {hard_stop_, POLLIN, 0}, {soft_stop_, POLLIN, 0}};
    const int n = ::poll(p, soft ? 3 : 2, RemainingMs(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fault_ = StreamFault::kIo;
      return false;
    }
    if (p[1].revents != 0 || (soft && p[2].revents != 0)) {
      fault_ = StreamFault::kStopped;
      return false;
    }
    if (p[0].revents != 0) return true;
    if (n == 0) return false;
  }
}

// Reads what the socket has into buf_ (empty on entry). 0: the peer closed;
// -1: a fault (named in fault_).
ssize_t HttpStream::Fill(Clock::time_point deadline, StreamFault on_timeout) {
  const bool soft = phase_ != Phase::kBody;  // a body being received finishes while the server drains
  for (;;) {
    short events = POLLIN;
    if (ssl_) {
      ERR_clear_error();
      const int n = SSL_read(ssl_, buf_, sizeof buf_);
      if (n > 0) {
        pos_ = 0;
        len_ = static_cast<size_t>(n);
        return n;
      }
      const int e = SSL_get_error(ssl_, n);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_WANT_WRITE) {
        events = POLLOUT;
      } else if (e != SSL_ERROR_WANT_READ) {
        fault_ = StreamFault::kIo;
        return -1;
      }
    } else {
      const ssize_t n = ::recv(fd_, buf_, sizeof buf_, 0);
      if (n >= 0) {
        pos_ = 0;
        len_ = static_cast<size_t>(n);
        return n;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        fault_ = StreamFault::kIo;
        return -1;
      }
    }
    if (!Wait(events, deadline, soft)) {
      if (fault_ == StreamFault::kNone) fault_ = on_timeout;
      return -1;
    }
  }
}

bool HttpStream::Handshake(Clock::time_point deadline) {
  for (;;) {
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) return true;
    const int e = SSL_get_error(ssl_, r);
    short events = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !Wait(events, deadline, true)) {
      if (fault_ == StreamFault::kNone) fault_ = StreamFault::kIo;
      return false;
    }
  }
}

bool HttpStream::AwaitRequest(std::chrono::milliseconds idle) {
  if (is_readable()) return true;
  return Wait(POLLIN, Clock::now() + idle, true);
}

void HttpStream::StartRequest(Clock::time_point deadline) {
  phase_ = Phase::kHeaders;
  deadline_ = deadline;
  header_bytes_ = body_bytes_ = body_budget_ = decoded_limit_ = 0;
  lines_ = 0;
  tail_ = 0;
  responded_ = false;
}

void HttpStream::AdmitBody(uint64_t budget, Clock::time_point deadline, uint64_t decoded_limit) {
  phase_ = Phase::kBody;
  body_budget_ = budget;
  deadline_ = deadline;
  decoded_limit_ = decoded_limit;
}

// Hands out the request line and headers a byte at a time (httplib's line
// reader asks for one): each counted against the budget and the line
// limit, and the first "\r\n\r\n" ends the phase.
ssize_t HttpStream::ReadHeaderBytes(char* out, size_t size) {
  size_t n = 0;
  while (n < size && phase_ == Phase::kHeaders) {
    if (pos_ == len_) {
      if (n > 0) break;
      const ssize_t got = Fill(deadline_, StreamFault::kHeaderTimeout);
      if (got <= 0) return got;
    }
    if (header_bytes_ >= limits_.max_header_bytes) {
      fault_ = StreamFault::kHeaderTooLarge;
      return -1;
    }
    const char c = buf_[pos_++];
    out[n++] = c;
    ++header_bytes_;
    tail_ = (tail_ << 8) | static_cast<uint8_t>(c);
    if (c == '\n' && ++lines_ > limits_.max_headers + 2) {  // the request line, the headers, the blank line
      fault_ = StreamFault::kTooManyHeaders;
      return -1;
    }
    if (tail_ == kHeaderEnd) phase_ = Phase::kGate;
  }
  return static_cast<ssize_t>(n);
}

ssize_t HttpStream::read(char* out, size_t size) {
  if (size == 0 || fault_ != StreamFault::kNone) return fault_ == StreamFault::kNone ? 0 : -1;
  if (phase_ == Phase::kHeaders) return ReadHeaderBytes(out, size);
  if (phase_ == Phase::kGate) {  // a body nobody admitted is never read, and the connection ends
    close_after_ = true;
    return -1;
  }
  if (body_bytes_ >= body_budget_) {
    fault_ = StreamFault::kBodyTooLarge;
    return -1;
  }
  if (pos_ == len_) {
    const ssize_t got = Fill(deadline_, StreamFault::kBodyTimeout);
    if (got <= 0) return got;
  }
  const size_t n = std::min<uint64_t>({size, len_ - pos_, body_budget_ - body_bytes_});
  std::memcpy(out, buf_ + pos_, n);
  pos_ += n;
  body_bytes_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t HttpStream::Send(const char* p, size_t n, Clock::time_point deadline) {
  size_t done = 0;
  while (done < n) {
    short events = POLLOUT;
    if (ssl_) {
      ERR_clear_error();
      const int w = SSL_write(ssl_, p + done, static_cast<int>(std::min<size_t>(n - done, 1 << 30)));
      if (w > 0) {
        done += static_cast<size_t>(w);
        continue;
      }
      const int e = SSL_get_error(ssl_, w);
      if (e == SSL_ERROR_WANT_READ) {
        events = POLLIN;
      } else if (e != SSL_ERROR_WANT_WRITE) {
        fault_ = StreamFault::kIo;
        return -1;
      }
    } else {
      const ssize_t w = ::send(fd_, p + done, n - done, MSG_NOSIGNAL);
      if (w >= 0) {
        done += static_cast<size_t>(w);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        fault_ = StreamFault::kIo;
        return -1;
      }
    }
    if (!Wait(events, deadline, false)) {
      if (fault_ == StreamFault::kNone) fault_ = StreamFault::kIo;
      return -1;
    }
  }
  return static_cast<ssize_t>(n);
}

ssize_t HttpStream::write(const char* p, size_t n) {
  if (fault_ == StreamFault::kIo || fault_ == StreamFault::kStopped) return -1;
  responded_ = true;
  // Each write must make progress within write_timeout (an event stream
  // writes rarely, a slow reader is dropped).
  return Send(p, n, Clock::now() + limits_.write_timeout);
}

void HttpStream::AnswerFault() {
  if (responded_) return;
  const char* line = nullptr;
  switch (fault_) {
    case StreamFault::kHeaderTimeout: line = "408 Request Timeout"; break;
    case StreamFault::kHeaderTooLarge:
    case StreamFault::kTooManyHeaders: line = "431 Request Header Fields Too Large"; break;
    default: return;  // nothing came, or nothing can be written
  }
  const std::string answer = absl::StrCat("HTTP/1.1 ", line, "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  const StreamFault f = fault_;
  fault_ = StreamFault::kNone;  // the request's fault; the socket still writes
  write(answer.data(), answer.size());
  fault_ = f;
  close_after_ = true;
}

void HttpStream::Close() {
  if (ssl_ && fault_ != StreamFault::kIo) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // close_notify, best effort: the peer's reply is not awaited
  }
  ::shutdown(fd_, SHUT_WR);
  if (close_after_ && fault_ != StreamFault::kIo) {
    const Clock::time_point until = Clock::now() + std::chrono::seconds(1);
    size_t drained = 0;
    char sink[16 << 10];
    while (drained < (1u << 20)) {
      const ssize_t n = ::recv(fd_, sink, sizeof sink, 0);
      if (n == 0) break;
      if (n > 0) {
        drained += static_cast<size_t>(n);
        continue;
      }
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !Wait(POLLIN, until, false)) break;
    }
  }
}

}  // namespace gdrbench::server::api
