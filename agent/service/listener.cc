#include "agent/service/listener.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/limits.h"
#include "common/listen_address.h"
#include "common/status.h"
#include "spdlog/spdlog.h"

namespace gdrbench::agent::service {
namespace {

absl::Status CannotListen(const std::string& address, int err) {
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", address, ": ", std::strerror(err),
                   err == EADDRINUSE ? " (is another gdrbench-agent serving it?)" : ""));
}

// A listening socket on `addr`; -1 with errno set on failure. No SO_REUSEPORT:
// a second process on the port must fail to bind.
int ListenOn(const sockaddr* addr, socklen_t len, bool dual_stack) {
  int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1, zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // restarts over TIME_WAIT
  if (addr->sa_family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int));
  }
  if (bind(fd, addr, len) != 0 || listen(fd, SOMAXCONN) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

void SetPort(sockaddr* a, int port) {
  if (a->sa_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(a)->sin_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in6*>(a)->sin6_port = htons(static_cast<uint16_t>(port));
  }
}

// The fds a connection may take: the soft file limit less the reserve, and
// never more than kMaxOpenFds. Read per accept: the limit can change
// (prlimit) while the agent runs.
int FdBudget(int baseline) {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  int64_t soft = rl.rlim_cur == RLIM_INFINITY ? limits::kMaxOpenFds : static_cast<int64_t>(rl.rlim_cur);
  return static_cast<int>(std::min<int64_t>({soft - limits::kReservedFds, limits::kMaxOpenFds,
                                             static_cast<int64_t>(baseline) + limits::kMaxConnections}));
}

constexpr auto kSweepInterval = std::chrono::seconds(1);
// Connections accepted and admitted together before gRPC gets the survivors.
constexpr int kAcceptBatch = 256;
// At most one line a minute about connections from peers that are not IPv4
// or IPv6 (none expected on a TCP listener).
void WarnOddPeer(const absl::Status& st) {
  static std::atomic<int64_t> last{-60};
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::steady_clock::now().time_since_epoch()).count();
  int64_t prev = last.load();
  if (now - prev < 60 || !last.compare_exchange_strong(prev, now)) return;
  spdlog::warn("closed a connection from an unexpected peer: {}", std::string(st.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Listener>> Listener::Bind(const std::string& address) {
  GDR_ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress("--listen", address));
  const std::string& host = listen.host;
  const int port = listen.port;

  std::unique_ptr<Listener> l(new Listener());
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    // Every address, as gRPC treats these wildcards: IPv6 dual-stack, or
    // IPv4 where the kernel has no IPv6.
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    SetPort(reinterpret_cast<sockaddr*>(&a6), port);
    int fd = ListenOn(reinterpret_cast<sockaddr*>(&a6), sizeof(a6), true);
    if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL)) {
      sockaddr_in a4{};
      a4.sin_family = AF_INET;
      a4.sin_addr.s_addr = htonl(INADDR_ANY);
      SetPort(reinterpret_cast<sockaddr*>(&a4), port);
      fd = ListenOn(reinterpret_cast<sockaddr*>(&a4), sizeof(a4), false);
    }
    if (fd < 0) return CannotListen(address, errno);
    l->fds_.push_back(fd);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", address, ": ", gai_strerror(rc)));
    }
    int err = 0;
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      // Port 0 on a name with several addresses: one port for all of them.
      if (!l->fds_.empty()) SetPort(ai->ai_addr, BoundPort(l->fds_.front()));
      int fd = ListenOn(ai->ai_addr, ai->ai_addrlen, false);
      if (fd < 0) {
        err = errno;
        continue;
      }
      l->fds_.push_back(fd);
    }
    freeaddrinfo(res);
    if (l->fds_.empty()) return CannotListen(address, err);
    // One address of several bound (a name whose IPv6 is off): as gRPC does.
  }
  l->port_ = BoundPort(l->fds_.front());
  return l;
}

Listener::~Listener() { Stop(); }

