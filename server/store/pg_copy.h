// PostgreSQL's binary COPY format (COPY ... FROM STDIN (FORMAT binary)), as
// the PostgreSQL 15 manual states it (sql-copy.html, "Binary Format"): an
// 11-byte signature "PGCOPY\n\377\r\n\0", a 32-bit flags field and a 32-bit
// header extension length (both 0 here); each tuple a 16-bit field count,
// then per field a 32-bit length (-1: NULL) and the value in the type's
// binary send format; a 16-bit -1 at the end. Every integer is in network
// byte order; float8 is its IEEE 754 bits as a 64-bit integer. Values go
// as they are: nothing to escape, nothing parsed back into text on the
// server.
// Thread safety: pure functions.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/store/sql.h"

namespace gdrbench::server::store {

std::string CopyBinaryHeader();
std::string CopyBinaryTrailer();

// Appends one tuple of `row` (one value per column, in order) to `out`.
// INVALID_ARGUMENT, leaving `out` as it was, when the row has another number
// of values than there are columns, a value's kind does not fit its column
// (text into an integer, a double into bytea...), an integer is out of the
// column's range, or a value is longer than 1 GB.
absl::Status AppendCopyTuple(absl::Span<const BulkColumn> columns, absl::Span<const SqlValue> row,
                             std::string* out);

}  // namespace gdrbench::server::store
