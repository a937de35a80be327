// Reused messages for a loop that runs millions of times (one pair test of a
// sweep): one heap message per thread, readied for the next step by
// ClearKeeping, which clears it as Clear() does but keeps the named singular
// sub-messages allocated. Their strings keep their capacity, so setting the
// same fields again allocates nothing (and strings of up to 15 bytes live
// inside std::string anyway).
//
// Why not Clear() alone: protobuf 3.21's generated Clear() deletes a heap
// message's singular sub-messages (PairResult's endpoints, a request's
// params), so every test re-created them with all their strings. Why not a
// protobuf arena: each string set
// on an arena message is an arena allocation with a destructor registered and
// run at Reset; the arena's allocation, cleanup and thread-cache look-ups
// were a quarter of the controller's samples at 128 x 8
// (bench/results/2026-12-01-controller-journal-2.txt).
//
// A message readied here must not be kept past the next step; copy it out to
// keep it. Thread safety: none; keep one per thread (thread_local).
#pragma once

#include <string>
#include <tuple>

#include "absl/strings/string_view.h"

namespace gdrbench::controller::run {

// `m->Clear()`, keeping the sub-messages `Keep` names (pointers to the
// message's release_x and set_allocated_x), each itself cleared. Ones not
// yet allocated stay absent. Example:
//   ClearKeeping(&r, Keep{&v1::PairResult::release_src, &v1::PairResult::set_allocated_src});
template <typename M, typename Sub>
struct Keep {
  Sub* (M::*release)();
  void (M::*set_allocated)(Sub*);
};

template <typename M, typename... Subs>
void ClearKeeping(M* m, Keep<M, Subs>... keep) {
  auto kept = std::make_tuple((m->*(keep.release))()...);
  m->Clear();
  std::apply(
      [&](auto*... sub) {
        ((sub != nullptr ? sub->Clear() : void()), ...);
        ((m->*(keep.set_allocated))(sub), ...);
      },
      kept);
}

// A string field set from a view, in its kept storage: `Assign(m.mutable_x(), v)`.
// protobuf 3.21's set_x(data, size) builds a temporary std::string first
// (ArenaStringPtr::Set(const char*, size_t)): twice the work per field, and a
// pair test sets a dozen.
inline void Assign(std::string* field, absl::string_view value) { field->assign(value.data(), value.size()); }

// `m`'s string field (its getter and mutable accessor) set to `value`,
// touched only when it differs: a reused message keeps most of its strings
// from one test to the next (the same pair on the next rail, the same bind
// address and memory), and reading one is far cheaper than the mutable
// accessor and the copy. Example:
//   AssignField<&v1::OpenTargetRequest::device, &v1::OpenTargetRequest::mutable_device>(open, nic);
template <auto Get, auto Mutable, typename M>
void AssignField(M* m, absl::string_view value) {
  if ((m->*Get)() != value) Assign((m->*Mutable)(), value);
}

}  // namespace gdrbench::controller::run
