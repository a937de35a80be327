#include "server/api/http_connection.h"

#include <fcntl.h>
#include <openssl/ssl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/api/http_auth.h"
#include "server/api/http_json.h"
#include "server/api/http_stream.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::api {

// Written once each: `soft` when the server stops accepting (connections
// waiting for a request end), `hard` at the drain deadline (every wait ends).
struct GatedServer::Stops {
  int soft = eventfd(0, EFD_CLOEXEC);
  int hard = eventfd(0, EFD_CLOEXEC);
  ~Stops() {
    close(soft);
    close(hard);
  }
  static void Fire(int fd) {
    const uint64_t one = 1;
    (void)!::write(fd, &one, sizeof one);
  }
};

namespace {

using Clock = std::chrono::steady_clock;

thread_local HttpStream* t_stream = nullptr;  // the connection this thread serves
thread_local bool t_shed = false;             // set by ConnectionThreads: over the total cap

std::vector<std::string_view> Values(const httplib::Request& req, const char* name) {
  std::vector<std::string_view> v;
  auto [b, e] = req.headers.equal_range(name);
  for (auto it = b; it != e; ++it) v.push_back(it->second);
  return v;
}

void Refuse(httplib::Response& res, int status, const absl::Status& st) {
  res.status = status;
  res.set_header("Connection", "close");
  res.set_content(ErrorJson(st, status), "application/json");
}

// The answer for a request whose line, headers or body the stream refused
// (httplib answers those 400 without a body).
std::optional<std::pair<int, absl::Status>> FaultAnswer(StreamFault f, const HttpLimits& l, uint64_t limit) {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  switch (f) {
    case StreamFault::kHeaderTooLarge:
      return std::pair{431, absl::ResourceExhaustedError(absl::StrCat(
                                "the request line and headers are over ", l.max_header_bytes, " bytes"))};
    case StreamFault::kTooManyHeaders:
      return std::pair{431, absl::ResourceExhaustedError(absl::StrCat("more than ", l.max_headers, " header fields"))};
    case StreamFault::kHeaderTimeout:
      return std::pair{408, absl::DeadlineExceededError(absl::StrCat(
                                "the request line and headers did not arrive within ",
                                duration_cast<seconds>(l.header_timeout).count(), " s"))};
    case StreamFault::kBodyTooLarge:
      return std::pair{413, absl::ResourceExhaustedError(absl::StrCat(
                                "the chunked body is over the limit of ", limit, " bytes"))};
    case StreamFault::kBodyTimeout:
      return std::pair{408, absl::DeadlineExceededError("the request body did not arrive in time")};
    default: return std::nullopt;
  }
}

}  // namespace

// One thread per connection, at most limits.max_connections; one more is
// shed on the accepting thread (process_and_close_socket sees t_shed).
class GatedServer::ConnectionThreads : public httplib::TaskQueue {
 public:
  ConnectionThreads(GatedServer& server) : server_(server) {}

  void enqueue(std::function<void()> fn) override {
    bool admitted = false;
    {
      std::lock_guard l(mu_);
      if (live_ < server_.options_.limits.max_connections) {
        ++live_;
        admitted = true;
      }
    }
    if (admitted) {
      try {
        std::thread([this, fn = std::move(fn)]() mutable {
          fn();
          fn = nullptr;
          std::lock_guard l(mu_);
          --live_;
          cv_.notify_all();
        }).detach();
        return;
      } catch (const std::system_error& e) {
        spdlog::warn("HTTP: cannot start a connection thread ({}): connection shed", e.what());
        std::lock_guard l(mu_);
        --live_;
      }
    }
    t_shed = true;
    fn();
    t_shed = false;
  }

  void shutdown() override {
    Stops::Fire(server_.stops_->soft);
    Clock::time_point hard;
    {
      std::lock_guard g(server_.mu_);
      hard = server_.hard_deadline_;
    }
    std::unique_lock l(mu_);
    if (!cv_.wait_until(l, hard, [&] { return live_ == 0; })) {
      Stops::Fire(server_.stops_->hard);
      cv_.wait(l, [&] { return live_ == 0; });
    }
  }

 private:
  GatedServer& server_;
  std::mutex mu_;
  std::condition_variable cv_;
  int live_ = 0;
};

GatedServer::GatedServer(Options options) : options_(std::move(options)), stops_(std::make_shared<Stops>()) {
  new_task_queue = [this] { return new ConnectionThreads(*this); };
  InstallHooks();
}

GatedServer::~GatedServer() = default;

void GatedServer::Shutdown(Clock::time_point deadline) {
  {
    std::lock_guard l(mu_);
    hard_deadline_ = deadline;
  }
  stop();  // the listener closes; listen_after_bind's ConnectionThreads::shutdown waits for the rest
}

void GatedServer::RaiseBacklog(int backlog) {
  // listen() again on a listening socket sets its backlog (Linux).
  if (::listen(svr_sock_, backlog) != 0) spdlog::warn("HTTP: listen({}) failed: {}", backlog, std::strerror(errno));
}

uint64_t GatedServer::AdmittedBodyLimit() { return t_stream ? t_stream->decoded_limit() : 0; }

void GatedServer::CloseAfterResponse() {
  if (t_stream) t_stream->CloseAfterResponse();
}

