// libFuzzer: the sweep journal reader (controller/run/journal.h), which
// `gdrbench sweep --resume` and `gdrbench runs upload` point at files that a
// killed controller, a full disk or a careless copy left behind. Two shapes
// from one input: the bytes as a file (format 1 or 2, torn, garbled), and
// the bytes cut into format-2 frames that carry valid lengths and checksums,
// so the fuzzer reaches the records behind them (header, plan, tests naming
// nodes and rails), read whole (ReadJournal) and as a resume reads it
// (on_measured). Invariants: no crash; a journal that reads names at most
// what the file holds, and every test's node indices and rail are in its
// plan.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "controller/run/journal.h"
#include "controller/run/journal_records.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Input: [kind][u16 length][body]... -> "gdrbench-journal 2\n" + sealed frames.
std::string Framed(const uint8_t* data, size_t size) {
  std::string out = "gdrbench-journal 2\n";
  size_t i = 1;
  while (i + 3 <= size) {
    const char kind = "HPTX"[data[i] % 4];
    size_t len = data[i + 1] | (size_t{data[i + 2]} << 8);
    i += 3;
    len = std::min(len, size - i);
    std::string body(1, kind);
    body.append(reinterpret_cast<const char*>(data + i), len);
    i += len;
    const uint32_t n = static_cast<uint32_t>(body.size());
    const uint32_t sum = gdrbench::controller::run::journal_records::FrameChecksum(body.data(), body.size());
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((n >> (8 * b)) & 0xff));
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((sum >> (8 * b)) & 0xff));
    out += body;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/fuzz_journal." + std::to_string(getpid());
  }();
  const std::string bytes = size > 0 && data[0] % 2 == 1
                                ? Framed(data, size)
                                : std::string(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  auto j = gdrbench::controller::run::ReadJournal(path);
  if (j.ok()) {
    Check(j->valid_bytes <= bytes.size());
    Check(j->pairs.size() <= bytes.size());
    if (j->format == 2) {
      std::set<std::string> names;
      for (const auto& n : j->plan.nodes()) names.insert(n.name());
      for (const auto& p : j->pairs) Check(names.count(p.src().node()) == 1 && names.count(p.dst().node()) == 1);
    }
  }
  // A resume's light read (on_measured: the records decoded from their wire
  // bytes, not parsed): its tests' indices and rails are in the plan too.
  gdrbench::controller::run::JournalVisitor v;
  gdrbench::v1::JournalPlan plan;
  v.on_start = [&](const gdrbench::controller::run::JournalSummary& s) {
    plan = s.plan;
    return absl::OkStatus();
  };
  v.on_measured = [&](const gdrbench::controller::run::FinishedTest& t) {
    if (t.src != gdrbench::controller::run::kNoNodeIndex) {
      Check(t.src < static_cast<uint32_t>(plan.nodes_size()) &&
            t.dst < static_cast<uint32_t>(plan.nodes_size()));
      Check(t.measured.rail < static_cast<uint32_t>(plan.nodes(static_cast<int>(t.src)).rails_size()));
      Check(t.measured.dst_rail < static_cast<uint32_t>(plan.nodes(static_cast<int>(t.dst)).rails_size()));
    }
    return absl::OkStatus();
  };
  auto light = gdrbench::controller::run::StreamJournal(path, v);
  if (light.ok()) Check(light->valid_bytes <= bytes.size());
  return 0;
}
