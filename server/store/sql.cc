#include "server/store/sql.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gdrbench::server::store {

absl::StatusOr<int64_t> QueryInt(SqlDb& db, std::string_view sql,
                                 absl::Span<const SqlValue> params) {
  bool found = false;
  int64_t value = 0;
  absl::Status st = db.Query(sql, params, [&](const SqlRow& row) {
    if (!found) value = row.IsNull(0) ? 0 : row.Int(0);
    found = true;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  if (!found) return absl::NotFoundError(absl::StrCat(db.name(), ": no row for ", StatementHead(sql)));
  return value;
}

std::string StatementHead(std::string_view sql) {
  std::string out;
  int words = 0;
  bool in_word = false;
  for (char c : sql) {
    bool space = absl::ascii_isspace(static_cast<unsigned char>(c));
    if (space && in_word && ++words == 4) break;
    in_word = !space;
    if (space) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return absl::StrCat("'", out, "...'");
}

}  // namespace gdrbench::server::store
