// Each link's own noise (server/history/link_noise.h): the robust summary,
// the threshold it gives, the bounded window and its stored form.
#include "server/history/link_noise.h"

#include "gtest/gtest.h"

namespace gdrbench::server::history {
namespace {

TEST(LinkNoise, SummaryOfNothingHasNoHistory) {
  LinkSummary s = Summarize({});
  EXPECT_EQ(s.history, 0u);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.noise, 0);
}

TEST(LinkNoise, OneReadingHasAMedianButNoNoise) {
  LinkSummary s = Summarize({380});
  EXPECT_EQ(s.history, 1u);
  EXPECT_DOUBLE_EQ(s.median, 380);
  EXPECT_EQ(s.noise, 0);
}

TEST(LinkNoise, MedianAndScaledMadRelativeToTheMedian) {
  // Median 100; absolute deviations 0,1,2,3,4 -> MAD 2; noise 1.4826 x 2 / 100.
  LinkSummary s = Summarize({104, 99, 100, 102, 97});
  EXPECT_EQ(s.history, 5u);
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_NEAR(s.noise, 1.4826 * 2 / 100, 1e-9);
}

TEST(LinkNoise, EvenCountTakesTheMiddleTwo) {
  LinkSummary s = Summarize({90, 110, 100, 104});
  EXPECT_DOUBLE_EQ(s.median, 102);
  // Deviations 12, 8, 2, 2 -> MAD (2 + 8) / 2 = 5.
  EXPECT_NEAR(s.noise, 1.4826 * 5 / 102, 1e-6);
}

TEST(LinkNoise, OneWildReadingDoesNotMakeALinkNoisy) {
  LinkSummary s = Summarize({100, 100, 101, 99, 100, 100, 20});
  EXPECT_DOUBLE_EQ(s.median, 100);
  EXPECT_LT(s.noise, 0.02);
}

TEST(LinkNoise, ThresholdIsTheToleranceUntilThereIsEnoughHistory) {
  NoisePolicy p;  // k 3, min_history 5
  EXPECT_DOUBLE_EQ(Threshold({4, 100, 0.10}, 0.05, p), 0.05);
  EXPECT_NEAR(Threshold({5, 100, 0.10}, 0.05, p), 0.30, 1e-12);
  // A quiet link keeps the tolerance: noise never lowers the bar.
  EXPECT_DOUBLE_EQ(Threshold({9, 100, 0.005}, 0.05, p), 0.05);
}

TEST(LinkNoise, PolicyOutOfRangeIsRefusedByName) {
  NoisePolicy p;
  EXPECT_TRUE(ValidateNoisePolicy(p).ok());
  p.window = 0;
  EXPECT_NE(ValidateNoisePolicy(p).message().find("noise window"), std::string::npos);
  p = NoisePolicy{};
  p.window = kMaxNoiseWindow + 1;
  EXPECT_FALSE(ValidateNoisePolicy(p).ok());
  p = NoisePolicy{};
  p.min_history = p.window + 1;
  EXPECT_NE(ValidateNoisePolicy(p).message().find("minimum history"), std::string::npos);
  p = NoisePolicy{};
  p.k = -1;
  EXPECT_NE(ValidateNoisePolicy(p).message().find("noise k"), std::string::npos);
}

TEST(LinkNoiseTable, KeepsTheNewestReadingsOfEachLinkUpToTheWindow) {
  LinkNoiseTable t(3);
  for (float v : {1.f, 2.f, 3.f, 4.f}) t.Add({7, 9}, v);
  t.Add({1, 2}, 50);
  t.Settle();
  EXPECT_EQ(t.links(), 2u);
  EXPECT_EQ(t.Window({7, 9}), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(t.Window({1, 2}), (std::vector<float>{50}));
  EXPECT_TRUE(t.Window({9, 7}).empty());  // a link is directed
  // Readings added later go after the kept ones; the oldest drops out.
  t.Add({7, 9}, 5);
  t.Settle();
  EXPECT_EQ(t.Window({7, 9}), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(t.Find({7, 9}).history, 3u);
  EXPECT_DOUBLE_EQ(t.Find({7, 9}).median, 4);
  EXPECT_EQ(t.Find({2, 1}).history, 0u);
}

TEST(LinkNoiseTable, SummariesChangeOnlyAtSettle) {
  LinkNoiseTable t(4);
  t.Add({1, 2}, 10);
  EXPECT_EQ(t.Find({1, 2}).history, 0u);  // pending: this run's readings do not judge this run
  t.Settle();
  EXPECT_EQ(t.Find({1, 2}).history, 1u);
}

TEST(LinkNoiseTable, EncodesAndDecodesEveryLink) {
  LinkNoiseTable t(4);
  for (int64_t s = 0; s < 5; ++s) {
    for (int64_t d = 0; d < 5; ++d) {
      for (int i = 0; i <= s; ++i) t.Add({s, d}, static_cast<float>(100 + s * 10 + d + i));
    }
  }
  t.Settle();
  auto back = LinkNoiseTable::Decode(t.Encode(), 4);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->links(), 25u);
  for (int64_t s = 0; s < 5; ++s) {
    for (int64_t d = 0; d < 5; ++d) {
      EXPECT_EQ(back->Window({s, d}), t.Window({s, d}));
      EXPECT_DOUBLE_EQ(back->Find({s, d}).median, t.Find({s, d}).median);
    }
  }
}

TEST(LinkNoiseTable, ASmallerWindowKeepsTheNewestReadings) {
  LinkNoiseTable t(5);
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f}) t.Add({1, 2}, v);
  t.Settle();
  auto back = LinkNoiseTable::Decode(t.Encode(), 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Window({1, 2}), (std::vector<float>{4, 5}));
  back->Add({1, 2}, 6);
  back->Settle();
  EXPECT_EQ(back->Window({1, 2}), (std::vector<float>{5, 6}));
}

