#include "agent/preflight/runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/preflight/checks.h"
#include "common/status.h"

namespace gdrbench::agent::preflight {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

absl::Status CheckKnown(const std::vector<std::string>& only) {
  std::vector<std::string> ids = CheckIds();
  for (const auto& want : only) {
    if (std::find(ids.begin(), ids.end(), want) == ids.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown preflight check '", want,
                                                     "' (known: ", absl::StrJoin(ids, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

CheckResult RunOne(const CheckDef& def, Context& ctx) {
  int64_t t0 = NowNs();
  CheckResult r = def.run(ctx);
  r.id = def.id;
  r.duration_ns = NowNs() - t0;
  if (r.status == Status::kPass || r.status == Status::kSkip) r.remediation.clear();
  return r;
}

Report NewReport(const Context& ctx) {
  Report report;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  report.hostname = host;
  report.fs_root = ctx.fs().root();
  return report;
}

// The checks `only` selects, in report order.
std::vector<const CheckDef*> Selected(const std::vector<std::string>& only) {
  std::vector<const CheckDef*> out;
  for (const auto& def : AllChecks()) {
    if (only.empty() || std::find(only.begin(), only.end(), def.id) != only.end()) out.push_back(&def);
  }
  return out;
}

// Abandoned checks whose threads are still blocked, over every run.
std::atomic<int> g_stuck{0};

// One attempt: a worker thread running `todo` in order on one Context.
struct Attempt {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<CheckResult> results;
  int64_t current_started_ns = 0;
  bool done = false;
  bool abandoned = false;  // the waiter gave up: stop after the current check
};

void StartAttempt(std::shared_ptr<Attempt> a, std::shared_ptr<Context> ctx,
                  std::vector<const CheckDef*> todo) {
  {
    std::lock_guard lock(a->mu);
    a->current_started_ns = NowNs();
  }
  std::thread([a, ctx, todo = std::move(todo)] {
    for (const CheckDef* def : todo) {
      CheckResult r = RunOne(*def, *ctx);
      std::lock_guard lock(a->mu);
      if (a->abandoned) {
        g_stuck.fetch_sub(1);  // it came back after all
        return;
      }
      a->results.push_back(std::move(r));
      a->current_started_ns = NowNs();
      a->cv.notify_all();
    }
    std::lock_guard lock(a->mu);
    a->done = true;
    a->cv.notify_all();
  }).detach();
}

CheckResult Hung(const CheckDef& def, absl::Duration waited, bool run_deadline) {
  CheckResult r;
  r.id = def.id;
  r.status = Status::kFail;
  r.summary = absl::StrCat("did not finish within ", absl::FormatDuration(waited),
                           run_deadline ? " (the run's deadline)" : "",
                           ": blocked, most likely reading a hung driver or device file");
  r.remediation =
      "find the blocked read (cat /proc/$(pidof gdrbench-agent)/task/*/stack), fix or reset the device; "
      "restart the agent once it no longer hangs";
  r.duration_ns = absl::ToInt64Nanoseconds(waited);
  return r;
}

}  // namespace

absl::StatusOr<Report> RunPreflightBounded(const ContextFactory& make_context,
                                           const std::vector<std::string>& only, Deadlines d) {
  GDR_RETURN_IF_ERROR(CheckKnown(only));
  if (int stuck = g_stuck.load(); stuck >= limits::kMaxStuckChecks) {
    return absl::UnavailableError(absl::StrCat(
        stuck, " preflight checks of earlier runs are still blocked in the kernel (the most this agent "
        "keeps); fix the hung device or restart the agent before running preflight again"));
  }
  std::vector<const CheckDef*> todo = Selected(only);
  std::shared_ptr<Context> ctx = make_context();
  Report report = NewReport(*ctx);
  const int64_t start = NowNs();
  const int64_t run_end = start + absl::ToInt64Nanoseconds(d.run);
  size_t next = 0;
  while (next < todo.size()) {
    if (NowNs() >= run_end) {
      for (; next < todo.size(); ++next) {
        CheckResult r;
        r.id = todo[next]->id;
        r.status = Status::kSkip;
        r.summary = absl::StrCat("not run: the preflight run's ", absl::FormatDuration(d.run),
                                 " deadline passed");
        report.checks.push_back(std::move(r));
      }
      break;
    }
    if (!ctx) ctx = make_context();
    auto a = std::make_shared<Attempt>();
    StartAttempt(a, std::move(ctx), {todo.begin() + next, todo.end()});
    ctx = nullptr;
    std::unique_lock lock(a->mu);
    size_t seen = 0;
    bool hung = false, by_run = false;
    while (!a->done) {
      int64_t check_end = a->current_started_ns + absl::ToInt64Nanoseconds(d.check);
      int64_t until = std::min(check_end, run_end);
      a->cv.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(until - NowNs(), 0)));
      if (a->done || a->results.size() != seen) {
        seen = a->results.size();
        continue;
      }
      if (NowNs() >= until) {
        hung = true;
        by_run = until == run_end;
        a->abandoned = true;
        g_stuck.fetch_add(1);
        break;
      }
    }
    for (auto& r : a->results) report.checks.push_back(std::move(r));
    next += a->results.size();
    if (!hung) break;
    absl::Duration waited = absl::Nanoseconds(NowNs() - a->current_started_ns);
    report.checks.push_back(Hung(*todo[next], waited, by_run));
    ++next;
  }
  report.duration_ns = NowNs() - start;
  report.overall = Overall(report.checks);
  return report;
}

std::vector<std::string> CheckIds() {
  std::vector<std::string> ids;
  for (const auto& c : AllChecks()) ids.emplace_back(c.id);
  return ids;
}

absl::StatusOr<Report> RunPreflight(Context& ctx, const std::vector<std::string>& only) {
  GDR_RETURN_IF_ERROR(CheckKnown(only));
  Report report = NewReport(ctx);
  int64_t start = NowNs();
  for (const CheckDef* def : Selected(only)) report.checks.push_back(RunOne(*def, ctx));
  report.duration_ns = NowNs() - start;
  report.overall = Overall(report.checks);
  return report;
}

}  // namespace gdrbench::agent::preflight
