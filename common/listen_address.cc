#include "common/listen_address.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gdrbench {

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view flag, absl::string_view address) {
  const std::string who = flag.empty() ? absl::StrCat("'", address, "'") : absl::StrCat(flag, " '", address, "'");
  auto fail = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(who, " is not HOST:PORT: ", why));
  };
  size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return fail("no ':PORT'");
  ListenAddress a;
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != absl::string_view::npos) {
    return fail("an IPv6 address needs brackets, as in [::1]:7070");
  }
  if (host.empty()) return fail("no host (0.0.0.0 or [::] for every address)");
  a.host = std::string(host);
  if (port.empty()) return fail("no port after ':'");
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return fail(absl::StrCat("port '", port, "' is not a number"));
  }
  int64_t p = 0;
  if (port.size() > 6 || !absl::SimpleAtoi(port, &p) || p > 65535) {
    return fail(absl::StrCat("port ", port, " is outside 0..65535 (0: any free port)"));
  }
  a.port = static_cast<int>(p);
  return a;
}

}  // namespace gdrbench