void Listener::Start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
                     Admission admission) {
  acceptor_ = std::move(acceptor);
  admission_.emplace(std::move(admission));
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  baseline_fd_ = reserve_fd_;  // the lowest free number once serving: connections start here
  thread_ = std::thread([this] { AcceptLoop(); });
}

void Listener::Stop() {
  if (thread_.joinable()) {
    if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
    thread_.join();
    for (int* fd : {&wake_[0], &wake_[1], &reserve_fd_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }
  // The port refuses from now on: a listening socket left open would let the
  // kernel complete handshakes that nobody accepts.
  for (int fd : fds_) close(fd);
  fds_.clear();
}

void Listener::Authenticate(const std::string& grpc_peer) {
  auto peer = PeerFromGrpc(grpc_peer);
  if (!peer.ok()) return;  // not a TCP peer: not one of ours
  std::lock_guard lock(mu_);
  if (admission_) admission_->Authenticate(peer->Key());
}

int Listener::PollTimeoutMs() {
  // Out of fds with no reserve to drain with: retry every 100 ms.
  if (reserve_fd_ < 0) return 100;
  auto now = std::chrono::steady_clock::now();
  auto next = next_sweep_;
  {
    std::lock_guard lock(mu_);
    if (auto deadline = admission_->NextDeadline(); deadline && *deadline < next) next = *deadline;
  }
  if (next <= now) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
}

void Listener::AcceptLoop() {
  std::vector<pollfd> pfds;
  for (int fd : fds_) pfds.push_back({fd, POLLIN, 0});
  pfds.push_back({wake_[0], POLLIN, 0});
  next_sweep_ = std::chrono::steady_clock::now() + kSweepInterval;
  for (;;) {
    int n = poll(pfds.data(), pfds.size(), PollTimeoutMs());
    if (n < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (pfds.back().revents != 0) return;  // Stop()
    if (reserve_fd_ < 0) reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (size_t i = 0; i + 1 < pfds.size(); ++i) {
      if (pfds[i].revents != 0) AcceptOne(pfds[i].fd);
    }
    Housekeeping();
  }
}

void Listener::AcceptOne(int listen_fd) {
  AcceptBatch(listen_fd);
  // gRPC gets what the batch left standing: in a flood most of a batch is
  // dropped for its later connections (budgets hold far fewer than
  // kAcceptBatch) and closed here, never set up and torn down by gRPC.
  for (Admission::ConnId id : pending_) {
    auto it = sockets_.find(id);
    if (it == sockets_.end()) continue;  // dropped within the batch
    it->second.handed = true;
    int one = 1;
    setsockopt(it->second.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
    p.listener_fd = listen_fd;
    p.fd = it->second.fd;
    acceptor_->HandleNewConnection(&p);  // gRPC owns the fd now
  }
  pending_.clear();
}

void Listener::AcceptBatch(int listen_fd) {
  for (int burst = 0; burst < kAcceptBatch; ++burst) {  // then poll again (Stop() stays prompt)
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd_ >= 0) {
        DrainOne(listen_fd);
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        spdlog::warn("accept on the agent port: {} (retrying)", std::strerror(errno));
      }
      return;
    }
    auto peer = PeerFromSockaddr(reinterpret_cast<sockaddr*>(&ss), len);
    if (!peer.ok()) {
      close(fd);
      WarnOddPeer(peer.status());
      continue;
    }
    // A number accept() hands out again is free: the connection that had it
    // was closed (by gRPC or its client).
    if (auto it = by_fd_.find(fd); it != by_fd_.end()) ForgetSocket(it->second);
    if (int budget = FdBudget(baseline_fd_); fd >= budget) {
      close(fd);
      ++shed_;
      std::lock_guard lock(mu_);
      admission_->CountRefused(*peer, DropReason::kFdBudget);
      continue;
    }
    Admit(fd, *peer);
  }
}

void Listener::DrainOne(int listen_fd) {
  // Free one fd to take the connection off the backlog and close it;
  // otherwise poll would report it forever.
  close(reserve_fd_);
  reserve_fd_ = -1;
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  int drop = accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (drop >= 0) {
    close(drop);
    ++shed_;
    if (auto peer = PeerFromSockaddr(reinterpret_cast<sockaddr*>(&ss), len); peer.ok()) {
      std::lock_guard lock(mu_);
      admission_->CountRefused(*peer, DropReason::kOutOfFds);
    }
  }
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void Listener::Admit(int fd, const PeerAddress& peer) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {  // cannot happen on a descriptor accept() just returned
    close(fd);
    return;
  }
  Admission::ConnId id = next_id_++;
  std::vector<Admission::Drop> drops;
  {
    std::lock_guard lock(mu_);
    drops = admission_->Admit(id, peer, std::chrono::steady_clock::now(),
                              [this](Admission::ConnId c) { return Alive(c); });
  }
  for (const auto& d : drops) Drop(d.id);
  sockets_[id] = {fd, st.st_dev, st.st_ino, false};
  by_fd_[fd] = id;
  pending_.push_back(id);
}

void Listener::Housekeeping() {
  auto now = std::chrono::steady_clock::now();
  std::vector<Admission::Drop> drops;
  std::optional<std::string> summary;
  {
    std::lock_guard lock(mu_);
    drops = admission_->Expire(now, [this](Admission::ConnId c) { return Alive(c); });
    summary = admission_->TakeSummary(now);
  }
  for (const auto& d : drops) Drop(d.id);
  if (summary) spdlog::warn("{}", *summary);
  if (now < next_sweep_) return;
  next_sweep_ = now + kSweepInterval;
  std::vector<Admission::ConnId> gone;
  for (const auto& [id, s] : sockets_) {
    if (!Alive(id)) gone.push_back(id);
  }
  for (Admission::ConnId id : gone) ForgetSocket(id);
}

bool Listener::Alive(Admission::ConnId id) const {
  auto it = sockets_.find(id);
  if (it == sockets_.end()) return false;
  if (!it->second.handed) return true;  // ours until the batch ends
  struct stat st {};
  return fstat(it->second.fd, &st) == 0 && st.st_dev == it->second.dev && st.st_ino == it->second.ino;
}

void Listener::ForgetSocket(Admission::ConnId id) {
  if (auto it = sockets_.find(id); it != sockets_.end()) {
    if (auto f = by_fd_.find(it->second.fd); f != by_fd_.end() && f->second == id) by_fd_.erase(f);
    sockets_.erase(it);
  }
  std::lock_guard lock(mu_);
  admission_->Forget(id);
}

void Listener::Drop(Admission::ConnId id) {
  auto it = sockets_.find(id);
  if (it == sockets_.end()) return;
  Socket s = it->second;
  if (auto f = by_fd_.find(s.fd); f != by_fd_.end() && f->second == id) by_fd_.erase(f);
  sockets_.erase(it);
  if (!s.handed) {  // still ours: gRPC never saw it
    close(s.fd);
    return;
  }
  // gRPC owns s.fd and may close it at any moment, after which the number
  // can name another file. A duplicate pins whatever the number names now;
  // its dev/ino say whether that is still our connection, and shutdown() on
  // the duplicate acts on that socket only: no window in which another
  // file could be shut down. gRPC sees EOF and closes its fd; the socket
  // goes when both are closed.
  int dup = fcntl(s.fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0 && (errno == EMFILE || errno == ENFILE) && reserve_fd_ >= 0) {
    close(reserve_fd_);
    dup = fcntl(s.fd, F_DUPFD_CLOEXEC, 0);
    reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (dup < 0) return;  // EBADF: gRPC closed it already
  struct stat st {};
  if (fstat(dup, &st) == 0 && st.st_dev == s.dev && st.st_ino == s.ino) shutdown(dup, SHUT_RDWR);
  close(dup);
}

int64_t RaiseFileLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit want = rl;
    want.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
  }
  return rl.rlim_cur == RLIM_INFINITY ? -1 : static_cast<int64_t>(rl.rlim_cur);
}

}  // namespace gdrbench::agent::service
