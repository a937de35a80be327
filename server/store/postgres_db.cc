#include "server/store/postgres_db.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/store/pg_copy.h"
#include "spdlog/spdlog.h"

namespace gdrbench::server::store {
namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// `?` placeholders -> $1..$n (the store's SQL never has ? inside literals).
std::string Renumber(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  for (char c : sql) {
    if (c == '?') {
      absl::StrAppend(&out, "$", ++n);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

class Row final : public SqlRow {
 public:
  Row(PGresult* r, int i) : r_(r), i_(i) {}
  bool IsNull(int c) const override { return PQgetisnull(r_, i_, c); }
  int64_t Int(int c) const override {
    const char* v = PQgetvalue(r_, i_, c);
    if (v[0] == 't') return 1;  // boolean
    if (v[0] == 'f') return 0;
    return std::strtoll(v, nullptr, 10);
  }
  double Real(int c) const override { return std::strtod(PQgetvalue(r_, i_, c), nullptr); }
  std::string Text(int c) const override {
    return std::string(PQgetvalue(r_, i_, c), PQgetlength(r_, i_, c));
  }
  std::string Bytes(int c) const override {
    // bytea in text results is hex: \x0a1b...
    const char* v = PQgetvalue(r_, i_, c);
    const int len = PQgetlength(r_, i_, c);
    if (len < 2 || v[0] != '\\' || v[1] != 'x') return std::string(v, len);
    std::string out((len - 2) / 2, '\0');
    for (size_t k = 0; k < out.size(); ++k) {
      out[k] = static_cast<char>(HexValue(v[2 + 2 * k]) << 4 | HexValue(v[3 + 2 * k]));
    }
    return out;
  }

 private:
  PGresult* r_;
  int i_;
};

class PostgresDb final : public SqlDb {
 public:
  PostgresDb(PGconn* c, std::string name) : c_(c), name_(std::move(name)) {}
  ~PostgresDb() override { PQfinish(c_); }

  Dialect dialect() const override { return Dialect::kPostgres; }
  std::string name() const override { return name_; }

  absl::Status ExecScript(std::string_view sql) override {
    Result r(PQexec(c_, std::string(sql).c_str()));
    return Check(r.get(), sql);
  }

  absl::Status Exec(std::string_view sql, absl::Span<const SqlValue> params) override {
    return Query(sql, params, nullptr);
  }

  absl::Status Query(std::string_view sql, absl::Span<const SqlValue> params,
                     const RowFn& fn) override {
    std::vector<std::string> text(params.size());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size()), formats(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::nullptr_t>) {
              values[i] = nullptr;
            } else if constexpr (std::is_same_v<T, int64_t>) {
              text[i] = std::to_string(v);
              values[i] = text[i].c_str();
            } else if constexpr (std::is_same_v<T, double>) {
              text[i] = absl::StrFormat("%.17g", v);
              values[i] = text[i].c_str();
            } else if constexpr (std::is_same_v<T, std::string_view>) {
              text[i] = std::string(v);
              values[i] = text[i].c_str();
            } else {
              values[i] = v.bytes.empty() ? "" : v.bytes.data();  // a null pointer is SQL NULL
              lengths[i] = static_cast<int>(v.bytes.size());
              formats[i] = 1;  // binary: bytea as is
            }
          },
          params[i]);
    }
    std::string q = Renumber(sql);
    Result r(PQexecParams(c_, q.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                          lengths.data(), formats.data(), 0));
    if (auto st = Check(r.get(), sql); !st.ok()) return st;
    if (fn) {
      const int rows = PQntuples(r.get());
      for (int i = 0; i < rows; ++i) {
        if (auto st = fn(Row(r.get(), i)); !st.ok()) return st;
      }
    }
    return absl::OkStatus();
  }

  absl::Status Begin() override { return ExecScript("BEGIN"); }
  absl::Status Commit() override { return ExecScript("COMMIT"); }
  void Rollback() override {
    if (PQtransactionStatus(c_) == PQTRANS_IDLE) return;
    if (auto st = ExecScript("ROLLBACK"); !st.ok()) spdlog::warn("{}", std::string(st.message()));
  }

  absl::StatusOr<std::unique_ptr<RowSink>> BulkRows(std::string_view table,
                                                    absl::Span<const BulkColumn> columns) override;

  absl::Status Check(PGresult* r, std::string_view sql) {
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) return absl::OkStatus();
    std::string msg = absl::StrCat(name_, ": ", StatementHead(sql), ": ",
                                   r ? PQresultErrorMessage(r) : PQerrorMessage(c_));
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    std::string_view code = state ? state : "";
    if (code == "23505") return absl::AlreadyExistsError(msg);      // unique_violation
    if (code.substr(0, 2) == "42") return absl::InvalidArgumentError(msg);  // syntax / undefined
    if (code.substr(0, 2) == "08" || PQstatus(c_) != CONNECTION_OK) return absl::UnavailableError(msg);
    return absl::InternalError(msg);
  }

 private:
  friend class CopySink;
  PGconn* c_;
  std::string name_;
};

