#include "agent/verbs/port_state.h"

#include <infiniband/verbs.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace gdrbench::agent::verbs {
namespace {

static_assert(static_cast<int>(PortState::kNop) == IBV_PORT_NOP);
static_assert(static_cast<int>(PortState::kDown) == IBV_PORT_DOWN);
static_assert(static_cast<int>(PortState::kInit) == IBV_PORT_INIT);
static_assert(static_cast<int>(PortState::kArmed) == IBV_PORT_ARMED);
static_assert(static_cast<int>(PortState::kActive) == IBV_PORT_ACTIVE);
static_assert(static_cast<int>(PortState::kActiveDefer) == IBV_PORT_ACTIVE_DEFER);

constexpr PortState kNamed[] = {PortState::kNop,   PortState::kDown,   PortState::kInit,
                                PortState::kArmed, PortState::kActive, PortState::kActiveDefer};

}  // namespace

PortState PortStateFromIbv(int code) { return code < 0 ? PortState::kUnread : static_cast<PortState>(code); }

int PortStateToIbv(PortState state) { return static_cast<int>(state); }

std::string PortStateName(PortState state) {
  switch (state) {
    case PortState::kUnread: return "";
    case PortState::kNop: return "PORT_NOP";
    case PortState::kDown: return "PORT_DOWN";
    case PortState::kInit: return "PORT_INIT";
    case PortState::kArmed: return "PORT_ARMED";
    case PortState::kActive: return "PORT_ACTIVE";
    case PortState::kActiveDefer: return "PORT_ACTIVE_DEFER";
  }
  return absl::StrCat("PORT_UNKNOWN(", static_cast<int>(state), ")");
}

PortState ParsePortState(std::string_view text) {
  std::string s =
      absl::AsciiStrToUpper(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  if (auto colon = s.find(':'); colon != std::string::npos) {  // sysfs: "4: ACTIVE"
    int code = 0;
    return absl::SimpleAtoi(s.substr(0, colon), &code) ? PortStateFromIbv(code) : PortState::kUnread;
  }
  absl::StrReplaceAll({{" ", "_"}}, &s);
  if (!absl::StartsWith(s, "PORT_")) s = "PORT_" + s;
  for (PortState p : kNamed) {
    if (PortStateName(p) == s) return p;
  }
  return PortState::kUnread;
}

}  // namespace gdrbench::agent::verbs
