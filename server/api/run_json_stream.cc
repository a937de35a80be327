#include "server/api/run_json_stream.h"

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/wire_format_lite.h"
#include "report/run_chunks.h"
#include "server/api/http_json.h"

namespace gdrbench::server::api {

namespace {

enum Kind : uint8_t { kNone = 0, kPairs = 1, kMatrices = 2 };

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

constexpr const char* kNotARun = "the body is not a JSON gdrbench.v1.Run: ";

Kind BulkyKey(std::string_view key) {
  if (key == "pairs") return kPairs;
  if (key == "matrices") return kMatrices;
  return kNone;
}

std::string_view GenText(yajl_gen g) {
  const unsigned char* buf = nullptr;
  size_t len = 0;
  yajl_gen_get_buf(g, &buf, &len);
  return {reinterpret_cast<const char*>(buf), len};
}

}  // namespace

// Where each token goes: the header's generator, the element's, or (the
// bulky arrays' own brackets) nowhere. `depth` counts the open containers,
// the run's object being 1 and a bulky array 2.
struct RunJsonStream::Parser {
  RunJsonStream* owner = nullptr;
  yajl_handle handle = nullptr;
  yajl_gen header = nullptr;
  yajl_gen element = nullptr;
  int depth = 0;
  Kind pending = kNone;  // a bulky key was read; its value decides
  Kind bulky = kNone;    // inside that array
  bool in_element = false;
  int element_depth = 0;  // depth of the element's own object
  uint64_t index[3] = {0, 0, 0};
  absl::Status error;

  int Fail(absl::Status st) {
    if (error.ok()) error = std::move(st);
    return 0;  // stops yajl
  }

  // A value (scalar or container start) at the current position: decides
  // the pending bulky key and refuses what cannot be an element.
  // Returns the generator to write to, or nullptr with `error` set.
  yajl_gen Before(bool starts_array, bool starts_map) {
    if (depth == 0) {
      if (!starts_map) Fail(absl::InvalidArgumentError(absl::StrCat(kNotARun, "the body is not a JSON object")));
      return nullptr;
    }
    if (depth > kMaxJsonDepth) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(kNotARun, "arrays and objects nest more than ", kMaxJsonDepth, " deep")));
      return nullptr;
    }
    if (depth == 1 && pending != kNone) {
      const Kind k = pending;
      pending = kNone;
      if (starts_array) {
        bulky = k;
        return nullptr;  // the array's bracket itself is not kept
      }
      // `"pairs": null` or another non-array: the header's parser says what it thinks of it.
      const char* key = k == kPairs ? "pairs" : "matrices";
      yajl_gen_string(header, reinterpret_cast<const unsigned char*>(key), std::strlen(key));
      return header;
    }
    if (in_element) return element;
    if (bulky != kNone && depth == 2) {
      if (!starts_map) {
        Fail(absl::InvalidArgumentError(absl::StrCat(kNotARun, bulky == kPairs ? "pairs[" : "matrices[",
                                                     index[bulky], "] is not an object")));
        return nullptr;
      }
      in_element = true;
      element_depth = depth + 1;
      yajl_gen_clear(element);
      yajl_gen_reset(element, nullptr);
      return element;
    }
    return header;
  }

  int Ok(yajl_gen_status s) {
    if (s == yajl_gen_status_ok) return 1;
    return Fail(absl::InvalidArgumentError(absl::StrCat(kNotARun, "cannot rebuild the JSON (yajl_gen status ", s, ")")));
  }

  int Scalar(const std::function<yajl_gen_status(yajl_gen)>& emit) {
    yajl_gen g = Before(false, false);
    if (!error.ok()) return 0;
    return g ? Ok(emit(g)) : 1;
  }

  int StartMap() {
    if (depth == 0) {
      depth = 1;
      return Ok(yajl_gen_map_open(header));
    }
    yajl_gen g = Before(false, true);
    if (!error.ok()) return 0;
    ++depth;
    return Ok(yajl_gen_map_open(g));
  }

  int EndMap() {
    --depth;
    if (depth == 0) return Ok(yajl_gen_map_close(header));
    yajl_gen g = in_element ? element : header;
    if (!Ok(yajl_gen_map_close(g))) return 0;
    if (in_element && depth == element_depth - 1) return ElementDone();
    return 1;
  }

  int StartArray() {
    yajl_gen g = Before(true, false);
    if (!error.ok()) return 0;
    ++depth;
    return g ? Ok(yajl_gen_array_open(g)) : 1;
  }

  int EndArray() {
    --depth;
    if (bulky != kNone && depth == 1) {
      bulky = kNone;
      return 1;
    }
    return Ok(yajl_gen_array_close(in_element ? element : header));
  }

  int Key(std::string_view key) {
    if (depth == 1) {
      pending = BulkyKey(key);
      if (pending != kNone) return 1;  // written to the header only if its value is not an array
      return Ok(yajl_gen_string(header, reinterpret_cast<const unsigned char*>(key.data()), key.size()));
    }
    return Ok(yajl_gen_string(in_element ? element : header, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size()));
  }

  // One element of a bulky array is whole: parse it, keep it on disk.
  int ElementDone() {
    in_element = false;
    const std::string_view text = GenText(element);
    owner->largest_element_ = std::max(owner->largest_element_, text.size());
    const uint64_t i = index[bulky]++;
    const char* name = bulky == kPairs ? "pairs[" : "matrices[";
    auto parse = [&](google::protobuf::Message* m) -> int {
      auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()), m);
      if (!st.ok()) {
        return Fail(absl::InvalidArgumentError(absl::StrCat(kNotARun, name, i, "]: ", std::string(st.message()))));
      }
      return 1;
    };
    if (bulky == kPairs) {
      v1::PairResult p;
      if (!parse(&p)) return 0;
      ++owner->pairs_;
      if (auto st = owner->Spill(kPairs, p); !st.ok()) return Fail(st);
      return 1;
    }
    v1::BandwidthMatrix m;
    if (!parse(&m)) return 0;
    ++owner->matrices_;
    if (auto st = owner->Spill(kMatrices, m); !st.ok()) return Fail(st);
    m.clear_cells();
    owner->matrix_heads_.push_back(std::move(m));
    return 1;
  }
};