void GatedServer::InstallHooks() {
  // The gate: before the body is read (httplib routes after this returns
  // Unhandled, and reads the body only then).
  auto gate = [this](const httplib::Request& req, httplib::Response& res) -> bool {
    HttpStream* s = t_stream;
    const std::string authorization = req.get_header_value("Authorization");
    const std::string cookie = req.get_header_value("Cookie");
    const std::string marker = req.get_header_value(kRequestHeader);
    GateRequest g{req.method, req.path, Values(req, "Content-Length"), Values(req, "Transfer-Encoding"),
                  authorization, cookie, marker};
    auto d = Admit(g, options_.body_routes, *options_.auth);
    if (auto* r = std::get_if<Refusal>(&d)) {
      if (options_.counters && (r->status == 401 || r->status == 403)) ++options_.counters->requests_refused;
      spdlog::warn("HTTP {} {} from {} refused before its body: {}", req.method, req.path.substr(0, 200),
                   req.remote_addr, r->message);
      if (r->unauthenticated) res.set_header("WWW-Authenticate", "Bearer");
      Refuse(res, r->status, absl::Status(r->code, r->message));
      if (s) s->CloseAfterResponse();
      return false;
    }
    const Admission& a = std::get<Admission>(d);
    if (a.framing == Admission::Framing::kNone) {
      // RFC 9112 section 6.3: no Content-Length and no Transfer-Encoding is
      // no body (httplib 0.11 would read a POST until the peer closes).
      if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) {
        const_cast<httplib::Request&>(req).set_header("Content-Length", "0");  // the server's own Request
      }
      return true;
    }
    // Chunked: the decoded limit, plus room for the chunks' framing.
    const uint64_t budget = a.framing == Admission::Framing::kLength ? a.length : a.max_bytes + a.max_bytes / 8 + (64 << 10);
    if (s) s->AdmitBody(budget, Clock::now() + BodyDeadline(options_.limits, budget), a.max_bytes);
    return true;
  };
  set_pre_routing_handler([gate](const httplib::Request& req, httplib::Response& res) {
    return gate(req, res) ? HandlerResponse::Unhandled : HandlerResponse::Handled;
  });
  set_expect_100_continue_handler([gate](const httplib::Request& req, httplib::Response& res) {
    return gate(req, res) ? 100 : res.status;
  });
  // A request the stream cut short: httplib answers 400 with no body. A
  // request no route takes: httplib answers 404 with no body; say so in the
  // API's JSON error, naming the route.
  set_error_handler(HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {
      res.set_content(ErrorJson(absl::NotFoundError(absl::StrCat("no route ", req.method, " ", req.path)), 404),
                      "application/json");
      return HandlerResponse::Handled;
    }
    HttpStream* s = t_stream;
    if (!s || res.status != 400 || !res.body.empty()) return HandlerResponse::Unhandled;
    auto answer = FaultAnswer(s->fault(), options_.limits, s->decoded_limit());
    if (!answer) return HandlerResponse::Unhandled;
    Refuse(res, answer->first, answer->second);
    s->CloseAfterResponse();
    return HandlerResponse::Handled;
  }));
}

bool GatedServer::ClaimAddress(const std::string& ip) {
  std::lock_guard l(mu_);
  int& n = per_address_[ip];
  if (n >= options_.limits.max_connections_per_address) {
    if (n == 0) per_address_.erase(ip);
    return false;
  }
  ++n;
  return true;
}

void GatedServer::ReleaseAddress(const std::string& ip) {
  std::lock_guard l(mu_);
  auto it = per_address_.find(ip);
  if (it != per_address_.end() && --it->second <= 0) per_address_.erase(it);
}

void GatedServer::Shed(int fd, const char* why) {
  if (options_.counters) ++options_.counters->connections_shed;
  if (!options_.tls) {
    const std::string body = ErrorJson(absl::UnavailableError(why), 503);
    const std::string answer = absl::StrCat("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
                                            "Content-Type: application/json\r\nContent-Length: ",
                                            body.size(), "\r\n\r\n", body);
    (void)!::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  const Clock::time_point accepted = Clock::now();
  if (t_shed) {
    Shed(sock, "the server is at its limit of open connections: try again");
    return false;
  }
  fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
  const HttpLimits& limits = options_.limits;
  std::unique_ptr<SSL, void (*)(SSL*)> ssl(options_.tls ? SSL_new(options_.tls) : nullptr, SSL_free);
  HttpStream strm(sock, ssl.get(), limits, stops_->soft, stops_->hard);
  std::string ip;
  int port = 0;
  strm.get_remote_ip_and_port(ip, port);
  if (!ClaimAddress(ip)) {
    Shed(sock, "too many open connections from this address: try again");
    return false;
  }
  t_stream = &strm;
  bool served = !options_.tls || (ssl && SSL_set_fd(ssl.get(), sock) == 1 &&
                                  strm.Handshake(accepted + limits.header_timeout));
  for (int n = 0; served && n < limits.keep_alive_max_requests; ++n) {
    if (n > 0 && !strm.AwaitRequest(limits.keep_alive_idle)) break;
    strm.StartRequest(n == 0 ? accepted + limits.header_timeout : Clock::now() + limits.header_timeout);
    bool closed = false;
    served = process_request(strm, n + 1 == limits.keep_alive_max_requests, closed, nullptr);
    strm.AnswerFault();
    if (closed || strm.close_after() || strm.fault() != StreamFault::kNone) break;
  }
  t_stream = nullptr;
  strm.Close();
  ::close(sock);
  ReleaseAddress(ip);
  return served;
}

}  // namespace gdrbench::server::api
