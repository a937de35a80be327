// The store suite, part 2: cells kept as blocks (schema version 6,
// cell_block.h), an ingest stopped midway, and stores of older and newer
// servers. Same tiers as store_suite_test.cc (store_suite.h).
#include <algorithm>
#include <bit>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/migrations.h"
#include "tests/unit/server/store/store_suite_fixture.h"

namespace gdrbench::server {
namespace {

using testing::FakeRun;
using ::testing::HasSubstr;

// --- cells kept as blocks (schema version 6, cell_block.h)

store::RunRow BareRow(const std::string& id) {
  store::RunRow r;
  r.run_id = id;
  r.cluster = "lab";
  r.started_us = r.finished_us = r.stored_us = 1767225600000000;
  r.mode = "all-pairs";
  return r;
}

std::vector<store::CellRecord> AllCells(store::Store& s, store::CellQuery q) {
  std::vector<store::CellRecord> out;
  absl::Status st = s.ReadCells(q, [&](const store::CellRecord& c) {
    out.push_back(c);
    return absl::OkStatus();
  });
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

auto Key(const store::CellRecord& c) { return std::make_tuple(c.rail, c.size_bytes, c.src, c.dst); }

void ExpectSameCell(const store::CellRecord& a, const store::CellRecord& b) {
  EXPECT_EQ(Key(a), Key(b));
  EXPECT_EQ(a.run, b.run);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(std::bit_cast<uint64_t>(a.bw_avg_gbps), std::bit_cast<uint64_t>(b.bw_avg_gbps));
  EXPECT_EQ(std::bit_cast<uint64_t>(a.expected_gbps), std::bit_cast<uint64_t>(b.expected_gbps));
  EXPECT_EQ(std::bit_cast<uint64_t>(a.baseline_gbps), std::bit_cast<uint64_t>(b.baseline_gbps));
  EXPECT_EQ(a.reason, b.reason);
}

// Every value of a cell comes back bit for bit (on PostgreSQL too, whose cell
// rows kept 4-byte floats), every reason byte for byte, in key order whatever
// the order written, through each query shape.
TEST_F(StoreSuite, CellsComeBackExactlyAndInOrder) {
  auto ids = store_->InternNodes({"w0", "w1", "w2", "w3"});
  ASSERT_TRUE(ids.ok()) << ids.status();
  const std::vector<std::string> reasons = {"",
                                            "tab\there\nnew line\\ and \"quotes\" 'too'",
                                            std::string("nul\0byte", 8),
                                            "d\xc3\xa9"
                                            "bit \xe2\x86\x93",
                                            std::string(4096, 'x'),
                                            "\\N",
                                            "%s %n ?"};
  v1::Run header;
  header.set_run_id("exact");
  std::vector<store::CellRecord> written;
  int k = 0;
  for (uint64_t size : {uint64_t{4096}, uint64_t{1} << 20}) {
    auto* m = header.add_matrices();
    m->set_rail(1);
    m->set_size_bytes(size);
    for (const char* n : {"w0", "w1", "w2", "w3"}) m->add_nodes(n);
    for (int src = 3; src >= 0; --src) {   // written backwards:
      for (int dst = 0; dst < 4; ++dst) {  // the store orders them
        if (src == dst) continue;
        store::CellRecord c;
        c.rail = 1;
        c.size_bytes = size;
        c.src = (*ids)[src];
        c.dst = (*ids)[dst];
        c.status = 1 + k % 4;
        c.verdict = k % 4;
        c.bw_avg_gbps = 0.1 * k + 1.0 / 3;
        c.expected_gbps = k == 5 ? 4.9e-324 : 400;  // the smallest subnormal double
        c.baseline_gbps = k == 6 ? -0.0 : 123456.789012345678;
        c.reason = reasons[k % reasons.size()];
        written.push_back(c);
        ++k;
      }
    }
  }
  auto w = store_->BeginRun(BareRow("exact"));
  ASSERT_TRUE(w.ok()) << w.status();
  const int64_t key = (*w)->run_key();
  for (const auto& c : written) ASSERT_TRUE((*w)->AddCell(c).ok());
  store::RunRow row = BareRow("exact");
  row.cells = written.size();
  ASSERT_TRUE((*w)->Commit(row, header).ok());
  for (auto& c : written) c.run = key;
  std::sort(written.begin(), written.end(), [](const auto& a, const auto& b) { return Key(a) < Key(b); });

  store::CellQuery q;
  q.run = key;
  auto all = AllCells(*store_, q);
  ASSERT_EQ(all.size(), written.size());
  for (size_t i = 0; i < all.size(); ++i) ExpectSameCell(all[i], written[i]);
  // Filters and pages: what the one list says, cut the same ways.
  auto expect = [&](const std::function<bool(const store::CellRecord&)>& keep) {
    std::vector<store::CellRecord> out;
    for (const auto& c : written) {
      if (keep(c)) out.push_back(c);
    }
    return out;
  };
  auto same = [&](const std::vector<store::CellRecord>& got, const std::vector<store::CellRecord>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ExpectSameCell(got[i], want[i]);
  };
  store::CellQuery by_src = q;
  by_src.src = (*ids)[2];
  same(AllCells(*store_, by_src), expect([&](const auto& c) { return c.src == (*ids)[2]; }));
  store::CellQuery by_dst = q;
  by_dst.dst = (*ids)[1];
  same(AllCells(*store_, by_dst), expect([&](const auto& c) { return c.dst == (*ids)[1]; }));
  by_dst.rail = 1;
  by_dst.size_bytes = 4096;
  same(AllCells(*store_, by_dst),
       expect([&](const auto& c) { return c.dst == (*ids)[1] && c.size_bytes == 4096; }));
  store::CellQuery low = q;
  low.verdict = 2;
  same(AllCells(*store_, low), expect([](const auto& c) { return c.verdict == 2; }));
  store::CellQuery link = q;
  link.src = (*ids)[3];
  link.dst = (*ids)[0];
  same(AllCells(*store_, link),
       expect([&](const auto& c) { return c.src == (*ids)[3] && c.dst == (*ids)[0]; }));
  // Keyset pages of 5: together, the whole run once.
  std::vector<store::CellRecord> paged;
  store::CellQuery page = q;
  page.limit = 5;
  for (;;) {
    auto got = AllCells(*store_, page);
    ASSERT_LE(got.size(), 5u);
    paged.insert(paged.end(), got.begin(), got.end());
    if (got.size() < 5) break;
    page.after = Key(got.back());
  }
  same(paged, written);
}

// An ingest that stops before Commit (a dropped upload, a crash, a failed
// statement) leaves no row of any kind: not its cells, pairs or run row.
TEST_F(StoreSuite, AnIngestStoppedMidwayLeavesNothing) {
  auto ids = store_->InternNodes({"w0", "w1"});
  ASSERT_TRUE(ids.ok());
  int64_t key = 0;
  {
    auto w = store_->BeginRun(BareRow("half"));
    ASSERT_TRUE(w.ok()) << w.status();
    key = (*w)->run_key();
    for (uint64_t size : {1, 2, 3}) {  // the first two matrices end: their blocks are written
      store::CellRecord c;
      c.size_bytes = size;
      c.src = (*ids)[0];
      c.dst = (*ids)[1];
      c.status = 1;
      ASSERT_TRUE((*w)->AddCell(c).ok());
    }
    ASSERT_TRUE((*w)->AddPairChunk(1, "not really a chunk").ok());
    ASSERT_TRUE((*w)->AddNodeStat({(*ids)[0], 0, 1, 1, 0, 0, 10, 10, 10}).ok());
  }  // dropped here
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  store::CellQuery q;
  q.run = key;
  EXPECT_TRUE(AllCells(*store_, q).empty());
  auto stats = store_->ReadNodeStats(key);
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(stats->empty());
  size_t chunks = 0;
  EXPECT_TRUE(store_
                  ->ReadPairChunks(key,
                                   [&](std::string) {
                                     ++chunks;
                                     return absl::OkStatus();
                                   })
                  .ok());
  EXPECT_EQ(chunks, 0u);
  // An upload dropped after some chunks: nothing either, and the run then stores whole.
  {
    v1::Run run = FakeRun(Spec("half", 0));
    history::Ingester ingest(*store_, options_);
    v1::Run header = run;
    header.clear_pairs();
    for (auto& m : *header.mutable_matrices()) m.clear_cells();
    ASSERT_TRUE(ingest.Begin(header).ok());
    v1::RunChunk chunk;
    *chunk.mutable_cells()->mutable_cells() = run.matrices(0).cells();
    chunk.mutable_cells()->set_rail(run.matrices(0).rail());
    chunk.mutable_cells()->set_size_bytes(run.matrices(0).size_bytes());
    ASSERT_TRUE(ingest.Add(chunk).ok());
  }
  runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
  v1::UploadRunResponse resp = Store(FakeRun(Spec("half", 0)));
  EXPECT_FALSE(resp.already_stored());
  EXPECT_EQ(resp.cells(), 24u);
}

TEST_F(StoreSuite, ACellTwiceOrAMatrixInTwoPartsIsRefused) {
  auto ids = store_->InternNodes({"w0", "w1"});
  ASSERT_TRUE(ids.ok());
  store::CellRecord c;
  c.src = (*ids)[0];
  c.dst = (*ids)[1];
  c.status = 1;
  {
    auto w = store_->BeginRun(BareRow("twice"));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddCell(c).ok());
    ASSERT_TRUE((*w)->AddCell(c).ok());  // found when the matrix ends
    absl::Status st = (*w)->Commit(BareRow("twice"), v1::Run());
    EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr("was written twice"));
  }
  {
    auto w = store_->BeginRun(BareRow("parts"));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->AddCell(c).ok());
    store::CellRecord other = c;
    other.size_bytes = 2;
    ASSERT_TRUE((*w)->AddCell(other).ok());
    store::CellRecord back = c;
    back.dst = (*ids)[0];
    absl::Status st = (*w)->AddCell(back);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr("came after another matrix's"));
  }
  auto runs = store_->ListRuns({});
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());
}