namespace {

using P = RunJsonStream::Parser;
P* Of(void* ctx) { return static_cast<P*>(ctx); }

int OnNull(void* c) { return Of(c)->Scalar([](yajl_gen g) { return yajl_gen_null(g); }); }
int OnBool(void* c, int b) { return Of(c)->Scalar([b](yajl_gen g) { return yajl_gen_bool(g, b); }); }
int OnNumber(void* c, const char* s, size_t n) {
  return Of(c)->Scalar([s, n](yajl_gen g) { return yajl_gen_number(g, s, n); });
}
int OnString(void* c, const unsigned char* s, size_t n) {
  return Of(c)->Scalar([s, n](yajl_gen g) { return yajl_gen_string(g, s, n); });
}
int OnStartMap(void* c) { return Of(c)->StartMap(); }
int OnKey(void* c, const unsigned char* s, size_t n) {
  return Of(c)->Key(std::string_view(reinterpret_cast<const char*>(s), n));
}
int OnEndMap(void* c) { return Of(c)->EndMap(); }
int OnStartArray(void* c) { return Of(c)->StartArray(); }
int OnEndArray(void* c) { return Of(c)->EndArray(); }

const yajl_callbacks kCallbacks = {OnNull,     OnBool, nullptr,  nullptr,      OnNumber,  OnString,
                                   OnStartMap, OnKey,  OnEndMap, OnStartArray, OnEndArray};

}  // namespace

RunJsonStream::RunJsonStream() : parser_(std::make_unique<Parser>()) {
  parser_->owner = this;
  parser_->handle = yajl_alloc(&kCallbacks, nullptr, parser_.get());
  parser_->header = yajl_gen_alloc(nullptr);
  parser_->element = yajl_gen_alloc(nullptr);
  spill_ = std::tmpfile();
  if (spill_ == nullptr) {
    failed_ = absl::ResourceExhaustedError(
        absl::StrCat("cannot create a temporary file for the upload (TMPDIR): ", std::strerror(errno)));
  }
}

RunJsonStream::~RunJsonStream() {
  if (parser_->handle) yajl_free(parser_->handle);
  if (parser_->header) yajl_gen_free(parser_->header);
  if (parser_->element) yajl_gen_free(parser_->element);
  if (spill_) std::fclose(spill_);
}

