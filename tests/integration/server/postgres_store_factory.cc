// The store suite on a real PostgreSQL 15 (Debian's postgresql-15), started
// by this test binary: initdb and pg_ctl in a temporary folder, listening on
// a Unix socket only (no TCP port), run as the `postgres` user the package
// creates when the test runs as root (PostgreSQL refuses to run as root).
// Each test gets its own database.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/store/postgres_db.h"
#include "tests/unit/server/store/store_suite.h"

namespace gdrbench::server::testing {
namespace {

constexpr char kBin[] = "/usr/lib/postgresql/15/bin";

class Postgres : public ::testing::Environment {
 public:
  void SetUp() override {
    char tmpl[] = "/tmp/gdrbench-pg-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
    as_ = "";
    if (geteuid() == 0) {
      passwd* pw = getpwnam("postgres");
      ASSERT_NE(pw, nullptr) << "no postgres user (install postgresql: deploy/install-deps)";
      ASSERT_EQ(chown(dir_.c_str(), pw->pw_uid, pw->pw_gid), 0);
      as_ = "runuser -u postgres -- ";
    }
    Run(absl::StrCat(kBin, "/initdb -D ", dir_, "/data -A trust -U postgres --no-sync -E UTF8 > ", dir_,
                     "/initdb.log 2>&1"));
    Run(absl::StrCat(kBin, "/pg_ctl -D ", dir_, "/data -l ", dir_, "/server.log -w -t 60 -o \"-k ", dir_,
                     " -c listen_addresses='' -c fsync=off -c synchronous_commit=off"
                     " -c full_page_writes=off\" start > /dev/null"));
    started_ = true;
  }
  void TearDown() override {
    if (started_) Run(absl::StrCat(kBin, "/pg_ctl -D ", dir_, "/data -m fast -w stop > /dev/null"));
    std::filesystem::remove_all(dir_);
  }
  std::string Url(const std::string& db) const {
    return absl::StrCat("postgresql:///", db, "?host=", dir_, "&user=postgres");
  }

 private:
  void Run(const std::string& cmd) {
    std::string full = as_.empty() ? cmd : absl::StrCat(as_, "sh -c '", Quote(cmd), "'");
    ASSERT_EQ(std::system(full.c_str()), 0) << full << "\n" << Log();
  }
  static std::string Quote(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out;
  }
  std::string Log() const {
    std::string out;
    for (const char* f : {"/initdb.log", "/server.log"}) {
      if (FILE* fp = std::fopen((dir_ + f).c_str(), "r")) {
        char buf[4096];
        size_t n = std::fread(buf, 1, sizeof buf, fp);
        out.append(buf, n);
        std::fclose(fp);
      }
    }
    return out;
  }
  std::string dir_, as_;
  bool started_ = false;
};

Postgres* pg = static_cast<Postgres*>(::testing::AddGlobalTestEnvironment(new Postgres));

std::string DbName(const std::string& test) {
  std::string out = "t_";
  for (char c : test) out += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '_';
  return out.substr(0, 60);
}

}  // namespace

absl::StatusOr<std::unique_ptr<store::SqlDb>> OpenEmptyTestDb(const std::string& name) {
  auto admin = store::OpenPostgres(pg->Url("postgres"));
  if (!admin.ok()) return admin.status();
  const std::string db = DbName(name);
  if (auto st = (*admin)->ExecScript(absl::StrCat("DROP DATABASE IF EXISTS ", db)); !st.ok()) return st;
  if (auto st = (*admin)->ExecScript(absl::StrCat("CREATE DATABASE ", db)); !st.ok()) return st;
  return store::OpenPostgres(pg->Url(db));
}

absl::StatusOr<std::unique_ptr<store::Store>> OpenTestStore(const std::string& name) {
  auto db = OpenEmptyTestDb(name);
  if (!db.ok()) return db.status();
  db->reset();
  return store::Store::Open(pg->Url(DbName(name)));
}

absl::StatusOr<std::unique_ptr<store::Store>> ReopenTestStore(const std::string& name) {
  return store::Store::Open(pg->Url(DbName(name)));
}

}  // namespace gdrbench::server::testing
