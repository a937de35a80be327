// The one validator of listen addresses ("HOST:PORT", "[V6]:PORT"; port 0:
// any free one) that every binary's listen flags go through, both when the
// flag is parsed (ListenAddressCheck in common/cli_exit.h) and when a server starts
// (ParseListenAddress), so that a mistake such as port 70000 is refused the
// same way everywhere instead of wrapping to 70000 - 65536 in one place.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gdrbench {

struct ListenAddress {
  std::string host;  // "0.0.0.0", "::" (brackets removed), "localhost"
  int port = 0;      // 0..65535; 0: the kernel picks one
};

// INVALID_ARGUMENT naming `flag` and the address, and what is wrong: no
// ":PORT", an empty host, a port that is not a number or outside 0..65535.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view flag, absl::string_view address);

}  // namespace gdrbench
