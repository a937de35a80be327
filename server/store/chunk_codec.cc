#include "server/store/chunk_codec.h"

#include <zstd.h>

#include <memory>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::store {
namespace {

struct FreeCCtx {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct FreeDCtx {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// Level 1: the fastest of zstd's standard levels; the chunks are so
// repetitive that higher levels gain little (14.5x at 1 here, on chunks of
// the controller bench's run) and cost several times the CPU.
constexpr int kLevel = 1;

}  // namespace

absl::StatusOr<std::string> CompressChunk(std::string_view raw) {
  // One context per thread, reused: creating one per chunk allocates its
  // tables every time (a 1024 x 8 run has thousands of chunks).
  thread_local std::unique_ptr<ZSTD_CCtx, FreeCCtx> ctx(ZSTD_createCCtx());
  if (!ctx) return absl::InternalError("zstd: cannot create a compression context");
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compressCCtx(ctx.get(), out.data(), out.size(), raw.data(), raw.size(), kLevel);
  if (ZSTD_isError(n)) return absl::InternalError(absl::StrCat("zstd: compressing a pair chunk: ", ZSTD_getErrorName(n)));
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> DecodeChunk(int64_t encoding, std::string data) {
  return DecodeStored(encoding, std::move(data), "pair chunk");
}

absl::StatusOr<std::string> DecodeStored(int64_t encoding, std::string data, absl::string_view what) {
  if (encoding == static_cast<int64_t>(ChunkEncoding::kRaw)) return data;
  if (encoding != static_cast<int64_t>(ChunkEncoding::kZstd)) {
    return absl::DataLossError(absl::StrCat(what, ": unknown encoding ", encoding, " (0 plain, 1 zstd)"));
  }
  const unsigned long long size = ZSTD_getFrameContentSize(data.data(), data.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) return absl::DataLossError(absl::StrCat(what, ": not a zstd frame"));
  if (size == ZSTD_CONTENTSIZE_UNKNOWN)
    return absl::DataLossError(absl::StrCat(what, ": a zstd frame without its size"));
  if (size > kMaxChunkBytes) {
    return absl::DataLossError(absl::StrCat(what, ": its frame claims ", size, " bytes, more than the ",
                                            kMaxChunkBytes, " a stored chunk may have"));
  }
  thread_local std::unique_ptr<ZSTD_DCtx, FreeDCtx> ctx(ZSTD_createDCtx());
  if (!ctx) return absl::InternalError("zstd: cannot create a decompression context");
  std::string out(static_cast<size_t>(size), '\0');
  const size_t n = ZSTD_decompressDCtx(ctx.get(), out.data(), out.size(), data.data(), data.size());
  if (ZSTD_isError(n)) return absl::DataLossError(absl::StrCat(what, ": ", ZSTD_getErrorName(n)));
  if (n != size) {
    return absl::DataLossError(absl::StrCat(what, ": decompressed to ", n, " bytes, its frame says ", size));
  }
  return out;
}

}  // namespace gdrbench::server::store
