// ScratchArena: a protobuf arena for the messages of one step of a loop that
// runs millions of times (one pair test of a sweep). Making a message is a
// pointer bump, and Reset() drops everything made since the last Reset at
// once while keeping the first block, so a steady-state step calls malloc
// and free not at all.
//
// Why not a reused heap message with Clear(): protobuf 3.21's generated
// Clear() deletes a heap message's singular sub-messages (PairResult's
// endpoints, summary and timestamp, a request's params, a oneof member), so
// every test re-created them with all their strings: about a third of the
// controller's cost per zero-time test at 1024 x 8 (bench/controller_scale).
//
// Messages made here must not be used after the next Reset(); copy one out
// (CopyFrom, a copy constructor) to keep it. Thread safety: none; keep one
// per thread (thread_local) and Reset it at the start of each step.
#pragma once

#include <cstddef>
#include <memory>

#include "google/protobuf/arena.h"

namespace gdrbench::controller::run {

class ScratchArena {
 public:
  // `block_bytes` covers one step's messages; a bigger step spills into
  // blocks that Reset gives back.
  explicit ScratchArena(size_t block_bytes = 64 << 10)
      : block_(new char[block_bytes]), arena_(Options(block_.get(), block_bytes)) {}
  ScratchArena(const ScratchArena&) = delete;
  ScratchArena& operator=(const ScratchArena&) = delete;

  template <typename T>
  T* Make() {
    return google::protobuf::Arena::CreateMessage<T>(&arena_);
  }
  void Reset() { arena_.Reset(); }

 private:
  static google::protobuf::ArenaOptions Options(char* block, size_t bytes) {
    google::protobuf::ArenaOptions o;
    o.initial_block = block;
    o.initial_block_size = bytes;
    return o;
  }
  std::unique_ptr<char[]> block_;  // outlives arena_ (declared first)
  google::protobuf::Arena arena_;
};

}  // namespace gdrbench::controller::run
