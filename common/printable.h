// Text from elsewhere (an agent's hostname, a name in an inventory) made
// safe to print: control bytes (NUL, ESC, newline, ...) and DEL become
// \xNN, so a hostile name cannot clear a terminal, forge a line of a report
// or cut a C string; at most `max_bytes` kept, then "...".
// Thread safety: pure function.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace gdrbench {

std::string Printable(absl::string_view text, size_t max_bytes = 256);

// Whether Printable would change `text` (no control bytes, not too long).
bool IsPrintable(absl::string_view text, size_t max_bytes = 256);

}  // namespace gdrbench