// COPY table FROM STDIN (FORMAT binary) (pg_copy.h), sent in ~1 MiB pieces.
class CopySink final : public RowSink {
 public:
  CopySink(PostgresDb* db, std::string sql, absl::Span<const BulkColumn> columns)
      : db_(db), sql_(std::move(sql)), columns_(columns.begin(), columns.end()) {
    buf_ = CopyBinaryHeader();
    buf_.reserve(kFlush + 4096);
  }
  ~CopySink() override {
    if (!finished_) {  // the server drops what came; the transaction is rolled back
      PQputCopyEnd(db_->c_, "the bulk load was abandoned");
      while (PGresult* r = PQgetResult(db_->c_)) PQclear(r);
    }
  }
  absl::Status Add(absl::Span<const SqlValue> row) override {
    if (auto st = AppendCopyTuple(columns_, row, &buf_); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(db_->name_, ": ", StatementHead(sql_), ": ", st.message()));
    }
    if (buf_.size() >= kFlush) return Flush();
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    buf_ += CopyBinaryTrailer();
    if (auto st = Flush(); !st.ok()) return st;
    finished_ = true;
    if (PQputCopyEnd(db_->c_, nullptr) != 1) return Error("COPY end");
    Result r(PQgetResult(db_->c_));
    absl::Status st = db_->Check(r.get(), sql_);
    while (PGresult* more = PQgetResult(db_->c_)) PQclear(more);
    return st;
  }

 private:
  static constexpr size_t kFlush = 1 << 20;
  absl::Status Flush() {
    if (buf_.empty()) return absl::OkStatus();
    if (PQputCopyData(db_->c_, buf_.data(), static_cast<int>(buf_.size())) != 1) return Error("COPY data");
    buf_.clear();
    return absl::OkStatus();
  }
  absl::Status Error(const char* what) {
    return absl::UnavailableError(absl::StrCat(db_->name_, ": ", what, ": ", PQerrorMessage(db_->c_)));
  }
  PostgresDb* db_;
  std::string sql_;
  std::vector<BulkColumn> columns_;
  std::string buf_;
  bool finished_ = false;
};

absl::StatusOr<std::unique_ptr<RowSink>> PostgresDb::BulkRows(std::string_view table,
                                                              absl::Span<const BulkColumn> columns) {
  std::string sql = absl::StrCat("COPY ", std::string(table), " (");
  for (size_t i = 0; i < columns.size(); ++i)
    absl::StrAppend(&sql, i ? ", " : "", std::string(columns[i].name));
  absl::StrAppend(&sql, ") FROM STDIN (FORMAT binary)");
  Result r(PQexec(c_, sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_COPY_IN) {
    absl::Status st = Check(r.get(), sql);
    return st.ok() ? absl::InternalError(absl::StrCat(name_, ": ", StatementHead(sql), ": not in COPY mode"))
                   : st;
  }
  return std::make_unique<CopySink>(this, std::move(sql), columns);
}

}  // namespace

std::string RedactConninfo(const std::string& conninfo) {
  // URI: scheme://user:PASSWORD@host; keywords: password=PASSWORD
  static const std::regex uri(R"(^([a-z]+://[^:/@]*):[^@]*@)");
  static const std::regex kw(R"(password\s*=\s*('[^']*'|\S+))");
  std::string out = std::regex_replace(conninfo, uri, "$1:***@");
  return std::regex_replace(out, kw, "password=***");
}

absl::StatusOr<std::unique_ptr<SqlDb>> OpenPostgres(const std::string& conninfo) {
  const std::string name = absl::StrCat("postgresql ", RedactConninfo(conninfo));
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (c == nullptr) return absl::UnavailableError(absl::StrCat(name, ": out of memory"));
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    PQfinish(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    for (auto& ch : msg) {
      if (ch == '\n') ch = ' ';
    }
    return absl::UnavailableError(absl::StrCat(name, ": cannot connect: ", msg));
  }
  auto db = std::make_unique<PostgresDb>(c, name);
  // Keep notices (e.g. "relation already exists, skipping") out of stderr.
  PQsetNoticeProcessor(c, [](void*, const char* m) { spdlog::debug("postgresql: {}", m); }, nullptr);
  if (auto st = db->ExecScript("SET client_min_messages = warning"); !st.ok()) return st;
  return db;
}

}  // namespace gdrbench::server::store
