#include "server/store/cell_block.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/store/chunk_codec.h"

namespace gdrbench::server::store {
namespace {

// The stored bytes are the machine's own; the layout says little-endian.
static_assert(std::endian::native == std::endian::little, "cell blocks are written little-endian");

constexpr size_t kFixed = 8 + 1 + 1 + 2 + 3 * 8;  // one cell's fixed-width part

template <typename T>
void Put(char*& at, T v) {
  std::memcpy(at, &v, sizeof v);
  at += sizeof v;
}

template <typename T>
T Get(const char*& at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  at += sizeof v;
  return v;
}

}  // namespace

absl::StatusOr<std::string> EncodeCellBlock(absl::Span<const BlockCell> cells) {
  size_t reasons = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    const BlockCell& c = cells[i];
    if (i > 0 && c.dst <= cells[i - 1].dst) {
      return absl::InvalidArgumentError(absl::StrCat("cell block: destination ", c.dst, " after ",
                                                     cells[i - 1].dst, " (a cell twice, or out of order)"));
    }
    if (c.status < 0 || c.status > 255 || c.verdict < 0 || c.verdict > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("cell block: status ", c.status, " or verdict ", c.verdict, " is not 0 to 255"));
    }
    if (c.reason.size() > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("cell block: a reason of ", c.reason.size(), " bytes"));
    }
    reasons += c.reason.size();
  }
  std::string raw(4 + cells.size() * kFixed + reasons, '\0');
  char* at = raw.data();
  Put<uint32_t>(at, static_cast<uint32_t>(cells.size()));
  for (const BlockCell& c : cells) {
    Put<int64_t>(at, c.dst);
    Put<uint8_t>(at, static_cast<uint8_t>(c.status));
    Put<uint8_t>(at, static_cast<uint8_t>(c.verdict));
    Put<uint16_t>(at, static_cast<uint16_t>(c.reason.size()));
    Put<double>(at, c.bw_avg_gbps);
    Put<double>(at, c.expected_gbps);
    Put<double>(at, c.baseline_gbps);
  }
  for (const BlockCell& c : cells) {
    if (!c.reason.empty()) std::memcpy(at, c.reason.data(), c.reason.size());
    at += c.reason.size();
  }
  return CompressChunk(raw);
}

absl::Status DecodeCellBlock(int64_t encoding, std::string data, const CellRecord& key,
                             const std::function<absl::Status(const CellRecord&)>& fn, bool by_destination) {
  auto raw = DecodeStored(encoding, std::move(data), "cell block");
  if (!raw.ok()) return raw.status();
  auto lost = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("cell block of run #", key.run, " rail ", key.rail, " size ",
                                            key.size_bytes, by_destination ? " destination #" : " source #",
                                            by_destination ? key.dst : key.src, ": ", why));
  };
  if (raw->size() < 4) return lost("shorter than its count");
  const char* at = raw->data();
  const uint32_t count = Get<uint32_t>(at);
  const size_t fixed_end = 4 + size_t{count} * kFixed;
  if (raw->size() < fixed_end)
    return lost(absl::StrCat(count, " cells do not fit in ", raw->size(), " bytes"));
  // The lengths checked before any cell is handed out: a damaged block
  // yields nothing.
  size_t reasons = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint16_t n;
    std::memcpy(&n, raw->data() + 4 + size_t{i} * kFixed + 10, sizeof n);
    reasons += n;
  }
  if (fixed_end + reasons != raw->size()) {
    return lost(
        absl::StrCat("its reasons add up to ", reasons, " bytes, ", raw->size() - fixed_end, " are there"));
  }
  const char* reason_at = raw->data() + fixed_end;
  CellRecord c = key;
  for (uint32_t i = 0; i < count; ++i) {
    (by_destination ? c.src : c.dst) = Get<int64_t>(at);
    c.status = Get<uint8_t>(at);
    c.verdict = Get<uint8_t>(at);
    const uint16_t reason = Get<uint16_t>(at);
    c.bw_avg_gbps = Get<double>(at);
    c.expected_gbps = Get<double>(at);
    c.baseline_gbps = Get<double>(at);
    c.reason.assign(reason_at, reason);
    reason_at += reason;
    if (absl::Status st = fn(c); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::store
