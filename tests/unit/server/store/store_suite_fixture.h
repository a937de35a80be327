// The store suite's fixture (store_suite.h: the same tests on SQLite and
// PostgreSQL), shared by store_suite_test.cc and store_blocks_suite_test.cc:
// an empty store per test, and a run stored through the ingester.
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/history/export.h"
#include "server/history/ingest.h"
#include "tests/unit/server/store/store_suite.h"
#include "tests/unit/server/testing/fake_run.h"

namespace gdrbench::server {

class StoreSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    auto s = testing::OpenTestStore(name_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  v1::UploadRunResponse Store(const v1::Run& run) {
    auto r = history::StoreRun(*store_, run, options_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : v1::UploadRunResponse();
  }

  static testing::FakeRunSpec Spec(const std::string& id, int day) {
    testing::FakeRunSpec s;
    s.run_id = id;
    s.started_unix_s = 1767225600 + day * 86400;
    return s;
  }

  std::string name_;
  std::unique_ptr<store::Store> store_;
  history::IngestOptions options_;
};

}  // namespace gdrbench::server