TEST(LinkNoiseTable, DamagedBytesAreDataLoss) {
  LinkNoiseTable t(3);
  t.Add({1, 2}, 10);
  t.Add({3, 4}, 20);
  t.Settle();
  const std::string good = t.Encode();
  EXPECT_EQ(LinkNoiseTable::Decode("", 3).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(LinkNoiseTable::Decode("XXXX" + good.substr(4), 3).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(LinkNoiseTable::Decode(good.substr(0, good.size() - 1), 3).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(LinkNoiseTable::Decode(good + "x", 3).status().code(), absl::StatusCode::kDataLoss);
  auto empty = LinkNoiseTable::Decode(LinkNoiseTable(3).Encode(), 3);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->links(), 0u);
}

// The ingest stores a matrix's table without settling it: the bytes must be
// those of Settle then Encode, old links, new links and readings out of
// order included.
TEST(LinkNoiseTable, EncodeWithPendingIsSettleThenEncode) {
  LinkNoiseTable kept(3);
  for (int64_t s = 0; s < 4; s += 2) {
    for (float v : {10.f, 11.f, 12.f}) kept.Add({s, s + 1}, v + s);
  }
  kept.Settle();
  const std::string before = kept.Encode();
  auto fill = [](LinkNoiseTable& t) {
    t.Add({2, 3}, 40);  // an old link, its oldest reading drops out
    t.Add({9, 1}, 7);   // new links, added out of order
    t.Add({1, 5}, 8);
    t.Add({9, 1}, 6);  // the same link again: newer
  };
  auto a = LinkNoiseTable::Decode(before, 3);
  auto b = LinkNoiseTable::Decode(before, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  fill(*a);
  fill(*b);
  a->Settle();
  const std::string settled = a->Encode();
  EXPECT_EQ(b->EncodeWithPending(), settled);
  auto back = LinkNoiseTable::Decode(settled, 3);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->Window({9, 1}), (std::vector<float>{7, 6}));
  EXPECT_EQ(back->Window({2, 3}), (std::vector<float>{13, 14, 40}));
  EXPECT_EQ(LinkNoiseTable(3).EncodeWithPending(), LinkNoiseTable(3).Encode());  // nothing pending
}

}  // namespace
}  // namespace gdrbench::server::history
