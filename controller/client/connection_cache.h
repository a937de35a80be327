// ConnectionCache: connections (gRPC channels, each its own TCP and TLS
// connection) keyed by peer, at most `capacity` open at once whatever the
// number of peers, so a controller's file descriptors follow its parallelism,
// not its fleet.
//
// A caller takes a connection for one call with Acquire and holds the Lease
// while the call runs (a stream: its whole length). A connection nobody
// holds stays open, idle, for the next call to its peer; when a new one is
// needed and `capacity` are open, an idle one is closed: of those not used
// within the last `capacity` acquisitions, the most recently used; when all
// were, the least recently used. (A sweep visits every agent once a round,
// in the same kind of order each round: least recently used would close
// each agent's connection just before its next round needs it; this keeps
// a stable set open across rounds, while the connections of the tests
// running now and just before are kept as least recently used would keep
// them.) A connection in use is never closed under its caller: when every
// open one is in use, Acquire opens one more rather than wait (a caller
// holding one lease may ask for a second, and waiting could deadlock), and
// the excess is closed as soon as leases come back. So at most
// max(capacity, leases held at once) are open: size `capacity` to the
// leases the callers hold at once (a pair test holds its two agents').
//
// Thread safety: Acquire and stats may be called concurrently; a Lease is
// used and released by one thread at a time, before the cache is destroyed.
// The factory runs under the cache's lock (opening a gRPC channel does not
// connect: that happens on its first call), and connections are closed
// (destroyed) under it too, before another is opened: the bound holds for
// the connections that exist, not only for those the cache lists.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/status/statusor.h"

namespace gdrbench::controller {

template <typename Connection>
class ConnectionCache {
 public:
  using Factory = std::function<absl::StatusOr<std::unique_ptr<Connection>>(const std::string& key)>;

  struct Stats {
    size_t open = 0;       // now
    size_t most_open = 0;  // at once, since the cache was made
    uint64_t opened = 0;   // in all (a reopened peer counts again)
    uint64_t closed = 0;   // evicted for room
  };

 private:
  struct Entry {
    std::string key;
    std::unique_ptr<Connection> connection;
    uint32_t leases = 0;
    uint64_t last_used = 0;                        // the acquisition count when last taken or handed back
    typename std::list<Entry*>::iterator idle_at;  // valid while leases == 0
  };

 public:
  // Hands a connection back to its cache when destroyed. Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept : cache_(std::exchange(other.cache_, nullptr)), entry_(other.entry_) {}
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        Release();
        cache_ = std::exchange(other.cache_, nullptr);
        entry_ = other.entry_;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    Connection& operator*() const { return *entry_->connection; }
    Connection* operator->() const { return entry_->connection.get(); }

   private:
    friend class ConnectionCache;
    Lease(ConnectionCache* cache, Entry* entry) : cache_(cache), entry_(entry) {}
    void Release() {
      if (cache_ != nullptr) std::exchange(cache_, nullptr)->Return(entry_);
    }
    ConnectionCache* cache_;
    Entry* entry_;
  };

  // `capacity` 0 counts as 1. `factory` opens a connection to a key; its
  // error is Acquire's.
  ConnectionCache(size_t capacity, Factory factory)
      : capacity_(capacity == 0 ? 1 : capacity), factory_(std::move(factory)) {}
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  size_t capacity() const { return capacity_; }

  // The open connection to `key`, or a new one (closing the least recently
  // used idle connection first when `capacity` are open). Errors: the
  // factory's.
  absl::StatusOr<Lease> Acquire(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    ++acquisitions_;
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      Entry* e = it->second.get();
      if (e->leases++ == 0) idle_.erase(e->idle_at);
      e->last_used = acquisitions_;
      return Lease(this, e);
    }
    EvictDownTo(capacity_ - 1);
    absl::StatusOr<std::unique_ptr<Connection>> made = factory_(key);
    if (!made.ok()) return made.status();
    auto entry = std::make_unique<Entry>();
    entry->key = key;
    entry->connection = std::move(*made);
    entry->leases = 1;
    entry->last_used = acquisitions_;
    Entry* e = entry.get();
    entries_.emplace(key, std::move(entry));
    ++stats_.opened;
    stats_.most_open = std::max(stats_.most_open, entries_.size());
    return Lease(this, e);
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    Stats s = stats_;
    s.open = entries_.size();
    return s;
  }

 private:
  void Return(Entry* e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (--e->leases == 0) {
      e->last_used = acquisitions_;
      e->idle_at = idle_.insert(idle_.end(), e);  // most recently used last
    }
    EvictDownTo(capacity_);
  }

  // The idle connection to close (idle_ not empty): the most recently used
  // of those not used within the last capacity_ acquisitions, else the
  // least recently used. idle_ is ordered by last_used, so the old ones are
  // its front: the last of them is the one.
  typename std::list<Entry*>::iterator Victim() {
    for (auto it = idle_.end(); it != idle_.begin();) {
      --it;
      if ((*it)->last_used + capacity_ < acquisitions_) return it;
    }
    return idle_.begin();
  }

  // Closes idle connections (Victim) until at most `limit` are open or none
  // is idle. Under mu_.
  void EvictDownTo(size_t limit) {
    while (entries_.size() > limit && !idle_.empty()) {
      auto at = Victim();
      Entry* victim = *at;
      idle_.erase(at);
      entries_.erase(entries_.find(victim->key));  // not erase(key): the key lives in the entry
      ++stats_.closed;
    }
  }

  const size_t capacity_;
  const Factory factory_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
  std::list<Entry*> idle_;  // leases == 0, least recently used first
  uint64_t acquisitions_ = 0;
  Stats stats_;
};

}  // namespace gdrbench::controller