// A store written by a version 5 server (cells as rows) opens, migrates and
// answers as before; runs stored after it are blocks, and a link's trend
// spans both, newest first.
TEST_F(StoreSuite, AStoreOfSchemaVersion5OpensAndItsCellRowsStillRead) {
  // The answers of today's store for a run...
  Store(FakeRun(Spec("r1", 0)));
  auto row = store_->FindRun("r1");
  ASSERT_TRUE(row.ok() && *row);
  const int64_t key = (*row)->key;
  auto header = store_->ReadHeader(key);
  ASSERT_TRUE(header.ok());
  auto stats = store_->ReadNodeStats(key);
  ASSERT_TRUE(stats.ok());
  store::CellQuery q;
  q.run = key;
  const std::vector<store::CellRecord> cells = AllCells(*store_, q);
  ASSERT_EQ(cells.size(), 24u);
  std::vector<std::pair<int64_t, std::string>> nodes;
  for (const char* n : {"node0", "node1", "node2", "node3"}) {
    auto id = store_->NodeId(n);
    ASSERT_TRUE(id.ok());
    nodes.push_back({*id, n});
  }
  const int64_t n1 = nodes[1].first, n2 = nodes[2].first;
  auto trend = store_->LinkTrend("lab", n1, n2, 0, 0, 0, 10);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 1u);

  // ... and the same run as a version 5 server kept it.
  store_.reset();
  auto db = testing::OpenEmptyTestDb(name_);
  ASSERT_TRUE(db.ok()) << db.status();
  auto was = store::MigrateTo(**db, 5);
  ASSERT_TRUE(was.ok()) << was.status();
  EXPECT_EQ(*was, 0);
  auto exec = [&](std::string_view sql, std::vector<store::SqlValue> p) {
    absl::Status st = (*db)->Exec(sql, p);
    ASSERT_TRUE(st.ok()) << st;
  };
  for (const auto& [id, name] : nodes)
    exec("INSERT INTO nodes (id, name) VALUES (?, ?)", {id, std::string_view(name)});
  const std::string blob = header->SerializeAsString();
  const store::RunRow& r = **row;
  exec(
      "INSERT INTO runs (id, run_id, cluster, started_us, finished_us, stored_us, mode, passed, summary, "
      "node_count, rail_count, cell_count, low_cells, failed_cells, pair_count, baseline_regressions, "
      "last_pass_regressions, header, verdict_cells) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?)",
      {key, std::string_view(r.run_id), std::string_view(r.cluster), r.started_us, r.finished_us, r.stored_us,
       std::string_view(r.mode), int64_t{r.passed}, std::string_view(r.summary), int64_t{r.nodes},
       int64_t{r.rails}, static_cast<int64_t>(r.cells), static_cast<int64_t>(r.low_cells),
       static_cast<int64_t>(r.failed_cells), static_cast<int64_t>(r.pairs), int64_t{r.baseline_regressions},
       int64_t{r.last_pass_regressions}, store::Blob{blob}, static_cast<int64_t>(r.verdict_cells)});
  for (const auto& s : *stats) {
    exec(
        "INSERT INTO node_stats (run, node, rail, size_bytes, ok_cells, low_cells, failed_cells, "
        "median_gbps, "
        "tx_median_gbps, rx_median_gbps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {key, s.node, int64_t{s.rail}, static_cast<int64_t>(s.size_bytes), int64_t{s.ok_cells},
         int64_t{s.low_cells}, int64_t{s.failed_cells}, s.median_gbps, s.tx_median_gbps, s.rx_median_gbps});
  }
  for (const auto& c : cells) {
    exec(
        "INSERT INTO cells (run, rail, size_bytes, src, dst, status, bw_avg_gbps, verdict, expected_gbps, "
        "baseline_gbps, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        {key, int64_t{c.rail}, static_cast<int64_t>(c.size_bytes), c.src, c.dst, int64_t{c.status},
         c.bw_avg_gbps, int64_t{c.verdict}, c.expected_gbps, c.baseline_gbps,
         c.reason.empty() ? store::SqlValue(nullptr) : store::SqlValue(std::string_view(c.reason))});
  }
  if ((*db)->dialect() == store::Dialect::kPostgres) {  // ids given by hand: the identities follow them
    exec("SELECT setval(pg_get_serial_sequence('runs', 'id'), (SELECT MAX(id) FROM runs))", {});
    exec("SELECT setval(pg_get_serial_sequence('nodes', 'id'), (SELECT MAX(id) FROM nodes))", {});
  }
  db->reset();

  auto opened = testing::ReopenTestStore(name_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store_ = std::move(*opened);
  const std::vector<store::CellRecord> old = AllCells(*store_, q);
  ASSERT_EQ(old.size(), cells.size());
  for (size_t i = 0; i < old.size(); ++i) {
    EXPECT_EQ(Key(old[i]), Key(cells[i]));
    EXPECT_EQ(old[i].status, cells[i].status);
    EXPECT_EQ(old[i].verdict, cells[i].verdict);
    EXPECT_FLOAT_EQ(old[i].bw_avg_gbps, cells[i].bw_avg_gbps);  // PostgreSQL's rows: 4-byte floats
    EXPECT_EQ(old[i].reason, cells[i].reason);
  }
  store::CellQuery as_dst = q;
  as_dst.dst = n2;
  EXPECT_EQ(AllCells(*store_, as_dst).size(), 6u);  // 3 sources x 2 sizes
  store::CellQuery page = q;
  page.limit = 3;
  page.after = Key(cells[4]);
  auto after = AllCells(*store_, page);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(Key(after[0]), Key(cells[5]));
  auto old_trend = store_->LinkTrend("lab", n1, n2, 0, 0, 0, 10);
  ASSERT_TRUE(old_trend.ok()) << old_trend.status();
  ASSERT_EQ(old_trend->size(), 1u);
  EXPECT_EQ((*old_trend)[0].run_id, "r1");
  EXPECT_FLOAT_EQ((*old_trend)[0].cell.bw_avg_gbps, (*trend)[0].cell.bw_avg_gbps);

  // A run stored now is blocks; the link's trend reads both layouts.
  Store(FakeRun(Spec("r2", 1)));
  Store(FakeRun(Spec("r0", -1)));  // uploaded late: older than the rows' run
  auto both = store_->LinkTrend("lab", n1, n2, 0, 0, 0, 10);
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 3u);
  EXPECT_EQ((*both)[0].run_id, "r2");
  EXPECT_EQ((*both)[1].run_id, "r1");
  EXPECT_EQ((*both)[2].run_id, "r0");
  auto newest = store_->LinkTrend("lab", n1, n2, 0, 1 << 20, 0, 2);
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 2u);
  EXPECT_EQ((*newest)[1].run_id, "r1");
  // Retention deletes the rows as it deletes blocks.
  auto r2 = store_->FindRun("r2");
  ASSERT_TRUE(r2.ok() && *r2);
  auto deleted = store_->DeleteRunsBefore((*r2)->started_us);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 2u);
  EXPECT_TRUE(AllCells(*store_, q).empty());
  auto left = store_->LinkTrend("lab", n1, n2, 0, 0, 0, 10);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].run_id, "r2");
}

