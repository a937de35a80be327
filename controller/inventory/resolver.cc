#include "controller/inventory/resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"

namespace gdrbench::controller::inventory {

absl::StatusOr<std::vector<std::string>> SystemResolver::Resolve(absl::string_view name) const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one entry per address, not one per socket type
  addrinfo* res = nullptr;
  const std::string host(name);
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(res, &freeaddrinfo);
  if (rc == EAI_NONAME || rc == EAI_NODATA) {
    return absl::NotFoundError(absl::StrCat("'", host, "' has no address (", gai_strerror(rc), ")"));
  }
  if (rc == EAI_AGAIN) {
    return absl::UnavailableError(
        absl::StrCat("resolving '", host, "' failed temporarily (", gai_strerror(rc), ")"));
  }
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("resolving '", host, "': ", gai_strerror(rc)));
  }
  std::vector<std::string> out;
  for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    const void* src = nullptr;
    if (a->ai_family == AF_INET) {
      src = &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
    } else if (a->ai_family == AF_INET6) {
      src = &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
    } else {
      continue;
    }
    if (inet_ntop(a->ai_family, src, buf, sizeof buf) == nullptr) continue;
    if (std::find(out.begin(), out.end(), buf) == out.end()) out.emplace_back(buf);
  }
  if (out.empty()) return absl::NotFoundError(absl::StrCat("'", host, "' has no IPv4 or IPv6 address"));
  return out;
}

const Resolver& DefaultResolver() {
  static const SystemResolver* const kResolver = new SystemResolver();
  return *kResolver;
}

}  // namespace gdrbench::controller::inventory
