// An agent's HOST:PORT, within the inventory library.
#pragma once

#include <string>

namespace gdrbench::controller::inventory {

// "host:port", or "[v6]:port" for an IPv6 address.
std::string WithPort(const std::string& host, int port);

}  // namespace gdrbench::controller::inventory