absl::Status RunJsonStream::Spill(int kind, const google::protobuf::Message& m) {
  const std::string bytes = m.SerializeAsString();
  const uint8_t k = static_cast<uint8_t>(kind);
  const uint64_t n = bytes.size();
  if (std::fwrite(&k, 1, 1, spill_) != 1 || std::fwrite(&n, sizeof n, 1, spill_) != 1 ||
      std::fwrite(bytes.data(), 1, bytes.size(), spill_) != bytes.size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot write the upload's temporary file (TMPDIR): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RunJsonStream::Feed(std::string_view data) {
  if (!failed_.ok()) return failed_;
  fed_ += data.size();
  const yajl_status s =
      yajl_parse(parser_->handle, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  if (s == yajl_status_ok) return absl::OkStatus();
  if (!parser_->error.ok()) {
    failed_ = parser_->error;
  } else {
    unsigned char* e = yajl_get_error(parser_->handle, 0, nullptr, 0);
    failed_ = absl::InvalidArgumentError(absl::StrCat(kNotARun, reinterpret_cast<const char*>(e)));
    yajl_free_error(parser_->handle, e);
  }
  return failed_;
}

absl::Status RunJsonStream::Finish() {
  if (!failed_.ok()) return failed_;
  if (fed_ == 0) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(kNotARun, "the body is empty"));
    return failed_;
  }
  if (yajl_complete_parse(parser_->handle) != yajl_status_ok) {
    unsigned char* e = yajl_get_error(parser_->handle, 0, nullptr, 0);
    failed_ = parser_->error.ok()
                  ? absl::InvalidArgumentError(absl::StrCat(kNotARun, reinterpret_cast<const char*>(e)))
                  : parser_->error;
    yajl_free_error(parser_->handle, e);
    return failed_;
  }
  if (parser_->depth != 0) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(kNotARun, "the body ends inside the run"));
    return failed_;
  }
  const std::string_view text = GenText(parser_->header);
  if (text.empty()) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(kNotARun, "the body is empty"));
    return failed_;
  }
  auto st = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()),
                                                        &header_);
  if (!st.ok()) {
    failed_ = absl::InvalidArgumentError(absl::StrCat(kNotARun, std::string(st.message())));
    return failed_;
  }
  for (auto& m : matrix_heads_) *header_.add_matrices() = std::move(m);
  matrix_heads_.clear();
  finished_ = true;
  return absl::OkStatus();
}

absl::Status RunJsonStream::Replay(const std::function<absl::Status(const v1::RunChunk&)>& fn,
                                   size_t pairs_per_chunk,
                                   const std::function<absl::Status(absl::string_view)>& serialized_pairs) {
  if (!finished_) return absl::FailedPreconditionError("RunJsonStream::Replay before a successful Finish");
  v1::RunChunk chunk;
  *chunk.mutable_header() = header_;
  if (auto st = fn(chunk); !st.ok()) return st;
  // The pairs of the chunk being made: parsed into `chunk`, or their bytes
  // as PairChunk's field 1 entries (tag, length, pair) in `raw`.
  std::string raw;
  size_t in_chunk = 0;
  auto flush = [&]() -> absl::Status {
    if (in_chunk == 0) return absl::OkStatus();
    in_chunk = 0;
    absl::Status st = serialized_pairs ? serialized_pairs(raw) : fn(chunk);
    raw.clear();
    chunk.Clear();
    return st;
  };
  // Two passes over the spill file: the matrices' cells, then the pairs (the
  // order report/run_chunks.h cuts a whole run in).
  for (const Kind want : {kMatrices, kPairs}) {
    std::rewind(spill_);
    chunk.Clear();
    std::string bytes;
    for (;;) {
      uint8_t k = 0;
      uint64_t n = 0;
      if (std::fread(&k, 1, 1, spill_) != 1) break;
      if (std::fread(&n, sizeof n, 1, spill_) != 1) return absl::DataLossError("the upload's temporary file is cut short");
      bytes.resize(n);
      if (n > 0 && std::fread(bytes.data(), 1, n, spill_) != n) {
        return absl::DataLossError("the upload's temporary file is cut short");
      }
      if (k != want) continue;
      if (want == kMatrices) {
        v1::Run one;
        if (!one.add_matrices()->ParseFromString(bytes)) return absl::DataLossError("a spilled matrix does not parse");
        auto st = report::ForEachRunChunk(
            one, {}, [&](const v1::RunChunk& c) { return c.has_header() ? absl::OkStatus() : fn(c); });
        if (!st.ok()) return st;
        continue;
      }
      if (serialized_pairs) {
        // PairChunk's field 1 as protobuf writes it: tag, length, the pair.
        uint8_t head[5 + 10];  // a tag (a 32-bit varint) and the length (a 64-bit one), at their longest
        uint8_t* end = CodedOutputStream::WriteTagToArray(
            WireFormatLite::MakeTag(v1::PairChunk::kPairsFieldNumber,
                                    WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
            head);
        end = CodedOutputStream::WriteVarint64ToArray(n, end);
        raw.append(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
        raw.append(bytes);
      } else if (!chunk.mutable_pairs()->add_pairs()->ParseFromString(bytes)) {
        return absl::DataLossError("a spilled pair does not parse");
      }
      if (++in_chunk >= pairs_per_chunk) {
        if (auto st = flush(); !st.ok()) return st;
      }
    }
    if (want == kPairs) {
      if (auto st = flush(); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::api
