#include "server/store/staged_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/store/chunk_codec.h"

namespace gdrbench::server::store {
namespace {

// Records: kind (1 byte), length (8 bytes), then the fields in the order
// written below, native byte order (the file lives and dies with this process).
template <typename T>
void Append(std::string* out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void AppendBytes(std::string* out, std::string_view s) {
  Append<uint64_t>(out, s.size());
  out->append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  template <typename T>
  bool Get(T* v) {
    if (s_.size() < sizeof(T)) return false;
    std::memcpy(v, s_.data(), sizeof(T));
    s_.remove_prefix(sizeof(T));
    return true;
  }
  bool empty() const { return s_.empty(); }
  bool Bytes(std::string_view* v) {
    uint64_t n = 0;
    if (!Get(&n) || s_.size() < n) return false;
    *v = s_.substr(0, n);
    s_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view s_;
};

absl::Status Lost(const char* what) {
  return absl::DataLossError(absl::StrCat("the staged upload does not read back (", what, ")"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<StagedRunWriter>> StagedRunWriter::Create(Store& store, RunRow row,
                                                                         const std::string& dir) {
  std::string folder = dir;
  if (folder.empty()) {
    std::error_code ec;
    folder = std::filesystem::temp_directory_path(ec).string();
    if (ec) folder = "/tmp";
  }
  // O_TMPFILE: no name, gone when closed (also after kill -9).
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot make the upload's staging file in ", folder, ": ",
                                            std::strerror(errno)));
  }
  std::FILE* f = ::fdopen(fd, "w+b");
  if (f == nullptr) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("fdopen of the staging file: ", std::strerror(errno)));
  }
  return std::unique_ptr<StagedRunWriter>(new StagedRunWriter(store, std::move(row), f));
}

StagedRunWriter::~StagedRunWriter() { std::fclose(file_); }

absl::Status StagedRunWriter::Put(Kind kind, std::string_view record) {
  GDR_RETURN_IF_ERROR(PutCells());
  GDR_RETURN_IF_ERROR(PutPairs(0));
  return Write(kind, record);
}

absl::Status StagedRunWriter::PutCells() {
  if (cells_.empty()) return absl::OkStatus();
  GDR_RETURN_IF_ERROR(PutPairs(0));  // the pair chunks added before these cells first
  absl::Status st = Write(Kind::kCells, cells_);
  cells_.clear();
  return st;
}

absl::Status StagedRunWriter::Write(Kind kind, std::string_view record) {
  const uint8_t k = static_cast<uint8_t>(kind);
  const uint64_t n = record.size();
  if (std::fwrite(&k, 1, 1, file_) != 1 || std::fwrite(&n, sizeof n, 1, file_) != 1 ||
      (n > 0 && std::fwrite(record.data(), 1, n, file_) != n)) {
    write_failed_ = true;
    return absl::ResourceExhaustedError(absl::StrCat("cannot stage the upload (", bytes_,
                                                     " bytes staged): ", std::strerror(errno)));
  }
  bytes_ += 9 + n;
  return absl::OkStatus();
}

// Batched: a 1024 x 8 run has 8.4 M cells, and a record (three stdio calls
// to write, three to read back) per cell cost seconds.
absl::Status StagedRunWriter::AddCell(const CellRecord& c) {
  Append(&cells_, c.rail);
  Append(&cells_, c.size_bytes);
  Append(&cells_, c.src);
  Append(&cells_, c.dst);
  Append(&cells_, c.status);
  Append(&cells_, c.bw_avg_gbps);
  Append(&cells_, c.verdict);
  Append(&cells_, c.expected_gbps);
  Append(&cells_, c.baseline_gbps);
  AppendBytes(&cells_, c.reason);
  return cells_.size() >= (size_t{1} << 20) ? PutCells() : absl::OkStatus();
}

absl::Status StagedRunWriter::AddPairChunk(uint32_t pairs, std::string_view serialized_chunk) {
  GDR_RETURN_IF_ERROR(PutCells());
  compressing_.push_back({pairs, std::async(std::launch::async, [raw = std::string(serialized_chunk)] {
                            return CompressChunk(raw);
                          })});
  return PutPairs(kCompressAhead);
}

absl::Status StagedRunWriter::PutPairs(size_t keep) {
  while (compressing_.size() > keep) {
    Compressing c = std::move(compressing_.front());
    compressing_.pop_front();
    absl::StatusOr<std::string> stored = c.stored.get();
    if (!stored.ok()) {
      write_failed_ = true;
      return stored.status();
    }
    pair_record_.clear();  // not record_: Put calls this with its record there
    Append(&pair_record_, c.pairs);
    AppendBytes(&pair_record_, *stored);
    GDR_RETURN_IF_ERROR(Write(Kind::kPairs, pair_record_));
  }
  return absl::OkStatus();
}

absl::Status StagedRunWriter::AddStoredPairChunk(uint32_t pairs, std::string_view stored_chunk) {
  record_.clear();
  Append(&record_, pairs);
  AppendBytes(&record_, stored_chunk);
  return Put(Kind::kPairs, record_);
}

absl::Status StagedRunWriter::AddNodeStat(const NodeStatRow& n) {
  static_assert(std::is_trivially_copyable_v<NodeStatRow>);
  return Put(Kind::kNodeStat, std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
}

absl::Status StagedRunWriter::SetCapacity(std::string_view serialized) { return Put(Kind::kCapacity, serialized); }

absl::Status StagedRunWriter::AddMatrixBlob(uint32_t rail, uint64_t size_bytes, std::string_view blob) {
  record_.clear();
  Append(&record_, rail);
  Append(&record_, size_bytes);
  AppendBytes(&record_, blob);
  return Put(Kind::kBlob, record_);
}

absl::Status StagedRunWriter::SetLinkNoise(const LinkNoiseRow& n) {
  record_.clear();
  AppendBytes(&record_, n.cluster);
  Append(&record_, n.rail);
  Append(&record_, n.size_bytes);
  Append(&record_, n.newest_started_us);
  AppendBytes(&record_, n.data);
  return Put(Kind::kNoise, record_);
}

// Every record, in the order staged, into `into` (the store's transaction).
absl::Status StagedRunWriter::Replay(RunWriter& into) {
  if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0) return Lost("seek");
  std::string buf;
  for (uint64_t read = 0; read < bytes_;) {
    uint8_t kind = 0;
    uint64_t n = 0;
    if (std::fread(&kind, 1, 1, file_) != 1 || std::fread(&n, sizeof n, 1, file_) != 1 || n > bytes_) {
      return Lost("record header");
    }
    buf.resize(n);
    if (n > 0 && std::fread(buf.data(), 1, n, file_) != n) return Lost("record");
    read += 9 + n;
    Reader r(buf);
    switch (static_cast<Kind>(kind)) {
      case Kind::kCells: {
        CellRecord c;
        while (!r.empty()) {
          std::string_view reason;
          if (!r.Get(&c.rail) || !r.Get(&c.size_bytes) || !r.Get(&c.src) || !r.Get(&c.dst) ||
              !r.Get(&c.status) || !r.Get(&c.bw_avg_gbps) || !r.Get(&c.verdict) || !r.Get(&c.expected_gbps) ||
              !r.Get(&c.baseline_gbps) || !r.Bytes(&reason)) {
            return Lost("cell");
          }
          c.reason.assign(reason.data(), reason.size());
          GDR_RETURN_IF_ERROR(into.AddCell(c));
        }
        break;
      }
      case Kind::kPairs: {
        uint32_t pairs = 0;
        std::string_view data;
        if (!r.Get(&pairs) || !r.Bytes(&data)) return Lost("pairs");
        GDR_RETURN_IF_ERROR(into.AddStoredPairChunk(pairs, data));
        break;
      }
      case Kind::kNodeStat: {
        NodeStatRow s;
        if (!r.Get(&s)) return Lost("node statistics");
        GDR_RETURN_IF_ERROR(into.AddNodeStat(s));
        break;
      }
      case Kind::kCapacity: GDR_RETURN_IF_ERROR(into.SetCapacity(buf)); break;
      case Kind::kBlob: {
        uint32_t rail = 0;
        uint64_t size = 0;
        std::string_view blob;
        if (!r.Get(&rail) || !r.Get(&size) || !r.Bytes(&blob)) return Lost("matrix blob");
        GDR_RETURN_IF_ERROR(into.AddMatrixBlob(rail, size, blob));
        break;
      }
      case Kind::kNoise: {
        LinkNoiseRow n;
        std::string_view cluster, data;
        if (!r.Bytes(&cluster) || !r.Get(&n.rail) || !r.Get(&n.size_bytes) || !r.Get(&n.newest_started_us) ||
            !r.Bytes(&data)) {
          return Lost("link noise");
        }
        n.cluster = std::string(cluster);
        n.data = std::string(data);
        GDR_RETURN_IF_ERROR(into.SetLinkNoise(n));
        break;
      }
      default: return Lost("record kind");
    }
  }
  return absl::OkStatus();
}

absl::Status StagedRunWriter::Commit(const RunRow& row, const v1::Run& header) {
  GDR_RETURN_IF_ERROR(PutCells());
  GDR_RETURN_IF_ERROR(PutPairs(0));
  if (write_failed_) return absl::FailedPreconditionError("the upload could not be staged: nothing stored");
  GDR_ASSIGN_OR_RETURN(std::unique_ptr<RunWriter> w, store_.BeginRun(row_));  // the write lock, from here
  GDR_RETURN_IF_ERROR(Replay(*w));
  return w->Commit(row, header);
}

}  // namespace gdrbench::server::store
