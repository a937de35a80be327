// Internal to `gdrbench sweep`: printing the plan and the progress.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "controller/run/plan.h"
#include "controller/run/runner.h"
#include "controller/schedule/schedule.h"

namespace gdrbench::controller::cli {

// The plan: every round with its pairs and rails, and the estimated duration.
// Streams to `out` (works for any inventory size).
void PrintPlanText(const run::Plan& plan, const schedule::EstimateParams& est, std::FILE* out);
void PrintPlanJson(const run::Plan& plan, const schedule::EstimateParams& est, std::FILE* out);

std::string JsonEscape(const std::string& s);

// Renders runner progress: a bar with ETA (terminal) or JSON lines, at most
// every `interval` plus the last one. Not thread-safe (the runner serializes).
class ProgressPrinter {
 public:
  enum class Style { kBar, kJson, kNone };
  ProgressPrinter(Style style, std::FILE* out, std::chrono::milliseconds interval)
      : style_(style), out_(out), interval_(interval) {}
  void Update(const run::Progress& p);
  void Finish();

 private:
  Style style_;
  std::FILE* out_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool drew_ = false;
};

}  // namespace gdrbench::controller::cli
