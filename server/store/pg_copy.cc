#include "server/store/pg_copy.h"

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace gdrbench::server::store {
namespace {

template <typename T>
void PutBig(std::string* out, T v) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(v);
  for (int shift = 8 * (sizeof(U) - 1); shift >= 0; shift -= 8) out->push_back(static_cast<char>(u >> shift));
}

const char* TypeName(ColumnType t) {
  switch (t) {
    case ColumnType::kInt16: return "smallint";
    case ColumnType::kInt32: return "integer";
    case ColumnType::kInt64: return "bigint";
    case ColumnType::kFloat64: return "double precision";
    case ColumnType::kText: return "text";
    case ColumnType::kBytes: return "bytea";
  }
  return "?";
}

// One field (length and value); false when the value does not fit the column.
bool PutField(ColumnType type, const SqlValue& value, std::string* out) {
  if (std::holds_alternative<std::nullptr_t>(value)) {
    PutBig<int32_t>(out, -1);
    return true;
  }
  if (const int64_t* i = std::get_if<int64_t>(&value)) {
    switch (type) {
      case ColumnType::kInt16:
        if (*i < std::numeric_limits<int16_t>::min() || *i > std::numeric_limits<int16_t>::max())
          return false;
        PutBig<int32_t>(out, 2);
        PutBig<int16_t>(out, static_cast<int16_t>(*i));
        return true;
      case ColumnType::kInt32:
        if (*i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max())
          return false;
        PutBig<int32_t>(out, 4);
        PutBig<int32_t>(out, static_cast<int32_t>(*i));
        return true;
      case ColumnType::kInt64:
        PutBig<int32_t>(out, 8);
        PutBig<int64_t>(out, *i);
        return true;
      default: return false;
    }
  }
  if (const double* d = std::get_if<double>(&value)) {
    if (type != ColumnType::kFloat64) return false;
    PutBig<int32_t>(out, 8);
    PutBig<uint64_t>(out, std::bit_cast<uint64_t>(*d));
    return true;
  }
  std::string_view bytes;
  if (const std::string_view* t = std::get_if<std::string_view>(&value)) {
    if (type != ColumnType::kText) return false;
    bytes = *t;
  } else {
    if (type != ColumnType::kBytes) return false;
    bytes = std::get<Blob>(value).bytes;
  }
  if (bytes.size() > (size_t{1} << 30)) return false;
  PutBig<int32_t>(out, static_cast<int32_t>(bytes.size()));
  out->append(bytes);
  return true;
}

const char* KindName(const SqlValue& v) {
  constexpr const char* kNames[] = {"NULL", "an integer", "a double", "text", "bytes"};
  return kNames[v.index()];
}

}  // namespace

std::string CopyBinaryHeader() {
  std::string out("PGCOPY\n\377\r\n\0", 11);
  PutBig<int32_t>(&out, 0);  // flags: no OIDs
  PutBig<int32_t>(&out, 0);  // no header extension
  return out;
}

std::string CopyBinaryTrailer() {
  std::string out;
  PutBig<int16_t>(&out, -1);
  return out;
}

absl::Status AppendCopyTuple(absl::Span<const BulkColumn> columns, absl::Span<const SqlValue> row,
                             std::string* out) {
  if (row.size() != columns.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("COPY: a row of ", row.size(), " values for ", columns.size(), " columns"));
  }
  const size_t was = out->size();
  PutBig<int16_t>(out, static_cast<int16_t>(columns.size()));
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!PutField(columns[i].type, row[i], out)) {
      out->resize(was);
      std::string why = KindName(row[i]);
      if (const int64_t* v = std::get_if<int64_t>(&row[i])) why = absl::StrCat("the integer ", *v);
      return absl::InvalidArgumentError(absl::StrCat("COPY: ", why, " does not fit column ",
                                                     std::string(columns[i].name), " (",
                                                     TypeName(columns[i].type), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gdrbench::server::store
