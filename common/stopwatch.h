// Time since a start point on the steady clock, for budgets and for the
// "after N ms" of log lines and errors.
//
//   const Stopwatch watch;
//   ... if (watch.ms() >= budget_ms) ...
#pragma once

#include <chrono>
#include <cstdint>

namespace gdrbench {

class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  int64_t ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gdrbench
