// Status helpers shared by every library: the early-return macros and the one
// place where C error conventions (errno, returned errno) become absl::Status.
#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GDR_CONCAT_INNER(a, b) a##b
#define GDR_CONCAT(a, b) GDR_CONCAT_INNER(a, b)

// Returns from the current function when `expr` is not OK.
#define GDR_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    if (::absl::Status _st = (expr); !_st.ok()) { \
      return _st;                                 \
    }                                             \
  } while (0)

// GDR_ASSIGN_OR_RETURN(auto x, MakeX()): binds the value or returns the status.
#define GDR_ASSIGN_OR_RETURN(lhs, expr) GDR_ASSIGN_OR_RETURN_IMPL(GDR_CONCAT(_statusor_, __LINE__), lhs, expr)
#define GDR_ASSIGN_OR_RETURN_IMPL(var, lhs, expr) \
  auto var = (expr);                              \
  if (!var.ok()) return std::move(var).status();  \
  lhs = std::move(var).value()

namespace gdrbench {

// Maps an errno value to the closest absl code, with "<what>: <strerror>" as message.
absl::Status ErrnoToStatus(int err, absl::string_view what);

}  // namespace gdrbench