TEST_F(StoreSuite, AStoreOfANewerServerIsRefusedWithTheReason) {
  store_.reset();
  auto db = testing::OpenEmptyTestDb(name_);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(store::Migrate(**db).ok());
  const int next = store::LatestSchemaVersion() + 1;
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO schema_migrations (version, name, applied_us) VALUES (?, 'later', 0)",
                         {int64_t{next}})
                  .ok());
  db->reset();
  auto opened = testing::ReopenTestStore(name_);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(opened.status().message()),
      HasSubstr(absl::StrCat("the store is at schema version ", next, ", newer than this gdrbench-server (",
                             next - 1, "): run a newer server")));
}

// Version 8: PostgreSQL keeps the zstd pair chunks out of line without pglz
// (STORAGE EXTERNAL); a store of version 7 migrates, and a run's pairs read
// back as they were sent.
TEST_F(StoreSuite, PairChunksAreKeptWithoutASecondCompressionFromVersion8) {
  store_.reset();
  auto storage = [](store::SqlDb& db) {
    std::string got;
    absl::Status st = db.Query(
        "SELECT attstorage FROM pg_attribute WHERE attrelid = 'run_pairs'::regclass AND attname = 'data'", {},
        [&](const store::SqlRow& r) {
          got = r.Text(0);
          return absl::OkStatus();
        });
    EXPECT_TRUE(st.ok()) << st;
    return got;
  };
  {
    auto db = testing::OpenEmptyTestDb(name_);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(store::MigrateTo(**db, 7).ok());
    const bool pg = (*db)->dialect() == store::Dialect::kPostgres;
    if (pg) EXPECT_EQ(storage(**db), "x");  // extended: pglz tried first
    auto was = store::Migrate(**db);
    ASSERT_TRUE(was.ok()) << was.status();
    EXPECT_EQ(*was, 7);
    if (pg) EXPECT_EQ(storage(**db), "e");  // external: kept as it is
  }
  auto opened = testing::ReopenTestStore(name_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  store_ = std::move(*opened);
  const v1::Run run = FakeRun(Spec("r1", 0));
  Store(run);
  auto row = store_->FindRun("r1");
  ASSERT_TRUE(row.ok() && *row);
  std::vector<std::string> pairs;
  ASSERT_TRUE(history::ExportRun(*store_, **row, [&](const v1::RunChunk& c) {
                for (const auto& p : c.pairs().pairs()) pairs.push_back(p.SerializeAsString());
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(pairs.size(), static_cast<size_t>(run.pairs_size()));
  for (int i = 0; i < run.pairs_size(); ++i)
    EXPECT_EQ(pairs[i], run.pairs(i).SerializeAsString()) << "pair " << i;
}

}  // namespace
}  // namespace gdrbench::server
